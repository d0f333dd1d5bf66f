package code

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// cgroup is a pids cgroup holding one run's processes. jarvis uses one only
// as root, where the kernel ignores RLIMIT_NPROC. It also finds every
// process of the run, wherever it went, when the run is killed.
type cgroup struct {
	dir string
	v2  bool
}

// cgroupPrefix names jarvis's cgroups, so stale ones (left by a jarvis that
// was killed) can be found and removed.
const cgroupPrefix = "jarvis-code-"

var sweepOnce sync.Once

// newCgroup creates a pids cgroup limited to maxPids tasks, under jarvis's
// own cgroup in the pids hierarchy (v1) or the unified one (v2).
func newCgroup(maxPids int) (*cgroup, error) {
	parent, v2, err := pidsParent("/proc/self/mountinfo", "/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	sweepOnce.Do(func() { sweepStale(parent) })
	var b [6]byte
	_, _ = rand.Read(b[:])
	dir := filepath.Join(parent, cgroupPrefix+strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(b[:]))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("no pids cgroup could be created (%v)", err)
	}
	cg := &cgroup{dir: dir, v2: v2}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(maxPids)), 0); err != nil {
		cg.remove()
		return nil, fmt.Errorf("the pids cgroup could not be limited (%v)", err)
	}
	return cg, nil
}

// path is the cgroup's directory ("" for none).
func (c *cgroup) path() string {
	if c == nil {
		return ""
	}
	return c.dir
}

// add moves pid (and so everything it will start) into the cgroup.
func (c *cgroup) add(pid int) error {
	return os.WriteFile(filepath.Join(c.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
}

// killAll kills every process in the cgroup until it is empty (a process
// can fork between the read and the kill, hence the loop).
func (c *cgroup) killAll() {
	if c.v2 {
		_ = os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0)
	}
	c.killAllBut(0)
}

// killAllBut kills every process in the cgroup except keep (0 for none),
// until none but keep is left.
func (c *cgroup) killAllBut(keep int) {
	for i := 0; i < 50; i++ {
		left := false
		for _, pid := range c.pids() {
			if pid != keep {
				left = true
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if !left {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (c *cgroup) pids() []int {
	data, err := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// remove deletes the cgroup once its last process is gone; killed
// processes may take a moment to be reaped.
func (c *cgroup) remove() {
	for i := 0; i < 100; i++ {
		err := syscall.Rmdir(c.dir)
		if err == nil || errors.Is(err, syscall.ENOENT) {
			return
		}
		if i%10 == 0 {
			c.killAll()
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sweepStale removes empty cgroups a jarvis that is gone left behind.
// rmdir fails on a cgroup that still has processes, but another jarvis
// creates its cgroup empty and moves its code in a moment later, so only
// the cgroups of dead processes (the pid is in the name) are removed.
func sweepStale(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), cgroupPrefix) && cgroupOwnerGone(e.Name()) {
			_ = syscall.Rmdir(filepath.Join(parent, e.Name()))
		}
	}
}

// cgroupOwnerGone reports whether the process that made the cgroup named
// name ("jarvis-code-PID-RANDOM") has ended.
func cgroupOwnerGone(name string) bool {
	pidText, _, ok := strings.Cut(strings.TrimPrefix(name, cgroupPrefix), "-")
	pid, err := strconv.Atoi(pidText)
	if !ok || err != nil || pid <= 0 {
		return false // not a name this version makes: leave it
	}
	err = syscall.Kill(pid, 0)
	return errors.Is(err, syscall.ESRCH)
}

// pidsParent finds the directory in which to create the cgroup: jarvis's
// own cgroup in the hierarchy that has the pids controller. With cgroup v1
// that is the "pids" hierarchy; with v2, the unified one, provided pids is
// (or can be) enabled for its children.
func pidsParent(mountinfo, selfCgroup string) (dir string, v2 bool, err error) {
	mounts, err := readPidsMounts(mountinfo)
	if err != nil {
		return "", false, err
	}
	paths, err := readSelfCgroups(selfCgroup)
	if err != nil {
		return "", false, err
	}
	if m, ok := mounts["v1"]; ok {
		if own, ok := paths["pids"]; ok {
			return filepath.Join(m.point, relTo(own, m.root)), false, nil
		}
	}
	if m, ok := mounts["v2"]; ok {
		if own, ok := paths[""]; ok {
			dir := filepath.Join(m.point, relTo(own, m.root))
			if err := enablePids(dir); err != nil {
				return "", false, err
			}
			return dir, true, nil
		}
	}
	return "", false, errors.New("no cgroup hierarchy with the pids controller is mounted")
}

// enablePids makes the pids controller available to dir's children.
func enablePids(dir string) error {
	ctl, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil || !hasField(string(ctl), "pids") {
		return errors.New("the pids controller is not available in jarvis's cgroup")
	}
	sub, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if hasField(string(sub), "pids") {
		return nil
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+pids"), 0); err != nil {
		return fmt.Errorf("the pids controller cannot be enabled in jarvis's cgroup (%v)", err)
	}
	return nil
}

type cgroupMount struct{ root, point string }

// readPidsMounts parses mountinfo(5) for the v1 hierarchy carrying pids
// ("v1") and the unified hierarchy ("v2").
func readPidsMounts(path string) (map[string]cgroupMount, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]cgroupMount{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if len(fields) < 5 || len(tail) < 3 {
			continue
		}
		m := cgroupMount{root: unescapeMount(fields[3]), point: unescapeMount(fields[4])}
		switch {
		case tail[0] == "cgroup" && hasOption(tail[2], "pids"):
			if _, dup := out["v1"]; !dup {
				out["v1"] = m
			}
		case tail[0] == "cgroup2":
			if _, dup := out["v2"]; !dup {
				out["v2"] = m
			}
		}
	}
	return out, sc.Err()
}

// readSelfCgroups parses /proc/self/cgroup: controller list -> path, with
// "" for the unified hierarchy.
func readSelfCgroups(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out, nil
}

// relTo is own's path below the mount's root (a container sees its own
// cgroup as the root of a bind-mounted hierarchy).
func relTo(own, root string) string {
	if root == "/" || root == "" {
		return own
	}
	if own == root {
		return "/"
	}
	if strings.HasPrefix(own, root+"/") {
		return strings.TrimPrefix(own, root)
	}
	return own
}

func hasOption(opts, name string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == name {
			return true
		}
	}
	return false
}

func hasField(s, name string) bool {
	for _, f := range strings.Fields(s) {
		if f == name {
			return true
		}
	}
	return false
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
