package agent

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
)

// The marker on a cut result tells the model the truth: what it sees,
// that the person has the whole result, and where to read on. For
// file_read, start_line is the first line the model did not see whole,
// counted in the file (after the lines the call skipped).
func TestTheCutMarkerContinuesWhereTheModelStopped(t *testing.T) {
	var file strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&file, "line %d of the log\n", i)
	}
	next := regexp.MustCompile(`start_line=(\d+)`)
	for _, c := range []struct {
		name string
		args string
		from int
	}{
		{"the whole file", `{"path":"app.log"}`, 1},
		{"from line 100", `{"path":"app.log","start_line":100}`, 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			content := file.String()
			if c.from > 1 {
				lines := strings.SplitAfter(content, "\n")
				content = strings.Join(lines[c.from-1:], "")
			}
			msgs := []engine.Message{
				{Role: engine.RoleUser, Content: "read the log"},
				{Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{{ID: "c1", Name: "file_read", Arguments: c.args}}},
				{Role: engine.RoleTool, ToolName: "file_read", ToolCallID: "c1", Content: content},
			}
			view := NewModelView(&fakeEngine{}, "m", ViewOptions{NumCtx: 4096})
			req, b, err := view.Prepare(context.Background(), Request{Messages: msgs})
			if err != nil || b.CutResults != 1 {
				t.Fatalf("cut %d, %v", b.CutResults, err)
			}
			sent := req.Messages[len(req.Messages)-1].Content
			seen, marker, ok := strings.Cut(sent, "\n[jarvis cut this result")
			if !ok {
				t.Fatalf("no marker: %.200q", sent)
			}
			if !strings.Contains(marker, "The person has the whole result; you have only this part.") || strings.Contains(marker, "sees all of it") {
				t.Fatalf("the marker says %q", marker)
			}
			m := next.FindStringSubmatch(marker)
			if m == nil {
				t.Fatalf("no start_line in %q", marker)
			}
			got, _ := strconv.Atoi(m[1])
			// The last line the model saw whole, as the file numbers it.
			lines := strings.Split(strings.TrimRight(seen, "\n"), "\n")
			last := lines[len(lines)-1]
			var n int
			if _, err := fmt.Sscanf(last, "line %d of the log", &n); err != nil || !strings.HasSuffix(last, "of the log") {
				t.Fatalf("the kept part ends in the middle of a line: %q", last)
			}
			if got != n+1 {
				t.Fatalf("start_line=%d, but the model saw up to line %d", got, n)
			}
			if want := fmt.Sprintf("first %d of", len(lines)); !strings.Contains(marker, want) {
				t.Fatalf("the marker %q does not say %q", marker, want)
			}
		})
	}
}

// A result cut in the middle of a line says so, and the advice starts at
// that line again.
func TestACutMidLineIsSaid(t *testing.T) {
	long := strings.Repeat("x", 40000) // one line, no newline
	m := engine.Message{Role: engine.RoleTool, ToolName: "file_read", Content: "first\n" + long}
	cut := cutResult(m, 500, 1, 1)
	if !strings.Contains(cut, "you see its first 2 of 2 lines, the last of them cut short") || !strings.Contains(cut, "start_line=2 ") {
		t.Fatalf("marker: %q", cut[strings.Index(cut, "[jarvis"):])
	}
}
