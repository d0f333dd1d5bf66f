package code

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jarvis-workbench/jarvis/tools"
)

// Docker is the code_interpreter_docker tool: each call runs its snippet in
// a throwaway container with no network, a read-only root file system, a
// small private /tmp, no capabilities, an unprivileged user and memory, CPU
// and process limits. Unlike code_interpreter, the code sees none of the
// host's files. The image is never pulled implicitly.
//
// A container must not outlive its call, even when jarvis dies: the driver
// inside it enforces the wall clock itself (it is the container's init, so
// when it exits at the limit the container ends), and every container is
// labelled with the time by which it must be gone, so the first use of the
// tool in a later jarvis removes any left over.
type Docker struct{ cfg Config }

// NewDocker returns code_interpreter_docker configured by cfg.
func NewDocker(cfg Config) *Docker { return &Docker{cfg: cfg.withDefaults()} }

// DockerFactory is code_interpreter_docker's registry factory.
func DockerFactory(cfg Config) tools.Factory {
	return func(tools.Deps) (tools.Tool, error) { return NewDocker(cfg), nil }
}

// dockerKillGrace bounds `docker kill` and `docker rm` after a timeout.
const dockerKillGrace = 10 * time.Second

// Spec returns code_interpreter_docker's spec; it requires confirmation.
func (t *Docker) Spec() tools.Spec {
	d := t.cfg.Docker
	return tools.Spec{
		Name: "code_interpreter_docker",
		Description: "Run a Python 3 snippet in a throwaway Docker container and return its stdout and stderr. " +
			"Nothing is kept between calls. The value of a final expression is printed. No network access; " +
			"none of this machine's files are visible; only /tmp (the current directory) is writable. " +
			fmt.Sprintf("Limits: %ss wall clock, %d MB memory, %s CPUs, %d processes.",
				formatSeconds(d.Timeout), d.MemoryMB, formatCPUs(d.CPUs), d.PidsLimit),
		Parameters:           tools.Params(tools.StringParam("code", "Python code to execute", true)),
		Category:             "code",
		RequiresConfirmation: true,
		TimeoutSeconds:       d.Timeout + startGrace + dockerKillGrace.Seconds(),
		Metadata:             map[string]any{"image": d.Image, "limits": t.limitsMeta()},
	}
}

// GrantScope is the exact code: what runs is the whole danger.
func (t *Docker) GrantScope(args tools.Args) tools.Scope {
	return tools.ExactArguments(args, "this exact code")
}

func (t *Docker) limitsMeta() map[string]any {
	d := t.cfg.Docker
	return map[string]any{
		"timeout_seconds":  d.Timeout,
		"memory_mb":        d.MemoryMB,
		"cpus":             d.CPUs,
		"pids_limit":       d.PidsLimit,
		"cpu_seconds":      t.cfg.CPUSeconds,
		"max_file_size_mb": t.cfg.MaxFileSizeMB,
		"max_output_bytes": t.cfg.MaxOutputBytes,
	}
}

// Execute runs args["code"] in a new container.
func (t *Docker) Execute(ctx context.Context, args tools.Args) tools.Result {
	code := args.String("code")
	if strings.TrimSpace(code) == "" {
		return tools.Fail("No code provided.")
	}
	d := t.cfg.Docker
	bin, err := exec.LookPath(expandHome(d.Binary))
	if err != nil {
		return tools.Fail("Cannot run code in Docker: the docker client %q was not found. Install Docker, "+
			"or set its path in the config file ([code.docker] binary = \"/usr/bin/docker\"). "+
			"code_interpreter runs Python without Docker.", d.Binary)
	}
	if msg := t.engineDown(ctx, bin); msg != "" {
		return tools.Fail("%s", msg)
	}
	if _, done := swept.LoadOrStore(bin, true); !done {
		t.removeStale(ctx, bin)
	}
	name := containerName()
	o, err := t.run(ctx, bin, name, code)
	if err != nil {
		return tools.Fail("Cannot run code in Docker: %v", err)
	}
	r := o.result()
	if !o.timedOut && !o.cancelled && o.state != nil && !r.Success {
		r = t.explain(r, o)
	}
	return r.WithMeta("network_isolated", true).
		WithMeta("image", d.Image).
		WithMeta("container", name).
		WithMeta("limits", t.limitsMeta())
}

