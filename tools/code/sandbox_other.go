//go:build unix && !linux

package code

import (
	"errors"
	"syscall"
)

// Namespaces and cgroups are Linux's; elsewhere the sandbox is not
// available, so code is refused unless allow_unconfined is set, and then
// runs with the resource limits and the process group only.

const noNamespaces = "the sandbox's namespaces are Linux-only"

func namespacesUsable() (bool, string)    { return false, noNamespaces }
func markNamespacesUsable()               {}
func markNamespacesUnusable(error) string { return noNamespaces }
func namespaceRefused(error) bool         { return false }

// sysProcAttr: a session of its own, so no controlling terminal, and a
// process group to kill; as root, nobody's uid and gid.
func sysProcAttr(_, asNobody bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setsid: true}
	if asNobody {
		a.Credential = &syscall.Credential{Uid: nobodyID, Gid: nobodyID, Groups: []uint32{}}
	}
	return a
}

type cgroup struct{}

func newCgroup(int) (*cgroup, error) { return nil, errors.New("cgroups are Linux-only") }
func (*cgroup) add(int) error        { return errors.New("cgroups are Linux-only") }
func (*cgroup) killAll()             {}
func (*cgroup) killAllBut(int)       {}
func (*cgroup) remove()              {}
func (*cgroup) path() string         { return "" }
