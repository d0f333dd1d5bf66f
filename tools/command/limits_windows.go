package command

import (
	"os"
	"syscall"
)

// limitsSupported: resource limits are set with prlimit(2), which only
// Linux has; an entry that asks for them is refused elsewhere.
const limitsSupported = false

// sysProcAttr starts the program in a process group of its own (Windows
// has no sessions to start it in).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

func (c *Command) applyLimits(int) error { return nil }

// killGroup kills the program; Windows does not kill what it started with
// it, so a program that leaves children running leaves them.
func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
