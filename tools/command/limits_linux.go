package command

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// limitsSupported: cpu_seconds, memory_mb and max_file_size_mb can be
// applied here.
const limitsSupported = true

// sysProcAttr starts the program in a session of its own: a process group
// to kill as one, and no controlling terminal, so it cannot read what the
// person types into jarvis. It dies with jarvis.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}

// applyLimits sets the entry's resource limits on the started program
// (its children inherit them), and no core files. CPU time gets two
// seconds of grace between SIGXCPU and SIGKILL, as the code tools do.
func (c *Command) applyLimits(pid int) error {
	set := func(what string, resource int, soft, hard uint64) error {
		// A limit can only be lowered: one already below what the entry
		// asks for stays.
		var old unix.Rlimit
		if err := unix.Prlimit(pid, resource, nil, &old); err == nil {
			hard = min(hard, old.Max)
			soft = min(soft, hard)
		}
		if err := unix.Prlimit(pid, resource, &unix.Rlimit{Cur: soft, Max: hard}, nil); err != nil {
			return fmt.Errorf("setting the %s limit: %w", what, err)
		}
		return nil
	}
	if err := set("core file", unix.RLIMIT_CORE, 0, 0); err != nil {
		return err
	}
	s := c.spec
	if s.CPUSeconds > 0 {
		if err := set("CPU time", unix.RLIMIT_CPU, uint64(s.CPUSeconds), uint64(s.CPUSeconds)+2); err != nil {
			return err
		}
	}
	if s.MemoryMB > 0 {
		n := uint64(s.MemoryMB) << 20
		if err := set("memory", unix.RLIMIT_AS, n, n); err != nil {
			return err
		}
	}
	if s.MaxFileSizeMB > 0 {
		n := uint64(s.MaxFileSizeMB) << 20
		if err := set("file size", unix.RLIMIT_FSIZE, n, n); err != nil {
			return err
		}
	}
	return nil
}
