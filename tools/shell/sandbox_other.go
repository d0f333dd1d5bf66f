//go:build !linux

package shell

import (
	"errors"
	"runtime"
	"syscall"
)

// procAttr leaves the session of its own to tools/internal/proc (nil).
// The sandbox's namespaces are Linux's: asked for here, the command is
// refused rather than run without them.
func procAttr(sandbox bool) (*syscall.SysProcAttr, error) {
	if sandbox {
		return nil, errors.New("[tool.shell_exec] sandbox = true needs Linux namespaces, which this system does not have, so the command was not run; turn the setting off to run commands here")
	}
	if runtime.GOOS == "windows" {
		return nil, errors.New("shell_exec runs commands with a POSIX sh, which Windows does not have; run jarvis under WSL to use it")
	}
	return nil, nil
}

func startFailure(err error, _ bool) error { return err }
