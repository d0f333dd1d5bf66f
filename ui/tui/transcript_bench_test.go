package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
)

// BenchmarkTranscriptMemory fills the workbench's model with a session of
// about 100,000 tokens of text (questions, markdown replies, tool calls
// and results; a token counted as 4 bytes), drawing a frame after each
// exchange as the screen would, and reports the heap it then holds per
// byte of that text: the transcript, its render caches and the model's
// copy of the conversation (BenchmarkSessionMemory measures the whole
// program in a terminal).
func BenchmarkTranscriptMemory(b *testing.B) {
	answer, err := os.ReadFile(filepath.Join("testdata", "session_answer.md"))
	if err != nil {
		b.Fatal(err)
	}
	const textBytes = 400_000
	var perByte float64
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		m := newTestModel(b, 120, 40)
		text := 0
		for i := 0; text < textBytes; i++ {
			q := fmt.Sprintf("Question %d: how does the configuration parser report a field that does not match its schema, and when does it retry?", i)
			answer := fmt.Sprintf("%s\n\nEND-%d.", answer, i)
			args := map[string]any{"path": fmt.Sprintf("internal/config/parse%d.go", i)}
			result := strings.Repeat(fmt.Sprintf("line of parse%d.go with some code in it;\n", i), 12)
			run := fakeRun(m, q)
			feed(m, turnEnd(run, 1, "", 1), toolStart(run, "c", "file_read", args, 1),
				toolEnd(run, "c", "file_read", args, tools.StatusOK, result, 0.0003),
				tok(run, answer), turnEnd(run, 2, answer, 0),
				events.Event{Type: events.RunEnd, Run: run, Turn: &events.TurnPayload{Turn: 2}})
			m.Update(runDoneMsg{runID: run.ID})
			m.View()
			text += len(q) + len(answer) + len(result) + len(args["path"].(string))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perByte = float64(after.HeapAlloc-before.HeapAlloc) / float64(text)
		runtime.KeepAlive(m)
	}
	b.ReportMetric(perByte, "heap-B/text-B")
}
