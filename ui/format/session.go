package format

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jarvis-workbench/jarvis/store/sessions"
)

// SessionMarkdown renders a session as a markdown transcript: a header with
// the session's metadata, every message in order (thinking as a quote),
// each tool call with its arguments as a JSON block and its result, status,
// latency and cost, each reply's usage, and the session totals at the end.
// Times are shown in the location they carry (Store returns UTC).
func SessionMarkdown(s sessions.Session, msgs []sessions.Message) string {
	var b strings.Builder
	title := s.Title
	if title == "" {
		title = "Untitled session"
	}
	fmt.Fprintf(&b, "# %s\n\n", OneLine(title, 0))
	fmt.Fprintf(&b, "- Session: `%s`\n", s.ID)
	fmt.Fprintf(&b, "- Started: %s\n", stamp(s.CreatedAt))
	fmt.Fprintf(&b, "- Last activity: %s\n", stamp(s.UpdatedAt))
	if s.Model != "" || s.Agent != "" {
		var parts []string
		if s.Model != "" {
			parts = append(parts, "Model: "+s.Model)
		}
		if s.Agent != "" {
			parts = append(parts, "Agent: "+s.Agent)
		}
		fmt.Fprintf(&b, "- %s\n", strings.Join(parts, " · "))
	}
	if len(s.Tools) > 0 {
		fmt.Fprintf(&b, "- Tools: %s\n", strings.Join(s.Tools, ", "))
	}

	// Results are shown under the call they answer; a tool message whose
	// call is not in the transcript is shown where it stands.
	results := make(map[string]sessions.Message)
	calls := make(map[string]bool)
	for _, m := range msgs {
		if m.Role == sessions.RoleTool && m.ToolCallID != "" {
			results[m.ToolCallID] = m
		}
		for _, c := range m.ToolCalls {
			if c.ID != "" {
				calls[c.ID] = true
			}
		}
	}

	if len(msgs) == 0 {
		b.WriteString("\n_No messages yet._\n")
	}
	prev := s.CreatedAt
	for _, m := range msgs {
		if m.Role == sessions.RoleTool && calls[m.ToolCallID] {
			continue
		}
		when := ""
		if !m.CreatedAt.IsZero() {
			when = " · " + clock(m.CreatedAt, prev)
			prev = m.CreatedAt
		}
		switch m.Role {
		case sessions.RoleUser:
			fmt.Fprintf(&b, "\n## User%s\n\n%s\n", when, body(m.Content))
		case sessions.RoleSystem:
			fmt.Fprintf(&b, "\n## System%s\n\n%s\n", when, body(m.Content))
		case sessions.RoleAssistant:
			writeAssistant(&b, m, when, results)
		case sessions.RoleTool:
			b.WriteString("\n")
			writeToolCall(&b, m.ToolName, nil, &m)
		case sessions.RoleNotice:
			fmt.Fprintf(&b, "\n> **Note:** %s\n", quoteRest(m.Content))
		case sessions.RoleError:
			fmt.Fprintf(&b, "\n> **Error:** %s\n", quoteRest(m.Content))
		case sessions.RoleSummary:
			fmt.Fprintf(&b, "\n> **Compacted%s:** to fit the context window, the model was given this summary in place of the %s before the last %s (they are all above, as they were):\n>\n> %s\n",
				when, Count(m.Replaced, "message"), Count(m.Kept, "message"), quoteRest(m.Content))
		}
	}

	t := s.Totals
	b.WriteString("\n---\n\n## Totals\n\n")
	fmt.Fprintf(&b, "- Messages: %d\n", s.Messages)
	fmt.Fprintf(&b, "- Model turns: %d\n", t.Turns)
	fmt.Fprintf(&b, "- Tool calls: %d\n", t.ToolCalls)
	fmt.Fprintf(&b, "- Tokens: %s in · %s out\n", Tokens(t.PromptTokens), Tokens(t.OutputTokens))
	fmt.Fprintf(&b, "- Model cost: %s\n", Cost(t.CostUSD, false))
	fmt.Fprintf(&b, "- Tool cost: %s\n", Cost(t.ToolCostUSD, t.ToolCostEstimated))
	fmt.Fprintf(&b, "- Total cost: %s\n", Cost(t.CostUSD+t.ToolCostUSD, t.ToolCostEstimated))
	return b.String()
}

func writeAssistant(b *strings.Builder, m sessions.Message, when string, results map[string]sessions.Message) {
	model := ""
	if m.Model != "" {
		model = " · " + m.Model
	}
	fmt.Fprintf(b, "\n## Assistant%s%s\n", when, model)
	if th := strings.TrimSpace(m.Thinking); th != "" {
		b.WriteString("\n> **Thinking**\n>\n")
		for _, l := range strings.Split(th, "\n") {
			if l == "" {
				b.WriteString(">\n")
			} else {
				fmt.Fprintf(b, "> %s\n", l)
			}
		}
	}
	if c := strings.TrimSpace(m.Content); c != "" {
		fmt.Fprintf(b, "\n%s\n", c)
	}
	for _, c := range m.ToolCalls {
		b.WriteString("\n")
		if r, ok := results[c.ID]; ok && c.ID != "" {
			writeToolCall(b, c.Name, &c, &r)
		} else {
			writeToolCall(b, c.Name, &c, nil)
		}
	}
	if u := m.Usage; u != nil {
		fmt.Fprintf(b, "\n*%s*\n", usageLine(*u))
	}
}

// writeToolCall writes a call's heading, arguments and result. call is nil
// for a result whose call is not in the transcript; res is the tool message
// answering the call, nil when none was stored.
func writeToolCall(b *strings.Builder, name string, call *sessions.ToolCall, res *sessions.Message) {
	if name == "" && res != nil {
		name = res.ToolName
	}
	head := []string{fmt.Sprintf("### Tool call `%s`", name)}
	switch {
	case res == nil:
		head = append(head, "no result recorded")
	case res.Result != nil:
		r := res.Result
		head = append(head, statusWord(r.Status, r.Success), Latency(r.LatencySeconds), Cost(r.CostUSD, r.CostEstimated))
	}
	b.WriteString(strings.Join(head, " · "))
	b.WriteString("\n")
	if call != nil {
		args, lang := prettyJSON(call.Arguments)
		fmt.Fprintf(b, "\nArguments:\n\n%s\n", fenced(args, lang))
	}
	if res != nil {
		fmt.Fprintf(b, "\nResult:\n\n%s\n", fenced(res.Content, "text"))
	}
}

// statusWord names how a call ended.
func statusWord(status string, success bool) string {
	switch status {
	case "ok":
		return "ok"
	case "denied":
		return "denied"
	case "timeout":
		return "timed out"
	case "cancelled":
		return "cancelled"
	case "error":
		return "failed"
	}
	if success {
		return "ok"
	}
	return "failed"
}

// prettyJSON indents a JSON argument object, keeping the model's key order;
// text that is not JSON is returned as it is, to be shown as text.
func prettyJSON(s string) (string, string) {
	if strings.TrimSpace(s) == "" {
		return "{}", "json"
	}
	var out bytes.Buffer
	if err := json.Indent(&out, []byte(s), "", "  "); err != nil {
		return s, "text"
	}
	return out.String(), "json"
}

// fenced wraps text in a code fence longer than any backtick run inside
// it, so the text cannot close the block early.
func fenced(text, lang string) string {
	longest, run := 0, 0
	for _, r := range text {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + lang + "\n" + strings.TrimRight(text, "\n") + "\n" + fence
}

func body(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "_(empty)_"
	}
	return s
}

// quoteRest continues a blockquote over the lines of s.
func quoteRest(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n> ")
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.Format("2006-01-02 15:04:05 MST")
}

// clock shows a message's time, with the date when it differs from the
// previous one's.
func clock(t, prev time.Time) string {
	if y, m, d := t.Date(); !prev.IsZero() {
		if py, pm, pd := prev.In(t.Location()).Date(); y == py && m == pm && d == pd {
			return t.Format("15:04:05")
		}
	}
	return t.Format("2006-01-02 15:04:05")
}

// usageLine is a reply's footer, as the TUI shows it.
func usageLine(u sessions.Usage) string {
	parts := []string{fmt.Sprintf("%s in · %s out", Tokens(u.PromptTokens), Tokens(u.OutputTokens))}
	if u.TokensPerSec > 0 {
		parts = append(parts, Rate(u.TokensPerSec))
	}
	if u.WallSeconds > 0 {
		parts = append(parts, Latency(u.WallSeconds))
	} else if u.TotalSeconds > 0 {
		parts = append(parts, Latency(u.TotalSeconds))
	}
	parts = append(parts, Cost(u.CostUSD, false))
	return strings.Join(parts, " · ")
}
