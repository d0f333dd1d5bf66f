package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/jarvis-workbench/jarvis/app"
	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// commandPolicy is the confirmation policy of a headless command (source:
// tools.SourceAsk, tools.SourceToolsRun): the config's confirm settings,
// the always-approvals, --yes, then the person at the terminal on stdin.
// canAsk is false when stdin is not a terminal: nobody can answer, so a
// call that needs confirmation is denied (never a silent run). Every
// decision goes to the audit log. The database is touched only when a
// call needs confirmation.
func (a *cmdline) commandPolicy(source string, yes bool, approve ...string) (pol *tools.Policy, canAsk bool) {
	o := a.sharedPolicy()
	o.Source, o.Yes, o.Approve, o.Nobody = source, yes, approve, tools.ByNoTerminal
	if f, ok := a.io.In.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		o.Asker, canAsk = newPromptConfirmer(a.io.In, a.io.Err), true
	}
	return tools.NewPolicy(o), canAsk
}

// sharedPolicy is what every policy of this process shares: the config's
// confirm settings, the always-approvals and the audit log in the
// database. Without a database (a broken path) there are neither, and
// confirmation still works.
func (a *cmdline) sharedPolicy() tools.PolicyOptions {
	cfg, _ := a.loadConfig(config.Flags{})
	db, _ := a.database()
	return app.PolicyOptions(cfg, db)
}

// auditLog writes the policy's entries to the database's audit log.
type auditLog = app.AuditLog

// promptConfirmer asks on the terminal, one question at a time even when a
// turn's calls run in parallel. One goroutine reads the terminal's lines
// for the whole run, so a question abandoned by a cancelled run leaves no
// second reader behind. A line typed before the question was shown (typed
// ahead while the model worked) never answers it: the terminal's pending
// input is flushed when the question is asked, and a line read before
// then is dropped.
type promptConfirmer struct {
	mu    sync.Mutex
	out   io.Writer
	in    io.Reader
	lines chan typedLine
}

// typedLine is one line read from the terminal and when it was read.
type typedLine struct {
	text string
	at   time.Time
}

func newPromptConfirmer(in io.Reader, out io.Writer) *promptConfirmer {
	p := &promptConfirmer{out: out, in: in, lines: make(chan typedLine, 16)}
	go func() {
		r := bufio.NewReader(in)
		for {
			line, err := r.ReadString('\n')
			if line != "" || err == nil {
				p.lines <- typedLine{text: strings.ToLower(strings.TrimSpace(line)), at: time.Now()}
			}
			if err != nil {
				close(p.lines)
				return
			}
		}
	}()
	return p
}

// readAnswer waits for a line typed after asked.
func (p *promptConfirmer) readAnswer(ctx context.Context, asked time.Time) (string, bool, error) {
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(p.out)
			return "", false, ctx.Err()
		case l, ok := <-p.lines:
			if !ok {
				fmt.Fprintln(p.out)
				return "", false, nil // end of input: nobody said yes
			}
			if l.at.Before(asked) {
				continue // typed ahead, before the question was there
			}
			return l.text, true, nil
		}
	}
}

// ask prints question and waits for the answer to it: a line that was
// complete before the question began was typed ahead.
func (p *promptConfirmer) ask(ctx context.Context, question string) (string, bool, error) {
	flushInput(p.in)
	asked := time.Now()
	fmt.Fprint(p.out, question)
	return p.readAnswer(ctx, asked)
}

func (p *promptConfirmer) Confirm(ctx context.Context, req tools.ConfirmRequest) (tools.Decision, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return tools.Deny, err
	}
	name := safe.Text(req.Name())
	of := ""
	if req.Of > 1 {
		of = fmt.Sprintf(" (call %d of %d)", req.Position, req.Of)
	}
	// The name and description can come from an MCP server and the
	// arguments from a model; JSON escapes C0 controls but not C1 ones.
	fmt.Fprintf(p.out, "\nTool '%s' needs your approval%s.%s\n  %s\n  arguments:\n%s\n",
		safe.Text(req.Spec.Name), safe.Text(req.Because()), of, format.OneLine(safe.Text(req.Spec.Description), 100),
		indent(safe.Text(format.PrettyArgs(req.Arguments)), "    "))
	session := safe.Text(req.Scope.Of(req.Name()))
	always := ""
	if req.CanAlways {
		if req.Scope.AlwaysIsWide() {
			always = "; always: allow " + name + " with any arguments, in every session until revoked"
		} else {
			always = "; always: always allow " + safe.Text(req.Scope.AlwaysScope().Of(req.Name())) + ", in every session until revoked"
		}
	}
	s, ok, err := p.ask(ctx, fmt.Sprintf("Allow this call? [y/N] (a: allow %s for the rest of the session%s) ", session, always))
	if err != nil || !ok {
		return tools.Deny, err
	}
	switch s {
	case "y", "yes":
		return tools.AllowOnce, nil
	case "a":
		return tools.AllowSession, nil
	case "always":
		if !req.CanAlways {
			return tools.AllowSession, nil
		}
		if !req.Scope.AlwaysIsWide() {
			return tools.AllowAlways, nil
		}
		s, ok, err := p.ask(ctx, fmt.Sprintf("Let %s run without asking, with any arguments, in every session, until revoked ('jarvis approvals revoke %s')? [y/N] ", name, name))
		if err != nil || !ok {
			return tools.Deny, err
		}
		if s == "y" || s == "yes" {
			return tools.AllowAlways, nil
		}
		fmt.Fprintln(p.out, "Not always allowed; this call runs once.")
		return tools.AllowOnce, nil
	}
	return tools.Deny, nil
}

func indent(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}
