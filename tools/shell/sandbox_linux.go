package shell

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// sandboxFlags are the namespaces of a sandboxed command: its own user
// namespace (root inside is the person outside, with no power over
// anything else), a network namespace with only a loopback that is down,
// a pid namespace whose init is the shell (when it dies the kernel kills
// every process it started, even one that left the process group), and
// IPC and UTS namespaces. They are the code tools' namespaces, without
// the read-only file system: a command is run to change the project.
const sandboxFlags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS

// procAttr starts the shell in a session of its own (a process group to
// kill as one, no controlling terminal), killed if jarvis dies; in the
// namespaces when sandbox.
func procAttr(sandbox bool) (*syscall.SysProcAttr, error) {
	a := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if sandbox {
		a.Cloneflags = sandboxFlags
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	}
	return a, nil
}

// startFailure explains a shell that did not start: in the sandbox, most
// often the kernel refusing the namespaces.
func startFailure(err error, sandbox bool) error {
	var errno syscall.Errno
	if sandbox && errors.As(err, &errno) {
		switch errno {
		case syscall.EPERM, syscall.EINVAL, syscall.ENOSPC, syscall.EUSERS, syscall.EACCES, syscall.ENOSYS:
			return fmt.Errorf("the sandbox could not be set up: the kernel refused user and network namespaces (%v), so the command was not run. "+
				"The user can allow them (sysctl user.max_user_namespaces above 0; on Ubuntu kernel.apparmor_restrict_unprivileged_userns=0) "+
				"or turn [tool.shell_exec] sandbox off", errno)
		}
	}
	return err
}
