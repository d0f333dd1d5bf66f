// Package format turns the numbers and values jarvis shows (latency, cost,
// tool arguments, result previews) into the short strings both the CLI and
// the TUI print, so the two always agree.
package format

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jarvis-workbench/jarvis/events"
)

// Latency formats seconds for people: 85µs, 12.3ms, 1.24s, 2m05s.
func Latency(seconds float64) string {
	d := time.Duration(seconds * float64(time.Second))
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	case d < time.Minute:
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
	m := int(d.Minutes())
	return fmt.Sprintf("%dm%02ds", m, int(d.Seconds())-60*m)
}

// Cost formats US dollars with four decimals ($0.0012); estimate marks a
// figure taken from a spec rather than measured (~$0.0012).
func Cost(usd float64, estimate bool) string {
	if estimate {
		return fmt.Sprintf("~$%.4f", usd)
	}
	return fmt.Sprintf("$%.4f", usd)
}

// Args renders arguments as compact JSON on one line, cut to max runes.
func Args(args map[string]any, max int) string {
	if len(args) == 0 {
		return "{}"
	}
	// An encoder, not json.Marshal: arguments are code and shell text,
	// where "<" must not turn into \u003c.
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		return fmt.Sprint(args)
	}
	// JSON escapes line breaks, so the text is one line already; the
	// spaces inside the values (code's indentation) are kept.
	return Cut(strings.TrimRight(sb.String(), "\n"), max)
}

// PrettyArgs renders arguments as indented JSON (the CLI's approval
// prompt): every character of a value is shown, escaped where it could
// not be seen.
func PrettyArgs(args map[string]any) string {
	if len(args) == 0 {
		return "{}"
	}
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		return fmt.Sprint(args)
	}
	return strings.TrimRight(sb.String(), "\n")
}

// ArgLine is a line of arguments laid out for reading: Indent, then
// Text. Code marks a line of a multi-line value, whose tab stops count
// from the start of Text (the value's own columns), and which a narrow
// screen breaks with a visible continuation mark rather than at a space.
type ArgLine struct {
	Indent, Text string
	Code         bool
}

// ArgLines lays a call's arguments out one per line, sorted by name, for
// the workbench's panels and dialogs: code and any other string that
// spans lines as its own lines, indented two spaces under "name:" with
// their own indentation kept, rather than a JSON string full of \n;
// everything else, and a string holding characters that would not be
// seen as text (controls, escapes), as "name: " and indented JSON. Tabs
// are left for the caller to expand at the width it draws.
func ArgLines(args map[string]any) []ArgLine {
	if len(args) == 0 {
		return []ArgLine{{Text: "(no arguments)"}}
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []ArgLine
	for _, k := range keys {
		if s, ok := args[k].(string); ok && (k == "code" || strings.Contains(s, "\n")) && visibleAsText(s) {
			out = append(out, ArgLine{Text: k + ":"})
			for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
				out = append(out, ArgLine{Indent: "  ", Text: l, Code: true})
			}
			continue
		}
		for i, l := range jsonLines(args[k]) {
			if i == 0 {
				l = k + ": " + l
			}
			out = append(out, ArgLine{Text: l})
		}
	}
	return out
}

// visibleAsText reports whether s shows every character it holds when
// drawn as lines of text: valid UTF-8 with no control characters but
// newlines and tabs.
func visibleAsText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f {
			return false
		}
	}
	return true
}

// jsonLines is v as indented JSON, '<' and '&' left readable.
func jsonLines(v any) []string {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return []string{fmt.Sprint(v)}
	}
	return strings.Split(strings.TrimRight(sb.String(), "\n"), "\n")
}

// OneLine collapses whitespace runs (newlines included) to single spaces and
// cuts the result to max runes with an ellipsis; max <= 0 means no cut.
func OneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	return Cut(s, max)
}

// Cut shortens s to max runes, ending with "…" when it was cut.
func Cut(s string, max int) string {
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	if max == 1 {
		return "…"
	}
	return string(r[:max-1]) + "…"
}

// Tokens formats a token count compactly: 950, 12.3k, 1.2M.
func Tokens(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d", n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1_000_000)
}

// Rate formats a generation speed: 37.8 tok/s, 12.3k tok/s, 3.8M tok/s. A
// reply of a few tokens timed in microseconds (a cached or scripted one)
// gives millions, which must still read as a number.
func Rate(tokensPerSec float64) string {
	switch {
	case tokensPerSec < 1000:
		return fmt.Sprintf("%.1f tok/s", tokensPerSec)
	case tokensPerSec < 1_000_000:
		return fmt.Sprintf("%.1fk tok/s", tokensPerSec/1000)
	}
	return fmt.Sprintf("%.1fM tok/s", tokensPerSec/1_000_000)
}

// Count says how many of something there are, in the singular for one:
// "1 turn", "3 turns", "0 tool calls". noun is the singular; its plural
// takes an s.
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Usage is a reply's or a run's footer: tokens in and out, speed, wall time
// and cost, where toolCost (what the run's tool calls cost) is added to the
// models' cost. Speed and time are left out when they were not measured.
func Usage(u events.Usage, toolCost float64) string {
	parts := []string{fmt.Sprintf("%s in · %s out", Tokens(u.PromptTokens), Tokens(u.OutputTokens))}
	if u.TokensPerSec > 0 {
		parts = append(parts, Rate(u.TokensPerSec))
	}
	// The prompt's time says whether the server reused its cache (a few
	// milliseconds) or read it all again; a load means the model was
	// (re)loaded for this reply.
	if u.PromptSeconds > 0 {
		parts = append(parts, "prompt "+Latency(u.PromptSeconds))
	}
	if u.LoadSeconds >= 0.05 {
		parts = append(parts, "load "+Latency(u.LoadSeconds))
	}
	if u.WallSeconds > 0 {
		parts = append(parts, Latency(u.WallSeconds))
	}
	parts = append(parts, Cost(u.CostUSD+toolCost, false))
	return strings.Join(parts, " · ")
}

// WindowUse says how much of a context window a prompt takes: "1.2k of
// 4.1k tokens (30%)", with "~" when the count is jarvis's estimate rather
// than the server's.
func WindowUse(prompt, window int, estimated bool) string {
	approx := ""
	if estimated {
		approx = "~"
	}
	pct := 0
	if window > 0 {
		pct = int(float64(prompt)*100/float64(window) + 0.5)
	}
	return fmt.Sprintf("%s%s of %s tokens (%d%%)", approx, Tokens(prompt), Tokens(window), pct)
}
