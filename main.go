// Command terraform-provider-helmrelease is the Terraform provider that runs
// Helm releases with the semantics of Flux's HelmRelease.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	debugpkg "runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/provider"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// memoryLimit is the heap size the garbage collector works to stay under
// unless GOMEMLIMIT says otherwise: a plan of many releases renders them in
// parallel, and without a limit the heap grows to twice what is live.
const memoryLimit = 96 << 20

// profileDirEnv names a directory where each provider process writes its
// CPU profile (cpu-<pid>.pprof) and, when it exits, its allocation profile
// (heap-<pid>.pprof) and its garbage collector's figures (gc-<pid>.txt):
// what planbench -profile reads.
const profileDirEnv = "HELMRELEASE_PROFILE_DIR"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()
	if os.Getenv("GOMEMLIMIT") == "" {
		debugpkg.SetMemoryLimit(memoryLimit)
	}
	if !debug {
		quietUnreadLogs()
	}
	stop := func() {}
	if dir := os.Getenv(profileDirEnv); dir != "" {
		var err error
		if stop, err = startProfiles(dir); err != nil {
			log.Fatal(err.Error())
		}
	}

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address:         "registry.terraform.io/helmrelease/helmrelease",
		Debug:           debug,
		ProtocolVersion: 6,
	})
	stop()
	if err != nil {
		log.Fatal(err.Error())
	}
}

// quietUnreadLogs turns the SDK's and the provider's loggers off when
// Terraform will drop their lines: it reads a provider's log only with
// TF_LOG or TF_LOG_PROVIDER set, and its environment is the provider's.
// Otherwise the SDK logs every request at trace level, JSON-encoded for
// Terraform to decode and discard: a tenth of a no-change plan's CPU.
// TF_LOG_SDK* and TF_LOG_PROVIDER_HELMRELEASE set by hand still win.
func quietUnreadLogs() {
	for _, v := range []string{"TF_LOG", "TF_LOG_PROVIDER"} {
		if os.Getenv(v) != "" {
			return
		}
	}
	for _, v := range []string{"TF_LOG_SDK", "TF_LOG_PROVIDER_HELMRELEASE"} {
		if _, set := os.LookupEnv(v); !set {
			_ = os.Setenv(v, "off")
		}
	}
}

// startProfiles starts the CPU profile in dir; stop ends it and writes
// the heap profile.
func startProfiles(dir string) (stop func(), err error) {
	pid := os.Getpid()
	cpu, err := os.Create(filepath.Join(dir, fmt.Sprintf("cpu-%d.pprof", pid)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", profileDirEnv, err)
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		return nil, fmt.Errorf("%s: starting the CPU profile: %w", profileDirEnv, err)
	}
	var peakLive, peakGoroutines atomic.Uint64
	done := make(chan struct{})
	go func() {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/sched/goroutines:goroutines"}}
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			for i, peak := range []*atomic.Uint64{&peakLive, &peakGoroutines} {
				if v := sample[i].Value; v.Kind() == metrics.KindUint64 && v.Uint64() > peak.Load() {
					peak.Store(v.Uint64())
				}
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(done)
		pprof.StopCPUProfile()
		_ = cpu.Close()
		if heap, err := os.Create(filepath.Join(dir, fmt.Sprintf("heap-%d.pprof", pid))); err == nil {
			_ = pprof.Lookup("allocs").WriteTo(heap, 0)
			_ = heap.Close()
		}
		gc := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/cpu/classes/total:cpu-seconds"}, {Name: "/gc/heap/allocs:bytes"}}
		metrics.Read(gc)
		_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("gc-%d.txt", pid)), fmt.Appendf(nil,
			"peak live heap %d MiB\npeak goroutines %d\ngc cycles %d\ngc CPU %.2f s of %.2f s\nallocated %d MiB\n",
			peakLive.Load()>>20, peakGoroutines.Load(), gc[0].Value.Uint64(), gc[1].Value.Float64(), gc[2].Value.Float64(), gc[3].Value.Uint64()>>20), 0o600)
	}, nil
}
