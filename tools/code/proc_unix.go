//go:build unix

package code

import (
	"os/exec"
	"syscall"
)

// Processes on Unix: a process group to kill whole, and SIGXCPU, the
// signal RLIMIT_CPU sends first.

// groupAttr puts a command in a process group of its own.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills the process group pgid leads.
func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

// isCPULimit reports whether sig is the signal of a CPU time limit.
func isCPULimit(sig syscall.Signal) bool { return sig == syscall.SIGXCPU }

// cpuLimitExit is the exit status a shell reports for a process killed by
// SIGXCPU (docker's client reports the container's so).
const cpuLimitExit = 128 + int(syscall.SIGXCPU)

// runAsNobody makes cmd run with nobody's uid and gid (jarvis runs as
// root).
func runAsNobody(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: nobodyID, Gid: nobodyID, Groups: []uint32{}}
}
