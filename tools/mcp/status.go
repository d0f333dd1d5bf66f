package mcp

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jarvis-workbench/jarvis/internal/table"
	"github.com/jarvis-workbench/jarvis/tools"
)

// State is where a server is in its life.
type State string

// States.
const (
	StateStarting State = "starting" // being started or connected (again)
	StateReady    State = "ready"    // connected, tools listed
	StateFailed   State = "failed"   // down; a restart is scheduled
	StateDisabled State = "disabled" // enabled = false in the config
	StateStopped  State = "stopped"  // the manager was closed
)

// ServerStatus is a snapshot of one server, for `jarvis mcp list`, the TUI's
// tools pane and status lines.
type ServerStatus struct {
	Name           string    `json:"name"`
	Transport      Transport `json:"transport"`
	Target         string    `json:"target"`
	State          State     `json:"state"`
	Trusted        bool      `json:"trusted"`
	TimeoutSeconds float64   `json:"timeout_seconds"`
	// Reason says why a failed server is down.
	Reason string `json:"reason,omitempty"`
	// LastError is the most recent problem, kept after the server recovers.
	LastError   string    `json:"last_error,omitempty"`
	LastErrorAt time.Time `json:"last_error_at,omitzero"`
	// NextRetry is when a failed server is started again.
	NextRetry time.Time `json:"next_retry,omitzero"`
	// Restarts counts the attempts after the first.
	Restarts int       `json:"restarts"`
	Since    time.Time `json:"since"`
	// StartTimeout bounds each start, in seconds (the server's
	// start_timeout or the manager's default).
	StartTimeout float64 `json:"start_timeout_seconds"`
	// Step says what a starting server is waiting for.
	Step string `json:"step,omitempty"`
	// ServerInfo is the name and version the server reported.
	ServerInfo string `json:"server_info,omitempty"`
	// Listed is true once the server's tools have been listed; Tools then
	// holds the latest listing (kept while the server restarts).
	Listed bool       `json:"listed"`
	Tools  []ToolInfo `json:"tools"`
	// Skipped names listed tools that could not be offered, and why.
	Skipped []string `json:"skipped,omitempty"`
}

// ToolInfo is one tool of a server.
type ToolInfo struct {
	Name     string     `json:"name"`
	Original string     `json:"original_name"`
	Spec     tools.Spec `json:"spec"`
}

// Available reports whether calls to the server's tools can run now.
func (s ServerStatus) Available() bool { return s.State == StateReady }

// Specs returns the specs of the server's tools, in order.
func (s ServerStatus) Specs() []tools.Spec {
	out := make([]tools.Spec, len(s.Tools))
	for i, t := range s.Tools {
		out[i] = t.Spec
	}
	return out
}

// Summary says in a few words how the server is, relative to now:
// "ready, 7 tools", "starting", "failed: REASON; retry in 4s", "disabled".
func (s ServerStatus) Summary(now time.Time) string {
	switch s.State {
	case StateReady:
		return "ready, " + plural(len(s.Tools), "tool")
	case StateFailed:
		if s.NextRetry.IsZero() {
			return "failed: " + s.Reason
		}
		return fmt.Sprintf("failed: %s; %s", s.Reason, s.retryIn(now))
	case StateStarting:
		if s.Restarts > 0 {
			return fmt.Sprintf("restarting (attempt %d)", s.Restarts+1)
		}
		return "starting"
	}
	return string(s.State)
}

// retryIn says when a failed server is tried again.
func (s ServerStatus) retryIn(now time.Time) string {
	d := s.NextRetry.Sub(now)
	if d <= 0 {
		return "retrying now"
	}
	return "retry in " + roundDuration(d)
}

// shortState is the STATUS cell of the table.
func (s ServerStatus) shortState(now time.Time) string {
	switch s.State {
	case StateFailed:
		if s.NextRetry.IsZero() {
			return "failed"
		}
		return fmt.Sprintf("failed (%s)", s.retryIn(now))
	case StateStarting:
		if s.Restarts > 0 {
			return "restarting"
		}
	}
	return string(s.State)
}

// RenderStatus writes the table of `jarvis mcp list`: one row per server
// with its transport, status, tool count, trust and last error.
func RenderStatus(w io.Writer, list []ServerStatus, now time.Time) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "No MCP servers configured. Add [[mcp.servers]] entries to the config file.")
		return err
	}
	tw := table.New(w)
	fmt.Fprintln(tw, "SERVER\tTRANSPORT\tSTATUS\tTOOLS\tCONFIRM\tLAST ERROR")
	for _, s := range list {
		count := "-"
		if s.Listed {
			count = fmt.Sprint(len(s.Tools))
		}
		confirm := "yes"
		if s.Trusted {
			confirm = "no (trusted)"
		}
		lastErr := "-"
		if s.LastError != "" {
			lastErr = oneLine(s.LastError, 100)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Transport, s.shortState(now), count, confirm, lastErr)
	}
	return tw.Flush()
}

// RenderTools writes `jarvis mcp tools SERVER`: a line on the server, then
// its tools exactly as a model is told about them (BuildToolDescriptions).
func RenderTools(w io.Writer, s ServerStatus, now time.Time) error {
	head := fmt.Sprintf("%s (%s: %s) %s", s.Name, s.Transport, s.Target, s.Summary(now))
	if s.ServerInfo != "" {
		head += " [" + s.ServerInfo + "]"
	}
	if _, err := fmt.Fprintln(w, head); err != nil {
		return err
	}
	if s.State != StateReady && s.LastError != "" && s.Reason != s.LastError {
		fmt.Fprintf(w, "last error: %s\n", s.LastError)
	}
	if s.Listed {
		if !s.Available() {
			fmt.Fprintln(w, "These tools were listed before the server went down; calls fail until it is back.")
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, tools.DescribeSpecs(s.Specs(), true, false))
	}
	for _, sk := range s.Skipped {
		fmt.Fprintf(w, "skipped %s\n", sk)
	}
	return nil
}

