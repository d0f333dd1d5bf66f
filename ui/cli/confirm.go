package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/term"

	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/config"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
	"github.com/jarvis-workbench/jarvis/ui/wire"
)

// commandPolicy is the confirmation policy of a headless command (source:
// tools.SourceAsk, tools.SourceToolsRun): the config's confirm settings,
// the always-approvals, --yes, then the person at the terminal on stdin.
// canAsk is false when stdin is not a terminal: nobody can answer, so a
// call that needs confirmation is denied (never a silent run). Every
// decision goes to the audit log. The database is touched only when a
// call needs confirmation.
func (a *app) commandPolicy(source string, yes bool) (pol *tools.Policy, canAsk bool) {
	o := a.sharedPolicy()
	o.Source, o.Yes, o.Nobody = source, yes, tools.ByNoTerminal
	if f, ok := a.io.In.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		o.Asker, canAsk = newPromptConfirmer(a.io.In, a.io.Err), true
	}
	return tools.NewPolicy(o), canAsk
}

// sharedPolicy is what every policy of this process shares: the config's
// confirm settings, the always-approvals and the audit log in the
// database. Without a database (a broken path) there are neither, and
// confirmation still works.
func (a *app) sharedPolicy() tools.PolicyOptions {
	cfg, _ := a.loadConfig(config.Flags{})
	db, _ := a.database()
	return wire.PolicyOptions(cfg, db)
}

// auditLog writes the policy's entries to the database's audit log.
type auditLog = wire.AuditLog

// promptConfirmer asks on the terminal, one question at a time even when a
// turn's calls run in parallel. One goroutine reads the terminal's lines
// for the whole run, so a question abandoned by a cancelled run leaves no
// second reader behind.
type promptConfirmer struct {
	mu    sync.Mutex
	out   io.Writer
	lines chan string
}

func newPromptConfirmer(in io.Reader, out io.Writer) *promptConfirmer {
	p := &promptConfirmer{out: out, lines: make(chan string)}
	go func() {
		r := bufio.NewReader(in)
		for {
			line, err := r.ReadString('\n')
			if line != "" || err == nil {
				p.lines <- strings.ToLower(strings.TrimSpace(line))
			}
			if err != nil {
				close(p.lines)
				return
			}
		}
	}()
	return p
}

func (p *promptConfirmer) Confirm(ctx context.Context, req tools.ConfirmRequest) (tools.Decision, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return tools.Deny, err
	}
	// The name and description can come from an MCP server and the
	// arguments from a model; JSON escapes C0 controls but not C1 ones.
	fmt.Fprintf(p.out, "\nTool '%s' needs your approval%s.\n  %s\n  arguments:\n%s\n",
		safe.Text(req.Spec.Name), safe.Text(req.Because()), format.OneLine(safe.Text(req.Spec.Description), 100),
		indent(safe.Text(format.PrettyArgs(req.Arguments)), "    "))
	always := ""
	if req.CanAlways {
		always = ", always: in every session until revoked"
	}
	fmt.Fprintf(p.out, "Allow this call? [y/N] (a: allow %s for the rest of the session%s) ", safe.Text(req.Name()), always)
	select {
	case <-ctx.Done():
		fmt.Fprintln(p.out)
		return tools.Deny, ctx.Err()
	case s, ok := <-p.lines:
		if !ok {
			fmt.Fprintln(p.out)
			return tools.Deny, nil // end of input: nobody said yes
		}
		switch s {
		case "y", "yes":
			return tools.AllowOnce, nil
		case "a":
			return tools.AllowSession, nil
		case "always":
			if req.CanAlways {
				return tools.AllowAlways, nil
			}
			return tools.AllowSession, nil
		}
		return tools.Deny, nil
	}
}

func indent(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}
