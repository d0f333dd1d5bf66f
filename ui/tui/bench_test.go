package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
)

// longTranscript fills m with n messages (half questions, half answers
// with markdown and a tool panel), all finished, as after a long session.
func longTranscript(b testing.TB, m *model, n int) {
	for i := 0; i < n/2; i++ {
		run := fakeRun(m, fmt.Sprintf("Question %d: what is %d%% of 340?", i, i))
		args := map[string]any{"expression": fmt.Sprintf("%d/100*340", i)}
		answer := fmt.Sprintf("**%d%%** of 340 is `%d`.\n\n- checked with the calculator\n- rounded: no", i, i*340/100)
		feed(m, turnEnd(run, 1, "", 1), toolStart(run, "c", "calculator", args, 1),
			toolEnd(run, "c", "calculator", args, tools.StatusOK, "51.0", 0.0003),
			tok(run, answer), turnEnd(run, 2, answer, 0),
			events.Event{Type: events.RunEnd, Run: run, Turn: &events.TurnPayload{Turn: 2}})
		m.Update(runDoneMsg{runID: run.ID})
	}
	m.View() // the first frame renders and caches every visible item
}

// BenchmarkFrame2000Messages is the cost of one frame with a 2,000-message
// transcript: only the visible part is rendered, finished items come from
// their caches. A frame must stay far below 16 ms.
func BenchmarkFrame2000Messages(b *testing.B) {
	for _, scrolled := range []bool{false, true} {
		b.Run(fmt.Sprintf("scrolled=%t", scrolled), func(b *testing.B) {
			m := newTestModel(b, 120, 40)
			longTranscript(b, m, 2000)
			if scrolled {
				m.transcript.scroll(m.renderCtx(m.transcriptWidth()), -20000)
				m.View()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if m.View() == "" {
					b.Fatal("empty frame")
				}
			}
		})
	}
}

// BenchmarkKeypress2000Messages is a key typed into the prompt with a
// 2,000-message transcript: Update plus the frame it causes (target: far
// below 16 ms).
func BenchmarkKeypress2000Messages(b *testing.B) {
	m := newTestModel(b, 120, 40)
	longTranscript(b, m, 2000)
	key := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("a")}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Update(key)
		m.View()
		if i%100 == 99 {
			m.input.reset()
		}
	}
}

// BenchmarkStream20kTokens feeds a 20,000-token answer through the model as
// fast as it takes it, in the batches the bridge makes (one batch per 30 ms
// window; at 20,000 tokens in 0.3 s that is about 2,000 tokens per batch),
// rendering a frame after each batch and the final markdown at the end.
func BenchmarkStream20kTokens(b *testing.B) {
	const total, perBatch = 20_000, 2_000
	words := strings.Fields(strings.Repeat("The quick brown fox jumps over the lazy dog and keeps running. ", 2000))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		m := newTestModel(b, 120, 40)
		run := fakeRun(m, "stream test")
		var all strings.Builder
		b.StartTimer()
		for sent := 0; sent < total; sent += perBatch {
			var chunk strings.Builder
			for j := sent; j < sent+perBatch; j++ {
				chunk.WriteString(words[j%len(words)])
				if j%60 == 59 {
					chunk.WriteString("\n\n")
				} else {
					chunk.WriteByte(' ')
				}
			}
			all.WriteString(chunk.String())
			m.Update(eventsMsg{tok(run, chunk.String())})
			m.View()
		}
		m.Update(eventsMsg{turnEnd(run, 1, all.String(), 0), {Type: events.RunEnd, Run: run, Turn: &events.TurnPayload{Turn: 1}}})
		m.Update(runDoneMsg{runID: run.ID})
		m.View()
	}
	b.ReportMetric(float64(total*b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkToggles2000Messages is a key that changes how things are drawn
// (ctrl+e, ctrl+r, ctrl+t, a resize, /theme) with a 2,000-message
// transcript: Update plus the frame it causes (target: under 16 ms). Only
// the items on screen may be re-rendered for it.
func BenchmarkToggles2000Messages(b *testing.B) {
	cases := []struct {
		name string
		msgs []tea.Msg
	}{
		{"ctrl+e", []tea.Msg{tea.KeyMsg{Type: tea.KeyCtrlE}}},
		{"ctrl+r", []tea.Msg{tea.KeyMsg{Type: tea.KeyCtrlR}}},
		{"ctrl+t", []tea.Msg{tea.KeyMsg{Type: tea.KeyCtrlT}}},
		{"resize", []tea.Msg{tea.WindowSizeMsg{Width: 100, Height: 40}, tea.WindowSizeMsg{Width: 120, Height: 40}}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			m := newTestModel(b, 120, 40)
			longTranscript(b, m, 2000)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m.Update(c.msgs[i%len(c.msgs)])
				m.View()
			}
		})
	}
	b.Run("theme", func(b *testing.B) {
		m := newTestModel(b, 120, 40)
		longTranscript(b, m, 2000)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			m.setTheme([]string{"light", "dark"}[i%2])
			m.View()
		}
	})
}
