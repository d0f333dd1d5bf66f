package command

import "syscall"

// limitsSupported: resource limits are set with prlimit(2), which only
// Linux has; an entry that asks for them is refused elsewhere.
const limitsSupported = false

// sysProcAttr starts the program in a process group of its own (Windows
// has no sessions to start it in).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

func (c *Command) applyLimits(int) error { return nil }
