package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/jarvis-workbench/jarvis/agent/scheduler"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/internal/table"
	"github.com/jarvis-workbench/jarvis/store/tasks"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// timeLayout is how the CLI shows a run time: in the task's zone, with the
// zone's abbreviation.
const timeLayout = "2006-01-02 15:04:05 MST"

func writeTaskTable(out io.Writer, list []tasks.Task, now time.Time) {
	w := table.New(out)
	fmt.Fprintln(w, "ID\tSTATUS\tSCHEDULE\tNEXT RUN\tLAST RUN\tSERVER\tPROMPT")
	legacy := false
	for _, t := range list {
		next := "-"
		if !t.NextRun.IsZero() {
			next = fmt.Sprintf("%s (%s)", scheduler.Relative(t.NextRun, now), t.NextRun.Format("2006-01-02 15:04 MST"))
		}
		legacy = legacy || t.Server.IsZero()
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Status, t.Describe(), next, lastRun(t, now), serverCell(t.Server), format.OneLine(t.Prompt, 50))
	}
	w.Flush()
	if legacy {
		fmt.Fprintln(out, "* any: the task was created before tasks recorded their server; it runs on the server of whichever jarvis process claims it.")
	}
}

// serverCell is a task's server in the table: the kind, the host without
// its scheme, and the model when the task names one.
func serverCell(s tasks.Server) string {
	if s.IsZero() {
		return "any*"
	}
	host := s.Host
	if _, rest, ok := strings.Cut(host, "://"); ok {
		host = rest
	}
	out := s.Engine + " " + host
	if s.Model != "" {
		out += " " + s.Model
	}
	return out
}

// lastRun says when the task last ran and how that went, or where it is
// running.
func lastRun(t tasks.Task, now time.Time) string {
	switch {
	case t.Running:
		return "running " + strings.TrimSuffix(scheduler.Relative(t.LastRun, now), " ago") + " in " + runningIn(t)
	case t.LastRun.IsZero():
		return "never"
	case t.LastOutcome == tasks.OutcomeNone:
		return scheduler.Relative(t.LastRun, now)
	}
	return fmt.Sprintf("%s, %s", scheduler.Relative(t.LastRun, now), outcomeWords(t.LastOutcome))
}

// outcomeWords writes an outcome for people ("timed out", not "timed_out").
func outcomeWords(o tasks.Outcome) string { return strings.ReplaceAll(string(o), "_", " ") }

// servingLine says which processes serve the database.
func servingLine(peers []tasks.Peer) string {
	if len(peers) == 0 {
		return "No jarvis process is serving this database: tasks run while 'jarvis scheduler start' (recommended) or the TUI runs."
	}
	var names []string
	for _, p := range peers {
		name := p.Process.String()
		if p.Dedicated {
			name += ", which owns the schedule"
		}
		names = append(names, name)
	}
	return "Served by " + strings.Join(names, "; ") + "."
}

// writeRuns shows a task and its runs, newest first: each run's time,
// outcome and duration, the process and server it ran on, its result or
// error and the tools it was denied.
func writeRuns(out io.Writer, t tasks.Task, runs []tasks.Run, limit time.Duration, now time.Time) {
	fmt.Fprintf(out, "Task %s (%s, %s): %s\n", t.ID, t.Status, t.Describe(), format.OneLine(t.Prompt, 80))
	server := t.Server.String()
	if t.Server.IsZero() {
		server = "none recorded (it runs on the server of whichever jarvis process claims it)"
	}
	fmt.Fprintf(out, "Server: %s · time limit %s\n", server, limitText(t, limit))
	if len(runs) == 0 {
		fmt.Fprintln(out, "No runs yet.")
		return
	}
	fmt.Fprintf(out, "Last %s, newest first:\n", format.Count(len(runs), "run"))
	loc := t.NextRun.Location()
	if l, _, err := tasks.LoadZone(t.TimeZone); err == nil {
		loc = l
	}
	for _, r := range runs {
		outcome, took := "running", scheduler.Relative(r.StartedAt, now)
		if r.Finished() {
			outcome = outcomeWords(r.OutcomeOrGuess())
			took = format.Latency(r.FinishedAt.Sub(r.StartedAt).Seconds())
		}
		kind := "by hand"
		if !r.Manual {
			kind = "for " + r.Slot.In(loc).Format(timeLayout)
		}
		fmt.Fprintf(out, "\nrun %d  %s  %s  %s  (%s)\n", r.ID, r.StartedAt.In(loc).Format(timeLayout), outcome, took, kind)
		if where := runWhere(r); where != "" {
			fmt.Fprintf(out, "  %s\n", where)
		}
		if r.Result != "" {
			fmt.Fprintf(out, "  result: %s\n", format.OneLine(r.Result, 300))
		}
		if r.Error != "" {
			fmt.Fprintf(out, "  error: %s\n", format.OneLine(r.Error, 300))
		}
		if note := r.DeniedNote(); note != "" {
			fmt.Fprintf(out, "  %s\n", note)
		}
	}
}

// runWhere names the process that ran a run and its server ("" for runs
// logged before runs recorded them).
func runWhere(r tasks.Run) string {
	var parts []string
	if !r.Process.IsZero() {
		parts = append(parts, "by "+r.Process.String())
	}
	if !r.Server.IsZero() {
		parts = append(parts, "on "+r.Server.String())
	}
	return strings.Join(parts, " ")
}

// schedPrinter writes one line per scheduler event on stderr.
type schedPrinter struct {
	mu sync.Mutex
	w  io.Writer
}

func newSchedPrinter(w io.Writer) *schedPrinter { return &schedPrinter{w: w} }

// Publish prints task starts and ends, skipped slots, notices and errors.
func (p *schedPrinter) Publish(e events.Event) {
	var line string
	ts := e.Time
	if ts.IsZero() {
		ts = time.Now()
	}
	stamp := ts.Format("15:04:05")
	switch {
	case e.Type == events.SchedulerTaskStart && e.Task != nil:
		line = fmt.Sprintf("%s ▶ task %s started: %s", stamp, e.Task.TaskID, format.OneLine(e.Task.Prompt, 80))
	case e.Type == events.SchedulerTaskEnd && e.Task != nil && e.Task.Success:
		line = fmt.Sprintf("%s ✓ task %s finished: %s", stamp, e.Task.TaskID, format.OneLine(e.Task.Result, 100))
	case e.Type == events.SchedulerTaskEnd && e.Task != nil && strings.HasPrefix(e.Task.Error, "skipped:"):
		line = fmt.Sprintf("%s ↷ task %s did not run: %s", stamp, e.Task.TaskID, format.OneLine(e.Task.Error, 200))
	case e.Type == events.SchedulerTaskEnd && e.Task != nil:
		line = fmt.Sprintf("%s ✗ task %s failed: %s", stamp, e.Task.TaskID, format.OneLine(e.Task.Error, 140))
	case e.Type == events.Notice:
		line = fmt.Sprintf("%s · %s", stamp, e.Text)
	case e.Type == events.Error:
		line = fmt.Sprintf("%s ! %s", stamp, e.Text)
	default:
		return
	}
	p.mu.Lock()
	fmt.Fprintln(p.w, safe.Text(line)) // prompts, results and errors are not jarvis's text
	p.mu.Unlock()
}
