package code

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
)

// The namespaces every run asks for: its own user namespace (root inside is
// the invoking user outside, with no privilege over anything else), and in
// it a network namespace with only a loopback that is down, a pid namespace
// (the driver is its init: when it dies, the kernel kills every process the
// code started, even one that left the process group), a mount namespace
// (for the read-only view the driver sets up), and IPC and UTS namespaces.
// A variable only so that a test can make the kernel refuse them.
var sandboxCloneFlags uintptr = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET | syscall.CLONE_NEWPID |
	syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS

// nsState remembers whether the kernel lets this process create the
// namespaces: decided by the first run and kept for the life of the process
// (the answer depends on kernel settings that do not change under it).
var nsState struct {
	sync.Mutex
	known, usable bool
	reason        string
}

// namespacesUsable reports whether to ask for namespaces, and, when not,
// why. Before the first run it answers yes: trying is how it finds out.
func namespacesUsable() (bool, string) {
	nsState.Lock()
	defer nsState.Unlock()
	if !nsState.known {
		return true, ""
	}
	return nsState.usable, nsState.reason
}

func markNamespacesUsable() {
	nsState.Lock()
	nsState.known, nsState.usable, nsState.reason = true, true, ""
	nsState.Unlock()
}

func markNamespacesUnusable(err error) string {
	reason := fmt.Sprintf("the kernel refused user and network namespaces (%v); to allow them, set the sysctl "+
		"user.max_user_namespaces above 0 (and, on Ubuntu, kernel.apparmor_restrict_unprivileged_userns to 0)", unwrapErrno(err))
	nsState.Lock()
	nsState.known, nsState.usable, nsState.reason = true, false, reason
	nsState.Unlock()
	return reason
}

// namespaceRefused reports whether a start failed because of the
// namespaces: clone(2) answers EPERM (disabled for unprivileged users, or a
// seccomp policy), EINVAL (not built in), ENOSPC or EUSERS (limit reached),
// EACCES (an LSM policy). Anything else is the program's problem.
func namespaceRefused(err error) bool {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return false
	}
	switch errno {
	case syscall.EPERM, syscall.EINVAL, syscall.ENOSPC, syscall.EUSERS, syscall.EACCES, syscall.ENOSYS:
		return true
	}
	return false
}

func unwrapErrno(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}

// sysProcAttr starts the driver in a session of its own, which also makes
// it a process group leader (so the group can be killed) and, above all,
// leaves it without a controlling terminal: the code cannot open /dev/tty
// to read what the user types into jarvis or write over its screen. The
// driver is killed when jarvis dies, and gets the namespaces when ns.
//
// asNobody (jarvis runs as root) makes it run as nobodyID, with no
// supplementary groups: with namespaces, uid 0 inside is nobody outside
// and the child becomes that uid before exec (the kernel checks files
// against the real, host, ids: an unmapped root would still own root's
// files); without, it simply is nobody.
func sysProcAttr(ns, asNobody bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	uid, gid := os.Getuid(), os.Getgid()
	if asNobody {
		uid, gid = nobodyID, nobodyID
	}
	switch {
	case ns:
		a.Cloneflags = sandboxCloneFlags
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}}
		a.GidMappingsEnableSetgroups = false
		if asNobody {
			// Only a privileged parent may leave setgroups allowed, which
			// dropping root's supplementary groups needs.
			a.GidMappingsEnableSetgroups = true
			a.Credential = &syscall.Credential{Uid: 0, Gid: 0, Groups: []uint32{}}
		}
	case asNobody:
		a.Credential = &syscall.Credential{Uid: nobodyID, Gid: nobodyID, Groups: []uint32{}}
	}
	return a
}
