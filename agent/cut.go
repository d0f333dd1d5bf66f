package agent

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jarvis-workbench/jarvis/engine"
)

// A tool result can be far larger than the window (a 1 MiB file, a web
// page): sent whole it would push everything else out, or the request
// would not fit at all. So a result that would take more than the view's
// share of the window reaches the model shortened, with a marker saying
// how much was left out and how to ask for more. The person, the session,
// the export and `ask --json` keep the whole result. The cut depends only
// on the result, the window and the calibration, so the same result is
// cut the same way every turn and the prompt's prefix stays identical for
// the server's cache.

// markerTokens is what the marker itself may take.
const markerTokens = 90

// cutResult returns m's content shortened to about limit calibrated
// tokens, with the marker.
func cutResult(m engine.Message, limit int, ratio float64) string {
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
	keptLines, allLines := lineCount(kept), lineCount(content)
	var b strings.Builder
	b.Grow(n + 400)
	b.WriteString(kept)
	if !strings.HasSuffix(kept, "\n") {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\n[jarvis cut this result to fit the model's context window: you see the first %s of %s lines (about %s of %s tokens); the person sees all of it. To read more, %s.]",
		groupDigits(keptLines), groupDigits(allLines), groupDigits(keep), groupDigits(total), moreHint(m, keptLines, allLines))
	return b.String()
}

// moreHint says how to ask for the rest: file_read reads a line range;
// other tools are asked for a smaller part.
func moreHint(m engine.Message, keptLines, allLines int) string {
	if m.ToolName == "file_read" {
		next := keptLines + 1
		if keptLines > 0 && keptLines < allLines {
			next = keptLines // the last kept line may be partial
		}
		return fmt.Sprintf("call file_read again with start_line=%d and max_lines=%d", next, max(keptLines, 50))
	}
	return "call the tool again asking for a smaller part (a narrower query, a range, a filter)"
}

func lineCount(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}
