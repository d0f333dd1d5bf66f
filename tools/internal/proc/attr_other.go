//go:build unix && !linux

package proc

import "syscall"

// sysProcAttr: a session of its own.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// killGroup kills the process group the program leads.
func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }
