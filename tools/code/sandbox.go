package code

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// driverSource is the Python program that confines the interpreter and runs
// the code (confine.py, then driver.py, which calls it). It is passed with
// -c, so there is no file for the code to read or change. Joined when
// first needed, not by every command at start.
var driverSource = sync.OnceValue(func() string { return confineSource + "\n\n" + driverMain })

var (
	//go:embed confine.py
	confineSource string
	//go:embed driver.py
	driverMain string
)

// process is one running driver and what it owns: the working directory,
// the pipes and, as root, its cgroup. cleanup releases all of it.
type process struct {
	cmd     *exec.Cmd
	workdir string
	iso     isolation

	ctlW    *os.File      // jarvis -> driver (the driver's fd 3)
	ctlR    *os.File      // driver -> jarvis (the driver's fd 4)
	frames  chan frame    // frames read from ctlR; closed at EOF
	stdout  *os.File      // read ends of the code's stdout and stderr
	stderr  *os.File      //
	exited  chan struct{} // closed once the driver has been waited for
	state   *os.ProcessState
	cg      *cgroup
	once    sync.Once
	readers sync.WaitGroup
}

// Test hooks, never set outside tests: driverFault makes the driver fail
// a step on purpose ("mount_setattr": mount_setattr fails, so the remount
// fallback is used; "readonly": both fail), and noCgroup leaves the
// process limit to RLIMIT_NPROC alone, as root too.
var (
	driverFault string
	noCgroup    bool
)

// launch starts a driver in mode ("oneshot" or "repl") and waits until it
// reports ready: confined, limited and waiting for code. It fails when
// Python is missing or does not start, when the sandbox is not what the
// configuration requires (ErrNotConfined, see isolation.enforce), or with
// ctx's error when ctx ends first (give it the call's deadline).
func launch(ctx context.Context, cfg Config, mode string) (*process, error) {
	python, err := resolvePython(ctx, cfg.Python)
	if err != nil {
		return nil, err
	}
	workdir, err := os.MkdirTemp("", "jarvis-code-*")
	if err != nil {
		return nil, fmt.Errorf("cannot create a working directory for the code: %w", err)
	}
	if real, err := filepath.EvalSymlinks(workdir); err == nil {
		workdir = real
	}
	p := &process{workdir: workdir, exited: make(chan struct{}), frames: make(chan frame, 4)}
	p.iso.hostUID = os.Getuid()
	if os.Geteuid() == 0 {
		// The code runs as nobody (see nobodyID), which must own the
		// directory it works in.
		p.iso.hostUID = nobodyID
		if err := os.Chown(workdir, nobodyID, nobodyID); err != nil {
			p.cleanup()
			return nil, fmt.Errorf("cannot hand the working directory to uid %d: %w", nobodyID, err)
		}
	}
	if python.note != "" {
		p.iso.ready.Notes = append(p.iso.ready.Notes, python.note)
	}
	if err := p.start(cfg, python.path, mode); err != nil {
		p.cleanup()
		return nil, err
	}
	if err := p.awaitReady(ctx, cfg); err != nil {
		p.cleanup()
		return nil, err
	}
	return p, nil
}

// start creates the pipes and starts the driver, in namespaces when the
// kernel allows it (asked once per jarvis process, see namespacesUsable).
func (p *process) start(cfg Config, python, mode string) error {
	ctlChildR, ctlW, err := os.Pipe()
	if err != nil {
		return err
	}
	ctlR, ctlChildW, err := os.Pipe()
	if err != nil {
		closeAll(ctlChildR, ctlW)
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(ctlChildR, ctlW, ctlR, ctlChildW)
		return err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(ctlChildR, ctlW, ctlR, ctlChildW, outR, outW)
		return err
	}
	p.ctlW, p.ctlR, p.stdout, p.stderr = ctlW, ctlR, outR, errR
	defer closeAll(ctlChildR, ctlChildW, outW, errW) // the child has its copies

	ns, reason := namespacesUsable()
	if !ns && !cfg.unconfinedAllowed() {
		return refusal([]string{missingNamespaces}, []string{reason}, cfg.RequireIsolation)
	}
	asNobody := os.Geteuid() == 0
	if asNobody && !noCgroup {
		// RLIMIT_NPROC applies to nobody, but counts all of nobody's
		// processes without a user namespace; a pids cgroup counts only the
		// run's, and lets jarvis find every one of them when it kills it.
		if cg, err := newCgroup(cfg.MaxProcesses); err == nil {
			p.cg = cg
		} else {
			p.iso.ready.Notes = append(p.iso.ready.Notes, "no pids cgroup: "+err.Error())
		}
	}
	build := func(ns bool) *exec.Cmd {
		settings := map[string]any{
			"mode":                mode,
			"namespaces":          ns,
			"cpu_seconds":         cfg.CPUSeconds,
			"session_cpu_seconds": cfg.SessionCPUSeconds,
			"memory_bytes":        int64(cfg.MemoryMB) << 20,
			"file_size_bytes":     int64(cfg.MaxFileSizeMB) << 20,
			"tmpfs_bytes":         int64(cfg.MaxFileSizeMB) << 20,
			"max_processes":       cfg.MaxProcesses,
			"nproc_counts_user":   !ns,
			"hide":                cfg.hiddenPaths(),
		}
		if driverFault != "" {
			settings["test_fault"] = driverFault
		}
		data, _ := json.Marshal(settings)
		cmd := exec.Command(python, "-I", "-B", "-X", "utf8", "-c", driverSource(), string(data))
		cmd.Dir = p.workdir
		cmd.Env = sandboxEnv(python, p.workdir)
		cmd.Stdout, cmd.Stderr = outW, errW
		cmd.ExtraFiles = []*os.File{ctlChildR, ctlChildW}
		cmd.SysProcAttr = sysProcAttr(ns, asNobody)
		return cmd
	}
	cmd := build(ns)
	err = cmd.Start()
	if err != nil && ns && namespaceRefused(err) {
		// The kernel refused the namespaces, or the program cannot start at
		// all (exec fails with some of the same errors). Starting it without
		// them tells which; it runs no code before awaitReady has applied
		// the policy, which refuses it unless allow_unconfined is set.
		refused := err
		cmd = build(false)
		if err = cmd.Start(); err == nil {
			reason = markNamespacesUnusable(refused)
			ns = false
		}
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s", ErrPythonNotFound, pythonMissing(cfg.Python))
		}
		return fmt.Errorf("cannot start %s: %w", python, err)
	}
	if ns {
		markNamespacesUsable()
	}
	p.cmd = cmd
	p.iso.namespaces, p.iso.nsReason = ns, reason
	go func() {
		_ = cmd.Wait()
		p.state = cmd.ProcessState
		close(p.exited)
	}()
	go p.readFrames()
	return nil
}

// readFrames turns the driver's control output into frames. A line that is
// not a frame (or longer than any frame) means the driver is not speaking
// the protocol any more, and is treated as gone.
func (p *process) readFrames() {
	defer close(p.frames)
	r := bufio.NewReaderSize(p.ctlR, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return
		}
		var f frame
		if json.Unmarshal(line, &f) != nil {
			return
		}
		f.raw = append([]byte(nil), line...)
		select {
		case p.frames <- f:
		case <-p.exited: // nobody will read it (and the code may have flooded the pipe)
			return
		}
	}
}

// awaitReady reads the driver's ready report, moves it into its cgroup, and
// checks the isolation it reports.
func (p *process) awaitReady(ctx context.Context, cfg Config) error {
	var f frame
	var ok bool
	select {
	case f, ok = <-p.frames:
	case <-ctx.Done():
		return ctx.Err()
	}
	if !ok || f.Type != "ready" {
		p.kill()
		<-p.exited
		msg, _ := io.ReadAll(io.LimitReader(p.stderr, 4<<10))
		text := strings.TrimSpace(string(msg))
		if text == "" {
			text = "it exited with " + p.state.String()
		}
		return fmt.Errorf("python (%s) did not start: %s\njarvis needs Python 3.8 or newer; set [code] python in the config file to use another interpreter", p.cmd.Path, text)
	}
	var ready readyFrame
	if err := json.Unmarshal(f.raw, &ready); err != nil {
		return fmt.Errorf("python driver: bad ready report: %w", err)
	}
	ready.Notes = append(p.iso.ready.Notes, ready.Notes...) // jarvis's own notes first
	p.iso.ready = ready
	p.iso.processLimit = "none"
	switch {
	case p.cg != nil:
		if err := p.cg.add(p.cmd.Process.Pid); err != nil {
			return fmt.Errorf("cannot move the code into its cgroup: %w", err)
		}
		p.iso.processLimit = "cgroup"
	case p.iso.ready.Limits["max_processes"]:
		// The code never runs as root (see nobodyID), so the kernel
		// applies the limit.
		p.iso.processLimit = "rlimit"
	}
	return p.iso.enforce(cfg)
}

// send writes one frame to the driver.
func (p *process) send(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = p.ctlW.Write(append(data, '\n'))
	return err
}

// pid is the driver's pid (and process group) as jarvis sees it.
func (p *process) pid() int { return p.cmd.Process.Pid }

// kill kills everything the code started: the process group, the driver
// (with a pid namespace, the kernel then kills every process in it, even
// one that left the group), and, as root, whatever is left in the cgroup.
func (p *process) kill() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	killGroup(p.pid())
	_ = p.cmd.Process.Kill()
	if p.cg != nil {
		p.cg.killAll()
	}
}

// drain copies the code's stdout and stderr into the buffers until the
// pipes close, which is when the last process holding them has ended.
func (p *process) drain(stdout, stderr io.Writer) {
	p.readers.Add(2)
	copyTo := func(w io.Writer, r io.Reader) {
		defer p.readers.Done()
		_, _ = io.Copy(w, r)
	}
	go copyTo(stdout, p.stdout)
	go copyTo(stderr, p.stderr)
}

// finishOutput waits for the output pipes to close. A process that escaped
// both the group and the namespace (only possible without namespaces) could
// hold them open for ever, so after a grace period it kills again and stops
// reading.
func (p *process) finishOutput(grace time.Duration) {
	done := make(chan struct{})
	go func() { p.readers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		p.kill()
		_ = p.stdout.Close()
		_ = p.stderr.Close()
		<-done
	}
}

// cleanup kills what is left and releases every resource: safe to call
// more than once and on a process that never started.
func (p *process) cleanup() {
	p.once.Do(func() {
		if p.cmd != nil && p.cmd.Process != nil {
			p.kill()
			<-p.exited
		}
		closeAll(p.ctlW, p.ctlR, p.stdout, p.stderr)
		if p.cg != nil {
			p.cg.remove()
		}
		removeTree(p.workdir)
	})
}

// sandboxEnv is the code's whole environment: nothing of jarvis's (API
// keys, tokens, SSH_AUTH_SOCK) is passed on.
func sandboxEnv(python, workdir string) []string {
	path := "/usr/local/bin:/usr/bin:/bin"
	if dir := filepath.Dir(python); !strings.Contains(":"+path+":", ":"+dir+":") {
		path = dir + ":" + path
	}
	return []string{
		"PATH=" + path,
		"HOME=" + workdir,
		"TMPDIR=" + workdir,
		"LANG=C.UTF-8",
		"LC_ALL=C.UTF-8",
		"MPLBACKEND=Agg",
	}
}

// removeTree removes dir even when the code left directories without write
// or search permission in it.
func removeTree(dir string) {
	if dir == "" {
		return
	}
	if os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			_ = os.Chmod(path, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			_ = f.Close()
		}
	}
}

// effectiveTimeout is the call's wall-clock limit: the configured one, cut
// short so that it ends before ctx's deadline (an executor timeout set
// lower by the user), so the call reports its own, more useful, message.
func effectiveTimeout(ctx context.Context, configured float64) time.Duration {
	d := time.Duration(configured * float64(time.Second))
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl) - 300*time.Millisecond; left < d {
			d = max(left, 100*time.Millisecond)
		}
	}
	return d
}

func formatSeconds(s float64) string {
	if s == float64(int64(s)) {
		return fmt.Sprintf("%d", int64(s))
	}
	return fmt.Sprintf("%.1f", s)
}
