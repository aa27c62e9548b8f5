//go:build unix && !linux

package testcluster

import "syscall"

// sysProcAttr puts each process in its own group. Without Linux's
// parent-death signal, an aborted test run may leave processes behind;
// "testcluster down" stops them.
func sysProcAttr(bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
