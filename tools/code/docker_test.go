//go:build unix

package code

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/tools"
)

// fakeDocker writes a docker client that answers like one without needing
// an engine: FAKE_DOCKER_ENGINE=down makes `version` fail as a client
// without a daemon does; FAKE_DOCKER_RUN picks how `run` behaves. Every
// invocation is logged to log, `run`'s arguments to log.run.
func fakeDocker(t *testing.T, engine, runMode string) (bin, log string) {
	t.Helper()
	dir := t.TempDir()
	bin, log = filepath.Join(dir, "docker"), filepath.Join(dir, "log")
	script := `#!/bin/sh
echo "$@" >> "` + log + `"
case "$1" in
version)
  if [ "$FAKE_DOCKER_ENGINE" = down ]; then
    echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?" >&2
    exit 1
  fi
  echo '{"Version":"27.0.0","ApiVersion":"1.46"}';;
ps)
  printf '%s\n' "$FAKE_DOCKER_PS";;
run)
  printf '%s\n' "$@" > "` + log + `.run"
  cat > "` + log + `.stdin"
  case "$FAKE_DOCKER_RUN" in
  hang) exec sleep 3141.5;;
  noimage) echo "docker: Error response from daemon: No such image: python:3.12-slim." >&2; exit 125;;
  nopython) echo 'exec: "python3": executable file not found in $PATH' >&2; exit 127;;
  oom) echo partial; exit 137;;
  walltimeout) echo partial; printf '\njarvis: the wall-clock limit of 60 s was reached; the code was killed\n' >&2; exit 124;;
  exit124) exit 124;;
  cpu) echo "Traceback" >&2; exit 152;;
  fail) echo out; echo "Traceback (most recent call last):" >&2; echo "ValueError: boom" >&2; exit 3;;
  *) echo "42";;
  esac;;
esac
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_DOCKER_ENGINE", engine)
	t.Setenv("FAKE_DOCKER_PS", "")
	t.Setenv("FAKE_DOCKER_RUN", runMode)
	return bin, log
}

func readLog(t *testing.T, path string) string {
	t.Helper()
	data, _ := os.ReadFile(path)
	return string(data)
}

func TestDockerCommandLine(t *testing.T) {
	d := NewDocker(Config{Docker: DockerConfig{Image: "python:3.13-alpine", MemoryMB: 300, PidsLimit: 20, CPUs: 0.5}})
	d.cfg.Docker.Timeout = 30
	args := d.dockerArgs("jarvis-code-test", time.Unix(1000, 0))
	line := strings.Join(args, " ")
	for _, want := range []string{
		"run --rm -i ", "--name jarvis-code-test", "--network none", "--memory 300m", "--memory-swap 300m",
		// Marked as jarvis's, with the time by which it must be gone:
		// start + timeout + kill grace + clock slack.
		"--label jarvis.code=1", "--label jarvis.code.deadline=1100",
		"--pids-limit 20", "--cpus 0.5", "--read-only", "--tmpfs /tmp:rw,nosuid,nodev,size=67108864",
		"--user 65534:65534", "--security-opt no-new-privileges", "--cap-drop ALL", "--pull never",
		"python:3.13-alpine python3 -I -B -X utf8 -c ",
	} {
		if !strings.Contains(line, want) {
			t.Fatalf("missing %q in\n%s", want, line)
		}
	}
	if args[0] != "run" || slices.Index(args, "python:3.13-alpine") < slices.Index(args, "--security-opt") {
		t.Fatalf("docker options must come before the image: %q", args)
	}
	// The driver inside enforces the same wall clock, so the container
	// ends at the limit even when jarvis is gone.
	var settings map[string]any
	if err := json.Unmarshal([]byte(args[len(args)-1]), &settings); err != nil {
		t.Fatal(err)
	}
	if settings["mode"] != "stdin" || settings["wall_seconds"] != 30.0 {
		t.Fatalf("settings: %v", settings)
	}
}

// The driver in the container's command stops the code at the wall clock
// by itself, with whatever it started, and says so.
func TestDockerDriverEnforcesTheWallClock(t *testing.T) {
	needPython(t)
	d := NewDocker(Config{Docker: DockerConfig{Timeout: 1}})
	args := d.dockerArgs("x", time.Now())
	i := slices.Index(args, DefaultDockerImage)
	python, err := resolvePython(context.Background(), "python3")
	if err != nil {
		t.Fatal(err)
	}
	tag := strconv.Itoa(int(time.Now().UnixNano()%1e6)) + ".375"
	cmd := exec.Command(python.path, args[i+2:]...)
	cmd.Stdin = strings.NewReader("import subprocess\nsubprocess.Popen(['sleep', '" + tag + "'])\n" +
		"print('spinning', flush=True)\nwhile True:\n    pass\n")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 124 {
		t.Fatalf("want exit 124, got %v (stderr %q)", err, stderr.String())
	}
	mustContain(t, stdout.String(), "spinning")
	mustContain(t, stderr.String(), containerTimeoutMarker)
	eventually(t, "the code's child is gone", func() bool { return len(processesWith(tag)) == 0 })

	// The result says it was a timeout.
	bin, _ := fakeDocker(t, "up", "walltimeout")
	r := run(t, NewDocker(Config{Docker: DockerConfig{Binary: bin}}), "while True: pass")
	if r.Success || r.Status != tools.StatusTimeout {
		t.Fatalf("want a timeout: %+v", r)
	}
	mustContain(t, r.Content, "Execution timed out after 60s inside the container", "partial")
	// An exit status of 124 from the code itself is just that.
	bin, _ = fakeDocker(t, "up", "exit124")
	r = run(t, NewDocker(Config{Docker: DockerConfig{Binary: bin}}), "raise SystemExit(124)")
	if r.Status == tools.StatusTimeout {
		t.Fatalf("exit(124) taken for a timeout: %+v", r)
	}
}

// At first use, containers a dead jarvis left behind are removed: those
// past their deadline and those without one; another jarvis's live
// container is left alone.
func TestDockerRemovesStaleContainers(t *testing.T) {
	bin, log := fakeDocker(t, "up", "ok")
	future := strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)
	past := strconv.FormatInt(time.Now().Add(-time.Minute).Unix(), 10)
	t.Setenv("FAKE_DOCKER_PS", "old1 "+past+"\nlive "+future+"\nunbounded \n")
	d := NewDocker(Config{Docker: DockerConfig{Binary: bin}})
	if r := run(t, d, "print(1)"); !r.Success {
		t.Fatalf("failed: %+v", r)
	}
	calls := readLog(t, log)
	mustContain(t, calls, "ps --all --no-trunc --filter label=jarvis.code=1")
	var removed []string
	for _, line := range strings.Split(calls, "\n") {
		if strings.HasPrefix(line, "rm ") {
			removed = append(removed, line)
		}
	}
	if len(removed) != 1 || removed[0] != "rm --force old1 unbounded" {
		t.Fatalf("removed %q, want the stale containers only", removed)
	}
	// Once per client and process.
	if r := run(t, d, "print(1)"); !r.Success || strings.Count(readLog(t, log), "ps --all") != 1 {
		t.Fatalf("swept twice:\n%s", readLog(t, log))
	}
}

// The command the container runs is the same driver in its stdin mode:
// run here, it gives code_interpreter's contract.
func TestDockerContainerCommandRunsTheDriver(t *testing.T) {
	needPython(t)
	args := NewDocker(Config{}).dockerArgs("x", time.Now())
	i := slices.Index(args, DefaultDockerImage)
	python, err := resolvePython(context.Background(), "python3")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python.path, args[i+2:]...)
	cmd.Stdin = strings.NewReader("import os\nprint(os.getcwd() != '')\ndef f():\n    raise KeyError('k')\n6 * 7")
	out, err := cmd.Output()
	if err != nil || string(out) != "True\n42\n" {
		t.Fatalf("got %q, %v", out, err)
	}
	cmd = exec.Command(python.path, args[i+2:]...)
	cmd.Stdin = strings.NewReader("x = 1\nraise KeyError('k')")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("want exit 1, got %v", err)
	}
	mustContain(t, stderr.String(), `File "<code>", line 2`, "KeyError: 'k'")
}

func TestDockerClientMissing(t *testing.T) {
	r := run(t, NewDocker(Config{Docker: DockerConfig{Binary: "/nonexistent/docker"}}), "print(1)")
	if r.Success {
		t.Fatal("ran without a client")
	}
	mustContain(t, r.Content, `docker client "/nonexistent/docker" was not found`, "[code.docker] binary")
}

func TestDockerEngineDown(t *testing.T) {
	bin, log := fakeDocker(t, "down", "")
	r := run(t, NewDocker(Config{Docker: DockerConfig{Binary: bin}}), "print(1)")
	if r.Success {
		t.Fatal("ran without an engine")
	}
	mustContain(t, r.Content, "no Docker engine answered", "Cannot connect to the Docker daemon", "DOCKER_HOST")
	if strings.Contains(readLog(t, log), "run") {
		t.Fatal("tried to run a container without an engine")
	}
}

// This machine's own docker client, when it has one but no engine.
func TestDockerRealClientWithoutEngine(t *testing.T) {
	bin, err := exec.LookPath("docker")
	if err != nil {
		t.Skip("no docker client on this machine")
	}
	if exec.Command(bin, "version", "--format", "{{json .Server}}").Run() == nil {
		t.Skip("a Docker engine answers here; see TestDockerRealEngine")
	}
	r := run(t, NewDocker(Config{}), "print(1)")
	if r.Success {
		t.Fatal("ran without an engine")
	}
	mustContain(t, r.Content, "no Docker engine answered")
}

func TestDockerRunsCodeOnStdin(t *testing.T) {
	bin, log := fakeDocker(t, "up", "ok")
	r := run(t, NewDocker(Config{Docker: DockerConfig{Binary: bin}}), "print(6 * 7)")
	if !r.Success || r.Content != "--- stdout ---\n42" || r.Metadata["exit_code"] != 0 {
		t.Fatalf("got %+v", r)
	}
	if got := readLog(t, log+".stdin"); got != "print(6 * 7)" {
		t.Fatalf("stdin was %q", got)
	}
	name, _ := r.Metadata["container"].(string)
	if !strings.Contains(readLog(t, log+".run"), "--name\n"+name+"\n") {
		t.Fatalf("container %q not named in the run command", name)
	}
}

func TestDockerTimeoutKillsTheContainer(t *testing.T) {
	bin, log := fakeDocker(t, "up", "hang")
	r := run(t, NewDocker(Config{Docker: DockerConfig{Binary: bin, Timeout: 1}}), "while True: pass")
	if r.Success || r.Status != tools.StatusTimeout {
		t.Fatalf("want a timeout: %+v", r)
	}
	mustContain(t, r.Content, "Execution timed out after 1s; the process was killed.")
	name, _ := r.Metadata["container"].(string)
	mustContain(t, readLog(t, log), "kill "+name)
	eventually(t, "the client is gone", func() bool { return len(processesWith("3141.5")) == 0 })
	eventually(t, "the container is removed", func() bool { return strings.Contains(readLog(t, log), "rm --force "+name) })
}

func TestDockerExitStatusesExplained(t *testing.T) {
	cases := []struct{ mode, want string }{
		{"noimage", "is not available locally and is never pulled implicitly. Run `docker pull python:3.12-slim`"},
		{"nopython", "cannot run python3"},
		{"oom", "more than its 512 MB of memory"},
		{"cpu", "The code used up its CPU time limit (30 s) and was killed.\n\n--- stderr ---\nTraceback"},
		{"fail", "The code failed with exit status 3.\n\n--- stdout ---\nout\n\n--- stderr ---\nTraceback"},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			bin, _ := fakeDocker(t, "up", c.mode)
			r := run(t, NewDocker(Config{Docker: DockerConfig{Binary: bin}}), "print(1)")
			if r.Success {
				t.Fatalf("succeeded: %+v", r)
			}
			mustContain(t, r.Content, c.want)
		})
	}
}

// The real path, only where an engine answers and the image is present
// (jarvis never pulls it).
func TestDockerRealEngine(t *testing.T) {
	bin, err := exec.LookPath("docker")
	if err != nil {
		t.Skip("no docker client on this machine")
	}
	if out, err := exec.Command(bin, "version", "--format", "{{json .Server}}").Output(); err != nil || strings.TrimSpace(string(out)) == "null" {
		t.Skip("no Docker engine answers on this machine")
	}
	if exec.Command(bin, "image", "inspect", DefaultDockerImage).Run() != nil {
		t.Skipf("the image %s is not present (run docker pull %s to test the real path)", DefaultDockerImage, DefaultDockerImage)
	}
	d := NewDocker(Config{Docker: DockerConfig{Timeout: 60}})
	r := run(t, d, "import os\nprint(os.getuid())\n6 * 7")
	if !r.Success {
		t.Fatalf("failed: %+v", r)
	}
	mustContain(t, r.Content, "65534", "42")
	r = run(t, d, "import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=3)")
	if r.Success {
		t.Fatal("the container reached the network")
	}
	r = run(t, d, "open('/etc/x', 'w')")
	mustContain(t, r.Content, "Read-only file system")
}
