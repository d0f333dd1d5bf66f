package proc

import (
	"os"
	"syscall"
)

// sysProcAttr: a process group of its own (Windows has no sessions to
// start it in).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// killGroup kills the program; Windows does not kill what it started with
// it, so a program that leaves children running leaves them.
func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
