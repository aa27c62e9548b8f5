// Command testcluster builds, starts and stops the local test cluster.
//
//	go run ./internal/testcluster/cmd/testcluster build
//	go run ./internal/testcluster/cmd/testcluster up   [-dir .testcluster]
//	go run ./internal/testcluster/cmd/testcluster down [-dir .testcluster]
//	go run ./internal/testcluster/cmd/testcluster build-flux
//
// "build-flux" builds (cached) the Flux controllers the tests of the Flux
// engine run: the newest source-controller, and every helm-controller of
// the Go module proxy (testcluster.FluxModules) and of the archives in the
// directory $HELMRELEASE_TEST_FLUX_SOURCES names, when set.
//
// "up" prints the path of the cluster's kubeconfig on its last line.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testcluster"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "testcluster:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) < 2 {
		return fmt.Errorf("usage: testcluster build|up|down|build-flux [-dir DIR]")
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ContinueOnError)
	dir := fs.String("dir", ".testcluster", "directory for the cluster's data, logs and kubeconfig")
	if err := fs.Parse(os.Args[2:]); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	switch os.Args[1] {
	case "build":
		start := time.Now()
		bin, err := testcluster.Build(ctx, testcluster.BuildOptions{Log: os.Stderr})
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "testcluster: binaries in %s (%s)\n", bin, time.Since(start).Round(time.Second))
		return nil
	case "up":
		abs, err := filepath.Abs(*dir)
		if err != nil {
			return fmt.Errorf("resolving %s: %w", *dir, err)
		}
		if c := testcluster.Running(abs); c != nil {
			fmt.Fprintf(os.Stderr, "testcluster: already running in %s\n", abs)
			fmt.Println(c.Kubeconfig)
			return nil
		}
		// Whatever a dead cluster left behind goes.
		if err := testcluster.Stop(abs); err != nil {
			return err
		}
		start := time.Now()
		bin, err := testcluster.Build(ctx, testcluster.BuildOptions{Log: os.Stderr})
		if err != nil {
			return err
		}
		built := time.Now()
		c, err := testcluster.Start(ctx, testcluster.Options{BinDir: bin, Dir: abs, Detach: true, Log: os.Stderr})
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "testcluster: build %s, start %s\n", built.Sub(start).Round(time.Millisecond), time.Since(built).Round(time.Millisecond))
		fmt.Println(c.Kubeconfig)
		return nil
	case "down":
		abs, err := filepath.Abs(*dir)
		if err != nil {
			return fmt.Errorf("resolving %s: %w", *dir, err)
		}
		return testcluster.Stop(abs)
	case "build-flux":
		return testcluster.BuildFluxForTests(ctx, os.Stderr)
	default:
		return fmt.Errorf("unknown command %q: use build, up, down or build-flux", os.Args[1])
	}
}
