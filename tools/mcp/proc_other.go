//go:build !unix

package mcp

import (
	"os"
	"syscall"
)

// sysProcAttr has no process groups to set up here.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// signalGroup can only kill the server process itself on systems without
// process groups; any signal means kill.
func signalGroup(p *os.Process, _ syscall.Signal) {
	if p != nil {
		_ = p.Kill()
	}
}

// continueGroup has nothing to resume here.
func continueGroup(*os.Process) {}

// signalName describes sig; these systems have no names like SIGKILL.
func signalName(sig syscall.Signal) string { return sig.String() }
