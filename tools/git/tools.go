package git

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/files"
)

// readTimeout bounds git_status, git_diff and git_log; commitTimeout a
// commit, whose hooks (tests, linters) can take a while.
const (
	readTimeout   = 30 * time.Second
	commitTimeout = 120 * time.Second
)

// Status is git_status.
type Status struct{ tool }

// NewStatus builds git_status.
func NewStatus(deps tools.Deps) *Status {
	return &Status{newTool(tools.Spec{
		Name:           "git_status",
		Description:    "Show the git status of the working directory's repository: the branch and the files changed, staged and untracked (git status --short --branch).",
		Parameters:     tools.Params(),
		Category:       "git",
		TimeoutSeconds: readTimeout.Seconds() + 5,
	}, deps)}
}

// Refuse refuses when the working directory is past allowed_dirs.
func (s *Status) Refuse(tools.Args) *tools.Refusal { return s.refusePaths(nil) }

// Execute runs git status.
func (s *Status) Execute(ctx context.Context, _ tools.Args) tools.Result {
	out, errOut, err := s.git(ctx, readTimeout, "status", "--short", "--branch")
	if err != nil {
		return failed("git status", err, out, errOut)
	}
	return tools.OK(output(out))
}

// Diff is git_diff.
type Diff struct{ tool }

// NewDiff builds git_diff.
func NewDiff(deps tools.Deps) *Diff {
	return &Diff{newTool(tools.Spec{
		Name: "git_diff",
		Description: "Show changes in the working directory's git repository as a unified diff: unstaged changes by default, staged ones with staged=true, " +
			"or the changes since a ref (a commit, branch or tag). The diff of sensitive files (.env, keys) is left out.",
		Parameters: tools.Params(
			tools.BoolParam("staged", "Show the staged changes (git diff --cached)", false),
			tools.StringParam("ref", "Compare the working tree with this commit, branch or tag", false),
			tools.StringParam("path", "Limit the diff to this file or directory", false),
		),
		Category:       "git",
		TimeoutSeconds: readTimeout.Seconds() + 5,
	}, deps)}
}

// Refuse refuses a secret path, or one past allowed_dirs.
func (d *Diff) Refuse(args tools.Args) *tools.Refusal { return d.refusePaths(pathArgs(args)) }

// ConfirmationFor asks before reading a path outside the working directory.
func (d *Diff) ConfirmationFor(args tools.Args) (bool, string) {
	return d.outside(pathArgs(args), "reads the git diff of")
}

// GrantScope is the directory of the path.
func (d *Diff) GrantScope(args tools.Args) tools.Scope {
	return d.reach.DirScope(args.String("path"), true, "git diffs of %s (not its subfolders)")
}

// Execute runs git diff.
func (d *Diff) Execute(ctx context.Context, args tools.Args) tools.Result {
	argv := []string{"diff", "--no-ext-diff", "--no-textconv"}
	if args.Bool("staged") {
		argv = append(argv, "--cached")
	}
	if ref := args.String("ref"); ref != "" {
		if err := checkRef(ref); err != nil {
			return tools.Fail("Invalid arguments: %v.", err)
		}
		argv = append(argv, ref)
	}
	argv = append(argv, "--")
	if p := args.String("path"); p != "" {
		argv = append(argv, p)
	}
	out, errOut, err := d.git(ctx, readTimeout, argv...)
	if err != nil {
		return failed("git diff", err, out, errOut)
	}
	kept, left := withoutSecrets(out, d.reach.Secrets())
	text := output(kept)
	if strings.TrimSpace(kept) == "" && len(left) == 0 {
		text = "(no changes)"
	}
	if len(left) > 0 {
		text += "\n(The diff of " + strings.Join(left, ", ") + " is left out: sensitive files are never shown.)"
	}
	return tools.OK(text)
}

// withoutSecrets drops the sections of a git diff that change sensitive
// files, and names them.
func withoutSecrets(diff string, secrets *files.Secrets) (kept string, left []string) {
	var b strings.Builder
	skip := false
	for _, line := range strings.SplitAfter(diff, "\n") {
		if strings.HasPrefix(line, "diff --git ") {
			name := sectionName(line)
			skip = name != "" && secrets.Reason(name) != ""
			if skip {
				left = append(left, name)
			}
		}
		if !skip {
			b.WriteString(line)
		}
	}
	return b.String(), left
}

// sectionName is the new file's name of a "diff --git a/X b/X" line.
func sectionName(line string) string {
	line = strings.TrimSpace(strings.TrimPrefix(line, "diff --git "))
	if i := strings.LastIndex(line, " b/"); i >= 0 {
		return line[i+3:]
	}
	return ""
}

// Log is git_log.
type Log struct{ tool }

