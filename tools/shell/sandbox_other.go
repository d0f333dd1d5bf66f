//go:build unix && !linux

package shell

import (
	"errors"
	"syscall"
)

// procAttr starts the shell in a session of its own. The sandbox's
// namespaces are Linux's: asked for here, the command is refused rather
// than run without them.
func procAttr(sandbox bool) (*syscall.SysProcAttr, error) {
	if sandbox {
		return nil, errors.New("[tool.shell_exec] sandbox = true needs Linux namespaces, which this system does not have, so the command was not run; turn the setting off to run commands here")
	}
	return &syscall.SysProcAttr{Setsid: true}, nil
}

func startFailure(err error, _ bool) error { return err }
