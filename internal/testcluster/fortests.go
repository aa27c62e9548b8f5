package testcluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// TestKubeconfigEnv names the kubeconfig of an existing cluster for tests
// (the local test cluster, kind, …). KUBECONFIG is deliberately not used,
// so that tests never touch the cluster a developer's shell points at.
const TestKubeconfigEnv = "HELMRELEASE_TEST_KUBECONFIG"

// ForTests returns the kubeconfig of the cluster tests run against: the one
// TestKubeconfigEnv names, or a local test cluster started now. stop ends
// what ForTests started (nothing for an existing cluster).
func ForTests(log io.Writer) (kubeconfig string, stop func(), err error) {
	if kc := os.Getenv(TestKubeconfigEnv); kc != "" {
		return kc, func() {}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	bin, err := Build(ctx, BuildOptions{Log: log})
	if err != nil {
		return "", nil, fmt.Errorf("building the test cluster: %w", err)
	}
	dir, err := os.MkdirTemp("", "helmrelease-testcluster-")
	if err != nil {
		return "", nil, fmt.Errorf("creating the test cluster directory: %w", err)
	}
	c, err := Start(ctx, Options{BinDir: bin, Dir: dir, Log: log})
	if err != nil {
		return "", nil, fmt.Errorf("starting the test cluster: %w", err)
	}
	return c.Kubeconfig, func() {
		if err := c.Stop(); err != nil {
			fmt.Fprintln(log, "stopping the test cluster:", err)
		}
	}, nil
}