// engineDown asks the engine for its version and returns why it did not
// answer, or "" when it did.
func (t *Docker) engineDown(ctx context.Context, bin string) string {
	cctx, cancel := context.WithTimeout(ctx, dockerKillGrace)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(cctx, bin, "version", "--format", "{{json .Server}}")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err == nil {
		var server map[string]any
		if json.Unmarshal(bytes.TrimSpace(out), &server) == nil && server != nil {
			return ""
		}
	}
	why := firstLine(stderr.String())
	if why == "" && err != nil {
		why = err.Error()
	}
	if why == "" {
		why = "the client reports no server"
	}
	return fmt.Sprintf("Cannot run code in Docker: no Docker engine answered (%s). Start the Docker daemon, or point "+
		"DOCKER_HOST at a running engine, then try again. code_interpreter runs Python without Docker.", why)
}

// Labels of jarvis's containers: labelCode marks them, labelDeadline holds
// the Unix time by which the container must be gone.
const (
	labelCode     = "jarvis.code"
	labelDeadline = "jarvis.code.deadline"
)

// deadlineSlack is added to a container's deadline label: the engine's
// clock and that of the jarvis that reads the label may differ.
const deadlineSlack = time.Minute

// containerTimeoutMarker starts the line the driver writes to stderr when
// it kills the code at the wall-clock limit inside the container.
const containerTimeoutMarker = "jarvis: the wall-clock limit of "

// swept records the docker clients whose stale containers this process has
// removed: once each is enough.
var swept sync.Map // string -> bool

// removeStale removes the containers a jarvis left behind: labelled as
// jarvis's, with a deadline that has passed, or with none (made before
// containers bounded themselves). Best effort: errors are ignored.
func (t *Docker) removeStale(ctx context.Context, bin string) {
	ctx, cancel := context.WithTimeout(ctx, dockerKillGrace)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "ps", "--all", "--no-trunc", "--filter", "label="+labelCode+"=1",
		"--format", `{{.ID}} {{.Label "`+labelDeadline+`"}}`).Output()
	if err != nil {
		return
	}
	var stale []string
	now := time.Now().Unix()
	for _, line := range strings.Split(string(out), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) > 1 {
			if deadline, err := strconv.ParseInt(fields[1], 10, 64); err == nil && deadline > now {
				continue // another jarvis's call, still within its time
			}
		}
		stale = append(stale, fields[0])
	}
	if len(stale) > 0 {
		_ = exec.CommandContext(ctx, bin, append([]string{"rm", "--force"}, stale...)...).Run()
	}
}

// dockerArgs is the `docker run` command line for one call started at
// start. The code comes on stdin; the driver (in its stdin mode) runs it
// with the same echo and traceback rules as code_interpreter, under the CPU
// and file size limits, and kills it at the wall-clock limit.
func (t *Docker) dockerArgs(name string, start time.Time) []string {
	d := t.cfg.Docker
	mem := strconv.Itoa(d.MemoryMB) + "m"
	tmp := int64(t.cfg.MaxFileSizeMB) << 20
	settings, _ := json.Marshal(map[string]any{
		"mode":            "stdin",
		"cpu_seconds":     t.cfg.CPUSeconds,
		"file_size_bytes": tmp,
		"wall_seconds":    d.Timeout,
		// The container's memory and pids limits cover every process; an
		// RLIMIT_NPROC would count the uid's processes on the whole host.
		"memory_bytes":  0,
		"max_processes": 0,
	})
	return []string{
		"run", "--rm", "-i",
		"--name", name,
		"--label", labelCode + "=1",
		"--label", fmt.Sprintf("%s=%d", labelDeadline, containerDeadline(start, d.Timeout)),
		"--pull", "never",
		"--network", "none",
		"--memory", mem, "--memory-swap", mem,
		"--pids-limit", strconv.Itoa(d.PidsLimit),
		"--cpus", formatCPUs(d.CPUs),
		"--read-only",
		"--tmpfs", fmt.Sprintf("/tmp:rw,nosuid,nodev,size=%d", tmp),
		"--user", "65534:65534",
		"--cap-drop", "ALL",
		"--security-opt", "no-new-privileges",
		"--workdir", "/tmp",
		"--env", "HOME=/tmp",
		"--env", "LANG=C.UTF-8",
		"--env", "MPLBACKEND=Agg",
		d.Image,
		"python3", "-I", "-B", "-X", "utf8", "-c", driverSource(), string(settings),
	}
}

