// Package git holds the built-in git tools: git_status, git_diff and
// git_log, which read the repository of the working directory without
// asking, and git_commit, which commits after the person saw the message
// and the files. They run the person's own `git` in the working
// directory, so their configuration (user, signing) and hooks apply, in a
// process group of their own with stdin from /dev/null, no pager, no
// colours, no prompt, killed at their timeout. Paths they are given are
// held to the file tools' rules: secrets are refused, paths past
// allowed_dirs too, and the diff of a sensitive file (a tracked .env) is
// left out of git_diff's output, saying so.
package git

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/code"
	"github.com/jarvis-workbench/jarvis/tools/files"
	"github.com/jarvis-workbench/jarvis/tools/internal/cleanenv"
	"github.com/jarvis-workbench/jarvis/tools/internal/proc"
)

// maxOutput caps what is kept of git's output.
const maxOutput = 64 << 10

// tool is what the git tools share.
type tool struct {
	spec  tools.Spec
	reach *files.Reach
	// env are the variables the person's git needs besides the clean
	// environment (its own, and for a commit the signing agents').
	env []string
}

func newTool(spec tools.Spec, deps tools.Deps) tool {
	return tool{spec: spec, reach: files.NewReachIn("[tool."+spec.Name+"] allowed_dirs", deps.For(spec.Name).AllowedDirs, deps.WorkDir)}
}

func (t *tool) Spec() tools.Spec {
	s := t.spec
	if dirs := t.reach.Dirs(); len(dirs) > 0 {
		s.Metadata = map[string]any{"reach": dirs}
	}
	return s
}

// refusePaths refuses secrets and paths past allowed_dirs; the working
// directory itself must be in the reach when allowed_dirs are set.
func (t *tool) refusePaths(paths []string) *tools.Refusal {
	if wd, err := t.reach.WorkDir(); err == nil {
		if ref := t.reach.Refuse(wd, "use git in"); ref != nil {
			return ref
		}
	}
	secrets := t.reach.Secrets()
	for _, p := range paths {
		if ref := secrets.Refuse(p); ref != nil {
			return ref
		}
		if ref := t.reach.Refuse(p, "use git on"); ref != nil {
			return ref
		}
	}
	return nil
}

// outside says whether a path needs asking (outside the working
// directory).
func (t *tool) outside(paths []string, verb string) (bool, string) {
	for _, p := range paths {
		if ok, why := t.reach.ConfirmationFor(p, verb); ok {
			return true, why
		}
	}
	return false, ""
}

// git runs the person's git with args in the working directory.
func (t *tool) git(ctx context.Context, timeout time.Duration, args ...string) (stdout, stderr string, err error) {
	bin, lerr := exec.LookPath("git")
	if lerr != nil {
		return "", "", fmt.Errorf("git is not installed (not found on PATH)")
	}
	wd, werr := t.reach.WorkDir()
	if werr != nil {
		return "", "", werr
	}
	var pass []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GIT_") {
			pass = append(pass, k)
		}
	}
	env := cleanenv.Environ(append(pass, t.env...))
	for _, kv := range []string{"GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat", "GIT_EDITOR=true", "GIT_OPTIONAL_LOCKS=0"} {
		k, v, _ := strings.Cut(kv, "=")
		env = cleanenv.Set(env, k, v)
	}
	argv := append([]string{bin, "--no-pager", "-c", "color.ui=false", "-c", "core.quotepath=false"}, args...)
	o := proc.Run(ctx, proc.Job{Argv: argv, Dir: wd, Env: env, Timeout: timeout, MaxOutput: maxOutput})
	switch {
	case o.Err != nil:
		return "", "", o.Err
	case o.TimedOut:
		return o.Stdout.String(), o.Stderr.String(), fmt.Errorf("git timed out after %s and was killed", timeout)
	case o.Cancelled:
		return o.Stdout.String(), o.Stderr.String(), fmt.Errorf("cancelled")
	case !o.Exited:
		return o.Stdout.String(), o.Stderr.String(), fmt.Errorf("git was killed by signal %v", o.Signal)
	case o.Code != 0:
		return o.Stdout.String(), o.Stderr.String(), fmt.Errorf("git exited with code %d", o.Code)
	}
	return o.Stdout.String(), o.Stderr.String(), nil
}

// failed is a git failure the model reads: what git said.
func failed(what string, err error, stdout, stderr string) tools.Result {
	msg := strings.TrimSpace(stderr)
	if msg == "" {
		msg = strings.TrimSpace(stdout)
	}
	if msg != "" {
		return tools.Fail("%s failed: %v.\n%s", what, err, msg)
	}
	return tools.Fail("%s failed: %v.", what, err)
}

// stringList reads an array-of-strings argument.
func stringList(args tools.Args, key string) ([]string, error) {
	v, ok := args[key]
	if !ok || v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("parameter '%s' must be a list of paths", key)
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, ok := x.(string)
		if !ok || strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("parameter '%s' must hold non-empty paths", key)
		}
		out = append(out, s)
	}
	return out, nil
}

// pathArgs are the paths a call names (path, files).
func pathArgs(args tools.Args) []string {
	var out []string
	if p := args.String("path"); p != "" {
		out = append(out, p)
	}
	list, _ := stringList(args, "files")
	return append(out, list...)
}

// checkRef refuses a revision that git would read as an option.
func checkRef(ref string) error {
	if strings.HasPrefix(ref, "-") || strings.ContainsAny(ref, " \t\n") {
		return fmt.Errorf("ref %q is not a revision (it may not start with - or hold spaces)", ref)
	}
	return nil
}

// output is git's stdout for the model, capped.
func output(s string) string {
	if strings.TrimSpace(s) == "" {
		return code.NoOutput
	}
	return strings.TrimRight(s, "\n")
}
