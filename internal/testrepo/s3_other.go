//go:build !linux

package testrepo

import "os/exec"

// stopWithParent: elsewhere the child is stopped by the test's cleanup.
func stopWithParent(*exec.Cmd) {}