// run runs the container and waits for it. On timeout or when ctx ends it
// kills the container by name (killing the client alone would leave it
// running), then the client.
func (t *Docker) run(ctx context.Context, bin, name, code string) (*outcome, error) {
	start := time.Now()
	timeout := effectiveTimeout(ctx, t.cfg.Docker.Timeout)
	o := &outcome{
		stdout: newCapBuffer(t.cfg.MaxOutputBytes), stderr: newCapBuffer(t.cfg.MaxOutputBytes),
		timeout: timeout, cpuLimit: t.cfg.CPUSeconds,
	}
	cmd := exec.Command(bin, t.dockerArgs(name, start)...)
	cmd.Stdin = strings.NewReader(code)
	cmd.Stdout, cmd.Stderr = o.stdout, o.stderr
	cmd.SysProcAttr = groupAttr()
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	o.pid = cmd.Process.Pid
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-exited:
	case <-timer.C:
		o.timedOut = true
	case <-ctx.Done():
		o.cancelled = true
	}
	if o.timedOut || o.cancelled {
		t.killContainer(bin, name)
		killGroup(cmd.Process.Pid)
		<-exited
		// The client may have died before the engine created the
		// container; make sure it does not start afterwards.
		go t.removeContainer(bin, name)
	}
	o.state = cmd.ProcessState
	o.duration = time.Since(start)
	return o, nil
}

// containerDeadline is the Unix time by which a container started at start
// with a wall-clock limit of timeout seconds must be gone: its owner kills
// it at the limit, and the driver inside stops it there by itself.
func containerDeadline(start time.Time, timeout float64) int64 {
	d := time.Duration(timeout*float64(time.Second)) + dockerKillGrace + deadlineSlack
	return start.Add(d).Unix()
}

func (t *Docker) killContainer(bin, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), dockerKillGrace)
	defer cancel()
	_ = exec.CommandContext(ctx, bin, "kill", name).Run()
}

func (t *Docker) removeContainer(bin, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), dockerKillGrace)
	defer cancel()
	_ = exec.CommandContext(ctx, bin, "rm", "--force", name).Run()
}

// explain replaces docker's own exit statuses with what they mean: 125 is
// docker failing to run the container, 126 and 127 a command the image
// cannot run, 137 a SIGKILL (almost always the memory limit).
func (t *Docker) explain(r tools.Result, o *outcome) tools.Result {
	d := t.cfg.Docker
	stderr := o.stderr.String()
	var msg string
	switch o.state.ExitCode() {
	case 125:
		msg = "Docker could not start the container: " + firstLine(stderr)
		if strings.Contains(stderr, "No such image") || strings.Contains(stderr, "Unable to find image") ||
			strings.Contains(stderr, "not found") && strings.Contains(stderr, d.Image) {
			msg = fmt.Sprintf("The image %s is not available locally and is never pulled implicitly. "+
				"Run `docker pull %s` (or set [code.docker] image to an image you have), then try again.", d.Image, d.Image)
		}
	case 126, 127:
		msg = fmt.Sprintf("The image %s cannot run python3 (%s). Set [code.docker] image to an image that has Python 3.",
			d.Image, firstLine(stderr))
	case 124:
		if !strings.Contains(stderr, containerTimeoutMarker) {
			return r
		}
		res := tools.Fail("%s", withOutput(fmt.Sprintf("Execution timed out after %ss inside the container; "+
			"every process in it was killed.", formatSeconds(d.Timeout)), o.stdout.String(), stderr))
		res.Status = tools.StatusTimeout
		res.Metadata = r.Metadata
		return res
	case cpuLimitExit:
		msg = withOutput(fmt.Sprintf("The code used up its CPU time limit (%d s) and was killed.", t.cfg.CPUSeconds),
			o.stdout.String(), stderr)
	case 137:
		msg = withOutput(fmt.Sprintf("The container was killed (SIGKILL), most likely because the code used more "+
			"than its %d MB of memory.", d.MemoryMB), o.stdout.String(), stderr)
	default:
		return r
	}
	res := tools.Fail("%s", msg)
	res.Metadata = r.Metadata
	return res
}

// withOutput appends the labelled output, when there is any, to msg.
func withOutput(msg, stdout, stderr string) string {
	if out := formatOutput(stdout, stderr); out != noOutput {
		return msg + "\n\n" + out
	}
	return msg
}

func containerName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "jarvis-code-" + hex.EncodeToString(b[:])
}

func formatCPUs(c float64) string { return strconv.FormatFloat(c, 'f', -1, 64) }

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
