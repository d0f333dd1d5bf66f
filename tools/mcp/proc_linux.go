package mcp

import "syscall"

// setDeathSignal has the kernel kill a server if jarvis itself dies without
// the chance to stop it (SIGKILL, a crash).
func setDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
