//go:build unix

package mcp

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// sysProcAttr puts a server in a process group of its own, so one signal
// reaches it and everything it started.
func sysProcAttr() *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(attr)
	return attr
}

// signalGroup signals the process group led by p. Errors mean the group is
// already gone.
func signalGroup(p *os.Process, sig syscall.Signal) {
	if p == nil {
		return
	}
	_ = syscall.Kill(-p.Pid, sig)
}

// continueGroup resumes a stopped group so that it can handle SIGTERM.
func continueGroup(p *os.Process) { signalGroup(p, syscall.SIGCONT) }

// signalName is the conventional name of sig (SIGKILL), or its number.
func signalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	return fmt.Sprintf("signal %d", int(sig))
}
