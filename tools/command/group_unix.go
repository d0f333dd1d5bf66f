//go:build unix

package command

import "syscall"

// killGroup kills the process group the program leads.
func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }
