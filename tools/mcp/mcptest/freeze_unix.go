//go:build unix

package mcptest

import (
	"os"
	"syscall"
)

// freeze stops the process until someone sends SIGCONT (or kills it).
func freeze() error { return syscall.Kill(os.Getpid(), syscall.SIGSTOP) }

// killSelf ends the process with SIGKILL, as the out-of-memory killer does.
func killSelf() error { return syscall.Kill(os.Getpid(), syscall.SIGKILL) }
