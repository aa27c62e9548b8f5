package testcluster

import "syscall"

// sysProcAttr puts each process in its own group; unless detached, the
// kernel kills it when the process that started it dies, so an aborted test
// run leaves nothing behind.
func sysProcAttr(detach bool) *syscall.SysProcAttr {
	if detach {
		return &syscall.SysProcAttr{Setsid: true}
	}
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
