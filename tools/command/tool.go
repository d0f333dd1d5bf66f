package command

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/code"
)

// Tool is a command as a tool.
type Tool struct {
	c    *Command
	spec tools.Spec
	// dir is where the command runs: its entry's cwd, else the tools'
	// working directory ("": jarvis's own).
	dir string
}

// New returns the tool that runs c in jarvis's working directory, or in
// its entry's cwd.
func New(c *Command) *Tool { return newIn(c, "") }

func newIn(c *Command, workDir string) *Tool {
	dir := c.cwd
	if dir == "" {
		dir = workDir
	}
	confirm := c.spec.Confirm == nil || *c.spec.Confirm
	waived := ""
	if !confirm {
		waived = "[[commands]] " + c.spec.Name + ": confirm = false"
	}
	return &Tool{c: c, spec: tools.Spec{
		WaivedBy:             waived,
		Name:                 c.spec.Name,
		Description:          strings.TrimSpace(c.spec.Description),
		Parameters:           c.schema,
		Category:             Category,
		RequiresConfirmation: confirm,
		TimeoutSeconds:       c.spec.Timeout,
		Metadata:             map[string]any{"argv": slices.Clone(c.spec.Argv), "program": c.path},
	}, dir: dir}
}

// Factory returns the registry factory of c: the tool runs in the
// dependencies' working directory (an evaluation case's scratch
// directory, say) unless its entry sets cwd.
func Factory(c *Command) tools.Factory {
	return func(d tools.Deps) (tools.Tool, error) { return newIn(c, d.WorkDir), nil }
}

// Register registers the tool of every command in r. A name r already
// holds is an error.
func Register(r *tools.Registry, cmds []*Command) error {
	for _, c := range cmds {
		if r.Has(c.spec.Name) {
			return fmt.Errorf("command %s: the name is already a tool's", c.spec.Name)
		}
		if err := r.Register(c.spec.Name, Factory(c)); err != nil {
			return err
		}
	}
	return nil
}

// Spec returns the tool's spec.
func (t *Tool) Spec() tools.Spec { return t.spec }

// Execute runs the program with the call's arguments.
func (t *Tool) Execute(ctx context.Context, args tools.Args) tools.Result {
	c := t.c
	values, err := c.values(args)
	if err != nil {
		return tools.Fail("%v", err)
	}
	argv, err := c.buildArgv(values)
	if err != nil {
		return tools.Fail("%v", err)
	}
	stdin, hasStdin := c.stdinText(values)
	out := c.run(ctx, t.dir, argv, stdin, hasStdin)
	meta := func(r tools.Result) tools.Result {
		r = r.WithMeta("argv", argv).WithMeta("stdout_bytes", out.stdout.Total()).WithMeta("stderr_bytes", out.stderr.Total())
		if out.stdout.Truncated() || out.stderr.Truncated() {
			r = r.WithMeta("truncated", true)
		}
		if out.exited {
			r = r.WithMeta("exit_code", out.code)
		}
		return r
	}
	switch {
	case ctx.Err() != nil:
		r := tools.Fail("The command was stopped before it finished (%s); its processes were killed.", stopReason(ctx.Err()))
		r.Status = tools.StatusCancelled
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			r.Status = tools.StatusTimeout
		}
		return meta(r)
	case out.err != nil:
		return tools.Fail("The command could not be run: %v", out.err)
	case !out.exited:
		return meta(tools.Fail("The command was killed by signal %d (%s).\n%s", int(out.signal), out.signal,
			code.FormatOutput(out.stdout.String(), out.stderr.String())))
	case !slices.Contains(c.success, out.code):
		return meta(tools.Fail("The command failed with exit status %d.\n%s", out.code,
			code.FormatOutput(out.stdout.String(), out.stderr.String())))
	}
	// The last newline ends the output; it says nothing to a model.
	text := strings.TrimSuffix(out.stdout.String(), "\n")
	if text == "" {
		text = code.NoOutput
	}
	return meta(tools.OK(text))
}

// GrantScope is the exact arguments: a command can do anything its
// parameters let it.
func (t *Tool) GrantScope(args tools.Args) tools.Scope {
	return tools.ExactArguments(args, "this exact command")
}

func stopReason(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "its time was up"
	}
	return "the run was cancelled"
}