// RenderTree writes the servers with their tools below them, for the TUI's
// tools pane: a server line with its status, then one indented line per
// tool with the start of its description. width bounds each line (0: no
// limit).
func RenderTree(w io.Writer, list []ServerStatus, now time.Time, width int) error {
	for _, s := range list {
		line := fmt.Sprintf("%s (%s) %s", s.Name, s.Transport, s.Summary(now))
		if _, err := fmt.Fprintln(w, cut(line, width)); err != nil {
			return err
		}
		nameWidth := 0
		for _, t := range s.Tools {
			nameWidth = max(nameWidth, utf8.RuneCountInString(t.Name))
		}
		for _, t := range s.Tools {
			desc := oneLine(t.Spec.Description, 0)
			if !s.Available() {
				desc = "(unavailable) " + desc
			}
			line := fmt.Sprintf("  %-*s  %s", nameWidth, t.Name, desc)
			fmt.Fprintln(w, cut(line, width))
		}
	}
	return nil
}

// InspectOptions configure Inspect.
type InspectOptions struct {
	// Only names the servers to inspect (all when empty). A named server is
	// started even when the config disables it: asking for it is consent.
	Only []string
	// StartTimeout, when set, replaces every server's start_timeout: how
	// long each may take to start, answer the handshake and list its
	// tools.
	StartTimeout time.Duration
	// Progress, when set, is told what Inspect waits for: about once a
	// second while servers are starting, with the status of those still
	// starting (each with its Step, Since and StartTimeout); once with
	// stopping set when it stops them; and once with neither when it is
	// done. A caller on a terminal draws a status line from it.
	Progress func(starting []ServerStatus, stopping bool)
	// Options configure the manager.
	Options Options
}

// Inspect starts the servers, waits until each has come up or failed
// (each within its start timeout), returns their status with their tools,
// and stops them. It is what `jarvis mcp list` and `jarvis mcp tools` run.
func Inspect(ctx context.Context, cfg Config, opts InspectOptions) ([]ServerStatus, error) {
	if len(opts.Only) > 0 {
		var picked Config
		for _, name := range opts.Only {
			sc, err := cfg.Server(name)
			if err != nil {
				return nil, err
			}
			on := true
			sc.Enabled = &on
			picked.Servers = append(picked.Servers, sc)
		}
		cfg = picked
	}
	if opts.StartTimeout > 0 {
		servers := make([]ServerConfig, len(cfg.Servers))
		for i, sc := range cfg.Servers {
			sc.StartTimeout = opts.StartTimeout.Seconds()
			servers[i] = sc
		}
		cfg.Servers = servers
	}
	progress := opts.Progress
	if progress == nil {
		progress = func([]ServerStatus, bool) {}
	}
	mopts := opts.Options
	mopts.OneAttempt = true
	m, err := New(cfg, mopts)
	if err != nil {
		return nil, err
	}
	m.Start()
	// Each server's first attempt ends within its own start timeout; the
	// margin covers a process that takes its time to exit after failing.
	limit := m.StartWait()
	wctx, cancel := context.WithTimeout(ctx, limit)
	waitErr := m.WaitReadyReporting(wctx, func(starting []ServerStatus) { progress(starting, false) })
	cancel()
	list := m.Status()
	progress(nil, true)
	m.Close()
	progress(nil, false)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	for i := range list {
		list[i].NextRetry = time.Time{} // the servers are stopped: nothing is retried
		if waitErr != nil && list[i].State == StateStarting {
			list[i].Reason = fmt.Sprintf("did not finish starting within %s", limitString(limit))
			list[i].LastError = list[i].Reason
		}
	}
	return list, nil
}

// Failed reports whether an inspected server did not come up: it failed,
// or was still starting when the wait ended.
func (s ServerStatus) Failed() bool {
	return s.State == StateFailed || s.State == StateStarting
}

// Waiting says what a starting server is waiting for and for how long,
// relative to now: "waiting for its answer to the MCP handshake, 4s of
// 30s".
func (s ServerStatus) Waiting(now time.Time) string {
	step := s.Step
	if step == "" {
		step = "starting"
	}
	took := max(now.Sub(s.Since), 0).Truncate(time.Second)
	limit := time.Duration(s.StartTimeout * float64(time.Second))
	return fmt.Sprintf("%s, %s of %s", step, roundDuration(took), limitString(limit))
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// roundDuration formats a delay for people: 850ms, 4s, 1m30s.
func roundDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(time.Second).String()
	}
	d = d.Round(time.Second)
	if d%time.Minute == 0 {
		return strings.TrimSuffix(d.String(), "0s")
	}
	return d.String()
}

// limitString formats a configured limit exactly (1.5s, 300ms), and a
// whole number of seconds as roundDuration does (30s, 2m).
func limitString(d time.Duration) string {
	if d%time.Second == 0 {
		return roundDuration(d)
	}
	return d.String()
}

// oneLine collapses whitespace and cuts to max runes (0: no cut).
func oneLine(s string, max int) string {
	return cut(strings.Join(strings.Fields(s), " "), max)
}

func cut(s string, max int) string {
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}
