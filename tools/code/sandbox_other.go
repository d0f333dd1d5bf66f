//go:build unix && !linux

package code

import (
	"errors"
	"syscall"
)

// Namespaces and cgroups are Linux's; elsewhere the code runs with the
// resource limits and the process group only, and results say so.

const noNamespaces = "namespaces are Linux-only, so the code runs without network or file system isolation"

func namespacesUsable() (bool, string)    { return false, noNamespaces }
func markNamespacesUsable()               {}
func markNamespacesUnusable(error) string { return noNamespaces }
func namespaceRefused(error) bool         { return false }

// sysProcAttr: a session of its own, so no controlling terminal, and a
// process group to kill.
func sysProcAttr(bool) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

type cgroup struct{}

func newCgroup(int) (*cgroup, error) { return nil, errors.New("cgroups are Linux-only") }
func (*cgroup) add(int) error        { return errors.New("cgroups are Linux-only") }
func (*cgroup) killAll()             {}
func (*cgroup) remove()              {}
func (*cgroup) path() string         { return "" }
