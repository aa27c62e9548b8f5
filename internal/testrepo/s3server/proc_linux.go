package s3server

import (
	"os/exec"
	"syscall"
)

// stopWithParent has the child stopped when the test process dies.
func stopWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
