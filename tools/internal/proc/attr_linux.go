package proc

import "syscall"

// sysProcAttr: a session of its own, killed if jarvis dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills the process group the program leads.
func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }
