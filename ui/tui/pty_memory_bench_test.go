package tui_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	et "github.com/jarvis-workbench/jarvis/engine/enginetest"

	"github.com/jarvis-workbench/jarvis/engine"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// memStatus returns fields of a process's /proc status in bytes: the
// resident memory (VmRSS) and its anonymous part (RssAnon, what the
// process allocated, without the pages of its binary and of mapped
// files).
func memStatus(b testing.TB, pid int, fields ...string) []int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	out := make([]int64, len(fields))
	for _, l := range strings.Split(string(data), "\n") {
		for i, f := range fields {
			if rest, ok := strings.CutPrefix(l, f+":"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				out[i] = kb << 10
			}
		}
	}
	return out
}

// BenchmarkSessionMemory has a conversation of about 100,000 tokens of
// text (a token counted as 4 bytes) with the workbench in a real terminal:
// questions typed, markdown replies streamed from a loopback server. It
// reports how much resident memory jarvis gained per byte of the
// conversation's text, all of it and its anonymous part (target: at most
// 10). The same from the fifth reply on leaves out what is paid once (the
// markdown renderer and its styles, the first buffers), which the
// session's text does not grow. anon-MB-idle and anon-MB-end are the
// anonymous memory before the first question and after the last: work
// moved from start-up into the session (the code highlighter loads at the
// first code block) raises the per-byte figures while lowering these.
// BenchmarkTranscriptMemory in the package's own tests is the part of it
// the transcript holds. Every figure is taken with the workbench idle
// (after start-up or a reply, once it has returned freed memory); rss-MB-peak is the most it held at any
// moment (VmHWM), which a turn reaches.
func BenchmarkSessionMemory(b *testing.B) {
	answer, err := os.ReadFile(filepath.Join("testdata", "session_answer.md"))
	if err != nil {
		b.Fatal(err)
	}
	const textBytes = 400_000
	n := textBytes / len(answer)
	srv := ot.New(b)
	// A model whose maximum holds the whole conversation: at the stand-in's
	// default maximum (32,768) jarvis would cap --num-ctx to it and compact.
	srv.AddModel(ot.ModelSpec{Name: "qwen3:8b", Capabilities: []string{engine.CapCompletion, engine.CapTools}, ContextLength: 262144})
	for i := range n {
		srv.On(et.UserSays(fmt.Sprintf("question %d,", i))).Reply(et.Text(fmt.Sprintf("%s\n\nEND-%d.", answer, i)))
	}
	var rss, anon, rss5, anonStart, anonEnd, peak float64
	// jarvis returns freed memory a second after a run ends, and two seconds
	// after start (releaseMemoryAfter, startupSettles in idlememory.go).
	idle := func() { time.Sleep(1500 * time.Millisecond) }
	for range b.N {
		// A window that holds the whole conversation: nothing is compacted.
		term := startTerminal(asT(b), 120, 40, "--host", srv.URL, "--model", "qwen3:8b", "--tools", "none", "--num-ctx", "262144")
		term.waitFor(10*time.Second, "Ask anything", "●")
		time.Sleep(2500 * time.Millisecond) // start-up work is done
		pid := term.cmd.Process.Pid
		before := memStatus(b, pid, "VmRSS", "RssAnon")
		text, text5 := 0, 0
		var at5 []int64
		for i := range n {
			q := fmt.Sprintf("question %d, about the configuration parser", i)
			term.typeText(q + "\r")
			term.waitFor(20*time.Second, fmt.Sprintf("END-%d.", i), "ready")
			text += len(q) + len(answer)
			if i == 4 {
				idle()
				at5, text5 = memStatus(b, pid, "VmRSS"), text
			}
		}
		idle()
		after := memStatus(b, pid, "VmRSS", "RssAnon", "VmHWM")
		// The measure holds only if nothing was compacted away.
		if s := term.screen(); !strings.Contains(s, "of 262.1k tokens") {
			b.Fatalf("the header does not show the 262,144-token window the session needs:\n%s", s)
		}
		rss = float64(after[0]-before[0]) / float64(text)
		anon = float64(after[1]-before[1]) / float64(text)
		rss5 = float64(after[0]-at5[0]) / float64(text-text5)
		anonStart, anonEnd, peak = float64(before[1])/1e6, float64(after[1])/1e6, float64(after[2])/1e6
		term.cmd.Process.Kill()
	}
	b.ReportMetric(rss, "rss-B/text-B")
	b.ReportMetric(anon, "anon-B/text-B")
	b.ReportMetric(rss5, "rss-B/text-B-from-5th")
	// What the process holds before and after, whatever moved between
	// start-up and the session: the per-byte figures count only growth.
	b.ReportMetric(anonStart, "anon-MB-idle")
	b.ReportMetric(anonEnd, "anon-MB-end")
	b.ReportMetric(peak, "rss-MB-peak")
}