// NewLog builds git_log.
func NewLog(deps tools.Deps) *Log {
	return &Log{newTool(tools.Spec{
		Name:        "git_log",
		Description: "Show the latest commits of the working directory's git repository: hash, author, date and subject, newest first.",
		Parameters: tools.Params(
			tools.IntegerParam("count", "How many commits (default 10, at most 100)", false),
			tools.StringParam("path", "Only commits that changed this file or directory", false),
		),
		Category:       "git",
		TimeoutSeconds: readTimeout.Seconds() + 5,
	}, deps)}
}

// Refuse refuses a secret path, or one past allowed_dirs.
func (l *Log) Refuse(args tools.Args) *tools.Refusal { return l.refusePaths(pathArgs(args)) }

// ConfirmationFor asks before reading a path outside the working directory.
func (l *Log) ConfirmationFor(args tools.Args) (bool, string) {
	return l.outside(pathArgs(args), "reads the git log of")
}

// GrantScope is the directory of the path.
func (l *Log) GrantScope(args tools.Args) tools.Scope {
	return l.reach.DirScope(args.String("path"), true, "git logs of %s (not its subfolders)")
}

// Execute runs git log.
func (l *Log) Execute(ctx context.Context, args tools.Args) tools.Result {
	n, ok, err := args.Int("count")
	switch {
	case err != nil:
		return tools.Fail("Invalid arguments: %v.", err)
	case !ok:
		n = 10
	case n < 1 || n > 100:
		return tools.Fail("Invalid arguments: count must be between 1 and 100, got %d.", n)
	}
	argv := []string{"log", "-n", strconv.Itoa(n), "--date=iso-strict", "--format=%h %ad %an%n    %s"}
	if p := args.String("path"); p != "" {
		argv = append(argv, "--", p)
	}
	out, errOut, err := l.git(ctx, readTimeout, argv...)
	if err != nil {
		return failed("git log", err, out, errOut)
	}
	if strings.TrimSpace(out) == "" {
		return tools.OK("(no commits)")
	}
	return tools.OK(output(out))
}

// Commit is git_commit.
type Commit struct{ tool }

// NewCommit builds git_commit.
func NewCommit(deps tools.Deps) *Commit {
	c := &Commit{newTool(tools.Spec{
		Name: "git_commit",
		Description: "Commit in the working directory's git repository with a message. With files, those files are added and only they are committed; " +
			"without, what is staged is committed. The user sees the message and the files and approves. Your git configuration and hooks apply.",
		Parameters: tools.Params(
			tools.StringParam("message", "The commit message", true),
			tools.StringListParam("files", "Paths to add and commit (default: what is staged)", false),
		),
		Category:             "git",
		RequiresConfirmation: true,
		TimeoutSeconds:       commitTimeout.Seconds() + 5,
	}, deps)}
	// Signing (gpg, ssh) needs its agents.
	c.env = []string{"GNUPGHOME", "GPG_TTY", "SSH_AUTH_SOCK"}
	return c
}

// Refuse refuses a secret file, or one past allowed_dirs.
func (c *Commit) Refuse(args tools.Args) *tools.Refusal { return c.refusePaths(pathArgs(args)) }

// ConfirmationFor names what is committed (every call asks).
func (c *Commit) ConfirmationFor(args tools.Args) (bool, string) {
	list, _ := stringList(args, "files")
	if ok, why := c.outside(list, "commits"); ok {
		return true, why
	}
	if len(list) == 0 {
		return true, "commits what is staged"
	}
	return true, fmt.Sprintf("commits %d file%s", len(list), map[bool]string{true: "", false: "s"}[len(list) == 1])
}

// GrantScope is the exact commit.
func (c *Commit) GrantScope(args tools.Args) tools.Scope {
	return tools.ExactArguments(args, "this exact commit")
}

// Execute adds the files and commits.
func (c *Commit) Execute(ctx context.Context, args tools.Args) tools.Result {
	msg := args.String("message")
	if strings.TrimSpace(msg) == "" {
		return tools.Fail("The commit message is empty.")
	}
	list, err := stringList(args, "files")
	if err != nil {
		return tools.Fail("Invalid arguments: %v.", err)
	}
	if len(list) > 0 {
		if out, errOut, err := c.git(ctx, readTimeout, append([]string{"add", "--"}, list...)...); err != nil {
			return failed("git add", err, out, errOut)
		}
	}
	argv := []string{"commit", "-m", msg}
	if len(list) > 0 {
		argv = append(argv, "--")
		argv = append(argv, list...)
	}
	out, errOut, err := c.git(ctx, commitTimeout, argv...)
	if err != nil {
		return failed("git commit", err, out, errOut)
	}
	hash, _, _ := c.git(ctx, readTimeout, "rev-parse", "--short", "HEAD")
	r := tools.OK(output(out))
	if h := strings.TrimSpace(hash); h != "" {
		r = r.WithMeta("commit", h)
	}
	return r
}
