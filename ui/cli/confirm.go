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
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// terminalConfirmer returns how a headless command answers confirmation
// requests: --yes approves; a terminal on stdin is asked; otherwise nobody
// can answer, so no confirmer is installed and the executor refuses the call
// (never a silent run).
func (a *app) terminalConfirmer(yes bool) tools.Confirmer {
	if yes {
		return tools.AllowAll
	}
	f, ok := a.io.In.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return newPromptConfirmer(a.io.In, a.io.Err)
}

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
	fmt.Fprint(p.out, "Allow this call? [y/N] (a: allow this tool for the rest of the session) ")
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
		case "a", "always":
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
