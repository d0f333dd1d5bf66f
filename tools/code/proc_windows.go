package code

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// Processes on Windows: a new process group, killed through the process
// itself (its children are not followed), no CPU-limit signal, no uid to
// drop to. The sandbox is Linux's; code is refused unless
// allow_unconfined is set (see isolation.go).

func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

func isCPULimit(syscall.Signal) bool { return false }

// cpuLimitExit is an exit status no process reports here.
const cpuLimitExit = -1

func runAsNobody(*exec.Cmd) {}

const noNamespaces = "the sandbox needs Linux (namespaces and seccomp); Windows has none of them"

func namespacesUsable() (bool, string)    { return false, noNamespaces }
func markNamespacesUsable()               {}
func markNamespacesUnusable(error) string { return noNamespaces }
func namespaceRefused(error) bool         { return false }

// sysProcAttr: a process group of its own (there is no session or uid
// to change).
func sysProcAttr(_, _ bool) *syscall.SysProcAttr { return groupAttr() }

type cgroup struct{}

func newCgroup(int) (*cgroup, error) { return nil, errors.New("cgroups are Linux-only") }
func (*cgroup) add(int) error        { return errors.New("cgroups are Linux-only") }
func (*cgroup) killAll()             {}
func (*cgroup) killAllBut(int)       {}
func (*cgroup) remove()              {}
func (*cgroup) path() string         { return "" }
