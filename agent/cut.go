package agent

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/internal/textdiff"
)

// A tool result can be far larger than the window (a 1 MiB file, a web
// page): sent whole it would push everything else out, or the request
// would not fit at all. So a result that would take more than the view's
// share of the window reaches the model shortened, with a marker saying
// how much was left out and how to ask for more. The person, the session,
// the export and `ask --json` keep the whole result. The cut depends only
// on the result, the window and the calibration, so the same result is
// cut the same way every turn and the prompt's prefix stays identical for
// the server's cache. The marker says what is true on each side: the
// model sees a part, the person has the whole result.

// markerTokens is what the marker itself may take.
const markerTokens = 90

// cutResult returns m's content shortened to about limit calibrated
// tokens, with the marker. startLine is the line of its source the
// result starts at (file_read's start_line; 1 otherwise), so that the
// marker's advice continues exactly after what the model saw.
func cutResult(m engine.Message, limit int, ratio float64, startLine int) string {
	content := m.Content
	total := int(float64(EstimateTokens(content)) * ratio)
	keep := max(limit-markerTokens, limit/2)
	if total <= 0 || keep <= 0 {
		return content
	}
	n := int(float64(len(content)) * float64(keep) / float64(total))
	n = min(max(n, 0), len(content))
	for n > 0 && n < len(content) && !utf8.RuneStart(content[n]) {
		n--
	}
	// End on a line when one ends in the last fifth of what is kept, so
	// the model does not read half a line as if it were whole.
	if nl := strings.LastIndexByte(content[:n], '\n'); nl >= 0 && nl >= n*4/5 {
		n = nl + 1
	}
	kept := content[:n]
	keptLines, allLines := textdiff.LineCount(kept), textdiff.LineCount(content)
	partial := ""
	whole := keptLines
	if !strings.HasSuffix(kept, "\n") && keptLines > 0 {
		partial, whole = ", the last of them cut short", keptLines-1
	}
	var b strings.Builder
	b.Grow(n + 400)
	b.WriteString(kept)
	if !strings.HasSuffix(kept, "\n") {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\n[jarvis cut this result to fit your context window: you see its first %s of %s lines%s (about %s of %s tokens). The person has the whole result; you have only this part. To read more, %s.]",
		engine.GroupDigits(keptLines), engine.GroupDigits(allLines), partial, engine.GroupDigits(keep), engine.GroupDigits(total), moreHint(m, startLine+whole, keptLines))
	return b.String()
}

// moreHint says how to ask for the rest: file_read reads a line range
// from next, the first line not seen whole; other tools are asked for a
// smaller part.
func moreHint(m engine.Message, next, keptLines int) string {
	if m.ToolName == "file_read" {
		return fmt.Sprintf("call file_read again with start_line=%d and max_lines=%d", next, max(keptLines, 50))
	}
	return "call the tool again asking for a smaller part (a narrower query, a range, a filter)"
}

// callStartLine is the start_line the call that m answers asked for (1
// when it asked for none): a file_read result's first line is that line
// of the file. msgs are the messages before m.
func callStartLine(msgs []engine.Message, m engine.Message) int {
	if m.ToolName != "file_read" || m.ToolCallID == "" {
		return 1
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, c := range msgs[i].ToolCalls {
			if c.ID != m.ToolCallID {
				continue
			}
			var args struct {
				StartLine int `json:"start_line"`
			}
			if json.Unmarshal([]byte(c.Arguments), &args) == nil && args.StartLine > 1 {
				return args.StartLine
			}
			return 1
		}
	}
	return 1
}
