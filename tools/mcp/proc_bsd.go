//go:build unix && !linux

package mcp

import "syscall"

// setDeathSignal does nothing where the kernel offers no parent-death
// signal; Close still stops every server.
func setDeathSignal(*syscall.SysProcAttr) {}
