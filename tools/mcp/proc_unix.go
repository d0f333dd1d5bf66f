//go:build unix

package mcp

import (
	"os"
	"syscall"
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
