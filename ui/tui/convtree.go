package tui

import (
	"strings"

	"github.com/jarvis-workbench/jarvis/app/history"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/ui/format"
)

// countToolCalls counts the tool calls among msgs that have a result:
// what the status bar and the export call the session's tool calls
// (every attempt included, react's observations too).
func countToolCalls(msgs []sessions.Message) int {
	n := 0
	for _, m := range msgs {
		if sessions.IsToolResult(m) {
			n++
		}
	}
	return n
}

// itemsOf draws messages of a line as transcript items: a question each,
// the replies and tool calls that follow it as one answer, a note for
// each compaction. prev is the sequence number of the message before the
// first (0 from the start).
func itemsOf(msgs []sessions.Message, prev int) []item {
	var out []item
	var cur *assistantItem
	// The answer's run, as its total line counts it: the replies, their
	// usage with the tools' cost, and how long the run had gone on at its
	// last message (0 for a session stored before that was kept: no
	// time is shown rather than a wrong one).
	var turns int
	var run events.Usage
	var runSeconds float64
	end := func() {
		if cur == nil {
			return
		}
		run.WallSeconds = runSeconds
		cur.finish(run, turns)
		cur, turns, run, runSeconds = nil, 0, events.Usage{}, 0
	}
	for _, m := range msgs {
		a := history.Appended(m)
		if cur != nil {
			runSeconds = max(runSeconds, m.RunSeconds)
		}
		switch {
		case a.Compaction != nil:
			end()
			out = append(out, &compactLine{c: *a.Compaction})
		case history.IsQuestion(m):
			end()
			out = append(out, &userItem{text: m.Content, seq: m.Seq, images: history.EngineImages(m.Images)})
		case m.Role == sessions.RoleAssistant:
			if cur == nil {
				cur = newAssistantItem()
				cur.after = prev
				out = append(out, cur)
				runSeconds = m.RunSeconds
			}
			turns++
			if a.Message.Thinking != "" {
				cur.appendThinking(a.Message.Thinking)
				cur.thinking.final = true
			}
			cur.appendText(a.Message.Content)
			cur.text.final = true
			if m.Incomplete != "" {
				cur.note(format.IncompleteText(m.Incomplete), true)
			}
			if a.Usage != nil {
				cur.add(&lineBlock{kind: lineFooter, text: footerText(*a.Usage, a.Context)})
				u := *a.Usage
				u.ToolCostUSD = 0 // the tools' cost is their results'
				run.Add(u)
			}
			cur.text, cur.thinking, cur.group = nil, nil, nil
			for i, c := range a.Message.ToolCalls {
				var args map[string]any
				if parsed, msg := parseArgs(c.Arguments); msg == "" {
					args = parsed
				}
				cur.panel(c.Name, c.ID, i, args, 0).state = panelCancelled
			}
		case m.Role == sessions.RoleTool || a.Result != nil:
			if cur == nil {
				break
			}
			var args map[string]any
			if s := sessions.ObservationArgs(m); s != "" {
				args, _ = parseArgs(s)
			}
			p := cur.panel(m.ToolName, m.ToolCallID, 0, args, 0)
			if a.Result != nil {
				run.ToolCostUSD += a.Result.CostUSD
				p.state, p.latency, p.cost = statusOf(string(a.Result.Status)), a.Result.LatencySeconds, a.Result.CostUSD
				// A react observation shows as the tool's result, as it
				// did live.
				p.setResult(strings.TrimPrefix(a.Result.Content, sessions.ObservationPrefix))
				p.diff = a.Result.Diff()
			} else {
				p.state = panelOK
				p.setResult(m.Content)
			}
			p.version++
		}
		if m.Role != sessions.RoleNotice && m.Role != sessions.RoleError {
			prev = m.Seq
		}
	}
	end()
	return out
}
