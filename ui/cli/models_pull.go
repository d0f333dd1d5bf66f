package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

func (a *cmdline) modelsPullCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "pull NAME",
		Short: "Download a model to the server (Ollama), showing its progress",
		Long: `Download a model to the Ollama server (NAME, or ENDPOINT/NAME for an
Ollama endpoint). On a terminal one line is redrawn with the layer being
downloaded, the total, the speed and the time left; into a pipe or a file the
progress is written as plain lines. ctrl+c stops the download: the server
keeps what it has, and pulling again resumes it.

OpenAI-compatible servers do not download models on request; they serve
the models they were started with.

Exit status: 0 downloaded, 1 the server refused or failed (its error is
shown as it said it), 130 interrupted.`,
		Example: `  jarvis models pull qwen3:8b
  jarvis models pull attic/llama3.2:1b`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			env, err := a.environment()
			if err != nil {
				return err
			}
			srv, model := env.lookup(args[0])
			if srv.Err != nil {
				return failErr("%v", srv.Err)
			}
			puller, ok := srv.Engine.(engine.Puller)
			if !ok {
				return failErr("the %s at %s does not download models on request: it serves the models it was started with (llama-server -m FILE, vllm serve MODEL, or LM Studio's model loader)", srv.Driver.Label, srv.Engine.Host())
			}
			p := newPullPrinter(a.io.Err, time.Now)
			ctx := cmd.Context()
			err = puller.Pull(ctx, model, p.progress)
			p.end()
			switch {
			case err == nil:
				p.done(srv.Ref(model))
				return nil
			case ctx.Err() != nil:
				p.stopped(srv.Ref(model))
				return err
			}
			var se *engine.ServerError
			if errors.As(err, &se) {
				// The server's words, as it said them: "pull model
				// manifest: file does not exist" for a name it lacks.
				return failErr("the server could not pull %s: %s", srv.Ref(model), se.Message)
			}
			return failErr("%v", err)
		},
	}
}

// pullPrinter shows a download's progress. On a terminal one line is
// redrawn (at most ten times a second) with the current layer, the total,
// the speed and the time left, and each finished layer and each step
// (manifest, verifying, writing) stays as a line of its own. Into a pipe or
// a file it writes plain lines: each step once, each layer when it starts,
// at every quarter and when it is done.
type pullPrinter struct {
	w     io.Writer
	tty   bool
	width int
	now   func() time.Time

	d        format.Download
	live     bool // a redrawn line is on the terminal
	drawn    time.Time
	status   string          // the last step written
	finished map[string]bool // layers written as finished
	quarter  map[string]int  // plain: the last quarter written per layer
}

// redrawEvery bounds how often the live line is redrawn.
const redrawEvery = 100 * time.Millisecond

func newPullPrinter(w io.Writer, now func() time.Time) *pullPrinter {
	p := &pullPrinter{w: w, now: now, width: 80, finished: map[string]bool{}, quarter: map[string]int{}}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty = true
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			p.width = cols
		}
	}
	return p
}

func (p *pullPrinter) progress(pp engine.PullProgress) {
	now := p.now()
	changed := p.d.Add(pp, now)
	if pp.Digest == "" || pp.Total <= 0 {
		if pp.Status != p.status {
			p.status = pp.Status
			p.line(pp.Status)
		}
		return
	}
	l, _ := p.d.Current()
	if l.Completed >= l.Total {
		if !p.finished[l.Digest] {
			p.finished[l.Digest] = true
			p.line("pulling " + format.LayerText(l))
		}
		return
	}
	if !p.tty {
		q := int(l.Completed * 4 / l.Total)
		if last, seen := p.quarter[l.Digest]; !seen || q > last {
			p.quarter[l.Digest] = q
			text := "pulling " + format.LayerText(l)
			if r := p.d.Rates(); r != "" && q > 0 {
				text += " · " + r
			}
			fmt.Fprintln(p.w, safe.Text(text))
		}
		return
	}
	if changed || now.Sub(p.drawn) >= redrawEvery {
		p.drawn = now
		fmt.Fprint(p.w, "\r"+format.Cut(safe.Text(p.d.Line()), p.width-1)+"\x1b[K")
		p.live = true
	}
}

// line writes a finished line, replacing the live one on a terminal. The
// server's words (statuses, digests) are stripped of sequences.
func (p *pullPrinter) line(text string) {
	if p.live {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.live = false
	}
	fmt.Fprintln(p.w, safe.Text(text))
}

// end clears the live line.
func (p *pullPrinter) end() {
	if p.live {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.live = false
	}
}

func (p *pullPrinter) done(ref string) {
	_, total := p.d.Totals()
	took := p.d.Elapsed(p.now())
	fmt.Fprintf(p.w, "%s is on the server (%s, %s).\n", safe.Text(ref), format.Bytes(total), format.Latency(took.Seconds()))
}

// stopped says what an interrupted download leaves: the server keeps the
// layers it has (in part), and pulling again resumes.
func (p *pullPrinter) stopped(ref string) {
	fmt.Fprintf(p.w, "jarvis: the download stopped after %s; the server keeps what it has, and 'jarvis models pull %s' resumes it.\n", p.d.Fetched(), safe.Text(ref))
}
