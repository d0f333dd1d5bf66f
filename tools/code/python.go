package code

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// ErrPythonNotFound is returned when the configured interpreter does not
// exist; its message says how to configure one.
var ErrPythonNotFound = errors.New("python3 not found")

// ErrPythonUnreachable is returned, when jarvis runs as root, when no
// interpreter can be run by the unprivileged user the code runs as.
var ErrPythonUnreachable = errors.New("python3 cannot be run by the sandbox's user")

// pythonMissing is the failed result's text for ErrPythonNotFound.
func pythonMissing(name string) string {
	return fmt.Sprintf("Cannot run Python code: %q was not found on PATH. Install Python 3 "+
		"(3.8 or newer), or set its path in the config file:\n\n[code]\npython = \"/usr/bin/python3\"", name)
}

// nobodyID is the host uid and gid the code runs as when jarvis runs as
// root: root's code would otherwise read /etc/shadow and every user's
// files, and the kernel does not apply RLIMIT_NPROC to uid 0.
const nobodyID = 65534

// systemPythons are tried, as root, when the configured interpreter lives
// where nobody can reach it (pyenv under /root, whose mode is 700).
var systemPythons = []string{"/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3"}

// pythonChoice is the interpreter to start, and why it is not the
// configured one when it is not.
type pythonChoice struct {
	path string
	note string
}

// resolved caches interpreter look-ups by configured name: asking Python
// where it lives costs a process start.
var resolved sync.Map // string -> pythonChoice

// resolvePython finds the interpreter and asks it for its real executable.
// A version manager's shim (pyenv, asdf) is a script that needs the user's
// environment to pick a version; the sandbox runs with a scrubbed one, so
// it must start the interpreter the shim would have chosen, directly.
//
// As root the answer must come from the interpreter running as nobodyID:
// that is who will run it. When it cannot, a system interpreter that can
// is used instead, and the choice says so; when none can, the error says
// how to configure one. Running the code as root instead is not an option.
func resolvePython(ctx context.Context, name string) (pythonChoice, error) {
	if p, ok := resolved.Load(name); ok {
		return p.(pythonChoice), nil
	}
	path, err := exec.LookPath(expandHome(name))
	if err != nil {
		return pythonChoice{}, fmt.Errorf("%w: %s", ErrPythonNotFound, pythonMissing(name))
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	real, _ := askPython(ctx, path, false)
	if os.Geteuid() != 0 {
		if real == "" {
			// Not a Python 3 that answers; the driver's start will say why.
			return pythonChoice{path: path}, nil
		}
		c := pythonChoice{path: real}
		resolved.Store(name, c)
		return c, nil
	}
	if real != "" {
		path = real
	}
	r, why := askPython(ctx, path, true)
	if r != "" {
		c := pythonChoice{path: r}
		resolved.Store(name, c)
		return c, nil
	}
	for _, alt := range systemPythons {
		if alt == path {
			continue
		}
		if r, _ := askPython(ctx, alt, true); r != "" {
			c := pythonChoice{path: r, note: fmt.Sprintf("jarvis runs as root, so the code runs as the unprivileged uid %d, "+
				"which cannot run %s (%s); %s is used instead (set [code] python to choose another)", nobodyID, path, why, r)}
			resolved.Store(name, c)
			return c, nil
		}
	}
	if ctx.Err() != nil {
		return pythonChoice{}, ctx.Err()
	}
	return pythonChoice{}, fmt.Errorf("%w: jarvis runs as root, so the code runs as the unprivileged uid %d (never as root), "+
		"and that user cannot run %s (%s): a directory on its path is probably closed to other users, as /root is for "+
		"a pyenv installation. Install a system Python 3 (for example /usr/bin/python3), or set [code] python in the "+
		"config file to an interpreter every user can run", ErrPythonUnreachable, nobodyID, path, why)
}

// askPython runs python to ask for its real executable, as nobodyID when
// asNobody, and returns it, or "" and why not.
func askPython(ctx context.Context, python string, asNobody bool) (real, why string) {
	cmd := exec.CommandContext(ctx, python, "-I", "-c", "import sys; print(sys.executable)")
	if asNobody {
		cmd.Dir = "/"
		cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"}
		runAsNobody(cmd)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	real = strings.TrimSpace(string(out))
	switch {
	case err != nil:
		why = firstLine(stderr.String())
		if why == "" {
			why = err.Error()
		}
		return "", why
	case !filepath.IsAbs(real):
		return "", "it did not say where it lives"
	}
	if info, err := os.Stat(real); err != nil || info.IsDir() {
		return "", "it reported " + real
	}
	return real, ""
}
