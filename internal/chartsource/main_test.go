package chartsource

import (
	"fmt"
	"os"
	"testing"
)

// TestMain keeps the integrity key of the caches the tests make
// (DefaultIntegrityKeyFile) under a configuration directory of the run's
// own, not the user's; the child processes of the benchmarks share it.
func TestMain(m *testing.M) {
	if os.Getenv(benchCacheDirEnv) != "" {
		// A benchmark's child process: its parent's directory.
		os.Exit(m.Run())
	}
	config, err := os.MkdirTemp("", "helmrelease-chartsource-config-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.Setenv("XDG_CONFIG_HOME", config); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(config)
	os.Exit(code)
}
