package format

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/jarvis-workbench/jarvis/internal/textdiff"
	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// ExportOptions change what SessionMarkdownWith writes.
type ExportOptions struct {
	// ImageLink returns where an image is, relative to the markdown file,
	// for an image link; nil (or "") names the image and its hash only.
	ImageLink func(sessions.Image) string
	// Changes are the files the tools changed in the session (oldest
	// first); the export lists them, turn by turn, with their diffs.
	Changes []sessions.Change
}

// SessionMarkdown renders a session as a markdown transcript: a header with
// the session's metadata, every message of the line the model sees in
// order (thinking as a quote, images by name), each tool call with its
// arguments as a JSON block and its result, status, latency and cost,
// each reply's usage, the other attempts and edits of a session with
// branches, and the session totals at the end. Times are shown in the
// location they carry (Store returns UTC). Escape sequences and control
// characters are stripped (ui/safe), newlines and tabs kept.
func SessionMarkdown(s sessions.Session, msgs []sessions.Message) string {
	return SessionMarkdownWith(s, msgs, ExportOptions{})
}

// SessionMarkdownWith is SessionMarkdown with links to the images.
func SessionMarkdownWith(s sessions.Session, msgs []sessions.Message, opts ExportOptions) string {
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
	if s.Parent != "" {
		fmt.Fprintf(&b, "- Forked from: `%s` (up to its message %d)\n", s.Parent, s.ParentSeq)
	}
	tree := sessions.TreeOf(s, msgs)
	path := msgs
	if len(s.Branches) > 0 {
		path = tree.CurrentPath()
		fmt.Fprintf(&b, "- Branches: %d (retries and edits); the transcript is the line the model sees, the others follow it\n", len(s.Branches)+1)
	}
	w := transcriptWriter{b: &b, opts: opts, prev: s.CreatedAt}
	if len(msgs) == 0 {
		b.WriteString("\n_No messages yet._\n")
	}
	w.messages(path)
	if len(s.Branches) > 0 {
		w.otherBranches(s, tree, path)
	}

	writeChanges(&b, sessions.GroupChanges(msgs, opts.Changes))

	t := s.Totals
	b.WriteString("\n---\n\n## Totals\n\n")
	fmt.Fprintf(&b, "- Messages: %d\n", s.Messages)
	fmt.Fprintf(&b, "- Model turns: %d\n", t.Turns)
	fmt.Fprintf(&b, "- Tool calls: %d (%s)\n", ToolCalls(msgs), ToolCallsMeaning)
	fmt.Fprintf(&b, "- Tokens: %s in · %s out\n", Tokens(t.PromptTokens), Tokens(t.OutputTokens))
	fmt.Fprintf(&b, "- Model cost: %s\n", Cost(t.CostUSD, false))
	fmt.Fprintf(&b, "- Tool cost: %s\n", Cost(t.ToolCostUSD, t.ToolCostEstimated))
	fmt.Fprintf(&b, "- Total cost: %s\n", Cost(t.CostUSD+t.ToolCostUSD, t.ToolCostEstimated))
	// Everything above but jarvis's own words came from models, tools and
	// people: a file that a terminal will show (cat, less -R, a markdown
	// viewer) gets none of their escape sequences. jarvis writes none.
	return safe.Text(b.String())
}

// ToolCallsMeaning says what ToolCalls counts, for the export and the
// help.
const ToolCallsMeaning = "every call with a result, other attempts and edits included"

// ToolCalls counts the tool calls of a session's messages that have a
// result: tool messages and react's observations, on every branch. The
// workbench's status bar counts the same.
func ToolCalls(msgs []sessions.Message) int {
	n := 0
	for _, m := range msgs {
		if sessions.IsToolResult(m) {
			n++
		}
	}
	return n
}

// IncompleteText says why a reply stopped before its end
// (sessions.Message.Incomplete), for the transcript and the export.
func IncompleteText(reason string) string {
	switch reason {
	case sessions.IncompleteCancelled:
		return "The reply was cancelled here; it is incomplete."
	case sessions.IncompleteLost:
		return "The connection to the server was lost here; the reply is incomplete."
	case sessions.IncompleteLength:
		return "The reply stopped at its length limit; it is incomplete."
	case sessions.IncompleteRefused:
		return "The server stopped the reply here (a content filter); it is incomplete."
	case sessions.IncompleteError:
		return "The server ended the reply here with an error; it is incomplete."
	}
	return "The reply is incomplete (" + reason + ")."
}

// transcriptWriter writes messages, each with its time (the date when it
// changes).
type transcriptWriter struct {
	b     *strings.Builder
	opts  ExportOptions
	prev  time.Time
	level string // the heading of a message: "##", or "####" inside a branch
}

// messages writes msgs in order. Results are shown under the call they
// answer; a tool message whose call is not among msgs is shown where it
// stands.
func (w *transcriptWriter) messages(msgs []sessions.Message) {
	b, level := w.b, w.level
	if level == "" {
		level = "##"
	}
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
	action := "" // the tool the last react step named
	for _, m := range msgs {
		if m.Role == sessions.RoleTool && calls[m.ToolCallID] {
			continue
		}
		if m.Role == sessions.RoleAssistant {
			action = reactAction(m.Content)
		}
		when := ""
		if !m.CreatedAt.IsZero() {
			when = " · " + clock(m.CreatedAt, w.prev)
			w.prev = m.CreatedAt
		}
		switch {
		case sessions.IsToolResult(m) && m.Role == sessions.RoleUser:
			// A react observation: the model reads it as a user
			// message, but it is the result of the call the step above
			// wrote.
			obs := m
			obs.Content = strings.TrimPrefix(m.Content, sessions.ObservationPrefix)
			if obs.ToolName == "" {
				obs.ToolName = action
			}
			var call *sessions.ToolCall
			if args := sessions.ObservationArgs(m); args != "" {
				call = &sessions.ToolCall{Name: obs.ToolName, Arguments: args}
			}
			b.WriteString("\n")
			writeToolCall(b, obs.ToolName, call, &obs)
			continue
		}
		switch m.Role {
		case sessions.RoleUser:
			fmt.Fprintf(b, "\n%s User%s\n\n%s\n", level, when, body(m.Content))
			w.images(m.Images)
		case sessions.RoleSystem:
			fmt.Fprintf(b, "\n%s System%s\n\n%s\n", level, when, body(m.Content))
		case sessions.RoleAssistant:
			writeAssistant(b, level, m, when, results)
		case sessions.RoleTool:
			b.WriteString("\n")
			writeToolCall(b, m.ToolName, nil, &m)
		case sessions.RoleNotice:
			fmt.Fprintf(b, "\n> **Note:** %s\n", quoteRest(m.Content))
		case sessions.RoleError:
			fmt.Fprintf(b, "\n> **Error:** %s\n", quoteRest(m.Content))
		case sessions.RoleSummary:
			fmt.Fprintf(b, "\n> **Compacted%s:** to fit the context window, the model was given this summary in place of the %s before the last %s (they are all above, as they were):\n>\n> %s\n",
				when, Count(m.Replaced, "message"), Count(m.Kept, "message"), quoteRest(m.Content))
		}
	}
}

// images writes a message's images: as image links when the export wrote
// the files, else by name, size and hash.
func (w *transcriptWriter) images(images []sessions.Image) {
	for _, im := range images {
		name := im.Name
		if name == "" {
			name = "image"
		}
		desc := fmt.Sprintf("%d×%d, %s", im.Width, im.Height, humanize.IBytes(uint64(im.Bytes)))
		if w.opts.ImageLink != nil {
			if link := w.opts.ImageLink(im); link != "" {
				fmt.Fprintf(w.b, "\n![%s](<%s>) *%s (%s)*\n", escapeAlt(name), link, escapeAlt(name), desc)
				continue
			}
		}
		short := im.SHA256
		if len(short) > 12 {
			short = short[:12]
		}
		fmt.Fprintf(w.b, "\n*Image: %s (%s, sha256 %s)*\n", escapeAlt(name), desc, short)
	}
}

// escapeAlt keeps a file name from ending an image's alt text or
// emphasis early.
func escapeAlt(s string) string {
	return strings.NewReplacer("[", `\[`, "]", `\]`, "*", `\*`, "_", `\_`, "\n", " ").Replace(s)
}

// otherBranches writes, after the transcript, what each other line of
// the conversation says after it leaves the one shown.
func (w *transcriptWriter) otherBranches(s sessions.Session, tree *sessions.Tree, shown []sessions.Message) {
	onPath := make(map[int]bool, len(shown))
	for _, m := range shown {
		onPath[m.Seq] = true
	}
	lines := append([]sessions.Branch{{ID: ""}}, s.Branches...)
	var parts []string
	for _, br := range lines {
		if br.ID == s.Branch {
			continue
		}
		var own []sessions.Message
		after := 0 // the message of the line before its first own one
		for _, m := range tree.Path(br.ID) {
			if !onPath[m.Seq] && m.Branch == br.ID {
				own = append(own, m)
			} else if len(own) == 0 {
				after = m.Seq
			}
		}
		if len(own) == 0 {
			continue
		}
		parts = append(parts, br.ID)
		head := "the first line of the conversation"
		switch br.Reason {
		case sessions.ReasonRetry:
			head = "an answer asked for again"
		case sessions.ReasonEdit:
			head = "an edited question"
		}
		where := "from the start"
		if after > 0 {
			where = fmt.Sprintf("after message %d (%s: “%s”)", after, tree.Messages[after-1].Role, OneLine(tree.Messages[after-1].Content, 60))
		}
		if len(parts) == 1 {
			w.b.WriteString("\n---\n\n## Other attempts and edits\n\nThese lines of the conversation are kept in the session; the model does not see them.\n")
		}
		fmt.Fprintf(w.b, "\n### %s, %s\n", capitalize(head), where)
		sub := transcriptWriter{b: w.b, opts: w.opts, prev: time.Time{}, level: "####"}
		sub.messages(own)
	}
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func writeAssistant(b *strings.Builder, level string, m sessions.Message, when string, results map[string]sessions.Message) {
	model := ""
	if m.Model != "" {
		model = " · " + m.Model
	}
	fmt.Fprintf(b, "\n%s Assistant%s%s\n", level, when, model)
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
	if m.Incomplete != "" {
		fmt.Fprintf(b, "\n> **Incomplete:** %s\n", IncompleteText(m.Incomplete))
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

// reactAction is the tool a react step names on its "Action:" line, ""
// when it names none.
func reactAction(text string) string {
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "Action:"); ok {
			return strings.Trim(strings.TrimSpace(rest), "`\"'[]")
		}
	}
	return ""
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

// writeChanges writes the section of the files the tools changed, each
// change with its diff.
func writeChanges(b *strings.Builder, groups []sessions.ChangeGroup) {
	if len(groups) == 0 {
		return
	}
	b.WriteString("\n---\n\n## Files changed\n")
	for _, g := range groups {
		head := fmt.Sprintf("Turn %d", g.Turn)
		if q := strings.TrimSpace(g.Question); q != "" {
			head += ": " + OneLine(q, 70)
		}
		fmt.Fprintf(b, "\n### %s\n", head)
		for _, c := range g.Changes {
			diff := textdiff.Unified(strings.TrimPrefix(c.Name(), "./"), c.Before, c.After, c.BeforeExists, c.AfterExists)
			line := fmt.Sprintf("\n- `%s` · %s · %s · %s", c.Name(), textdiff.Summary(diff, "lines"), c.Tool, stamp(c.At))
			if c.Undone() {
				line += " · undone " + stamp(c.UndoneAt)
			}
			fmt.Fprintf(b, "%s\n\n%s\n", line, fenced(diff, "diff"))
		}
	}
}
