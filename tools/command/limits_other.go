//go:build unix && !linux

package command

import "syscall"

// limitsSupported: resource limits are set with prlimit(2), which only
// Linux has; an entry that asks for them is refused elsewhere.
const limitsSupported = false

// sysProcAttr starts the program in a session of its own: a process group
// to kill as one, and no controlling terminal.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

func (c *Command) applyLimits(int) error { return nil }
