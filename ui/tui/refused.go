package tui

import (
	"slices"
	"strings"

	"github.com/jarvis-workbench/jarvis/app/history"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/store/sessions"
)

// A message the model never read leaves no trace: a question refused as
// too big for the window (or sent to a model that cannot read its
// images) is taken out of the transcript, the conversation and the
// session (the agent saw to the last two), and given back to the person
// as it was: its words in the prompt, its images on the attachment row,
// with the refusal saying what to do.

// giveBack takes the running question out of the transcript: its images
// go back to the attachment row and, with text, its words back to the
// prompt, before anything typed there since.
func (m *model) giveBack(text bool) {
	q := m.run.question
	if i := m.transcript.indexOf(q); i >= 0 {
		m.transcript.truncate(i)
	}
	m.convo.images = append(slices.Clone(q.images), m.convo.images...)
	if text {
		typed := m.input.value()
		switch {
		case typed == "":
			m.input.set(q.text)
		case typed != q.text:
			m.input.set(q.text + "\n\n" + typed)
		}
	}
	m.run.current, m.run.question = nil, nil
	m.layout()
}

// refusedText is the note for a refused question: the refusal, and where
// the question and its images went.
func refusedText(err error, images int) string {
	where := "Nothing was sent or saved: your message is back in the prompt"
	switch images {
	case 0:
		where += "."
	case 1:
		where += ", and its image still attached."
	default:
		where += ", and its images still attached."
	}
	if err == nil {
		return where
	}
	why := sentence(explain(err))
	if !strings.HasSuffix(why, ".") && !strings.HasSuffix(why, "!") && !strings.HasSuffix(why, "?") {
		why += "." // "the run was cancelled" is a clause, not a sentence
	}
	return why + " " + where
}

// fillResults gives the run's tool panels their whole results: the
// events carry at most events.ResultLimit of each, the session all of
// it, and an expanded panel shows what the session has.
func (m *model) fillResults(msgs []sessions.Message) {
	if m.run.current == nil {
		return
	}
	for _, s := range msgs {
		a := history.Appended(s)
		if a.Result == nil || a.Message.Role != engine.RoleTool {
			continue
		}
		if p, ok := m.run.current.panels[s.ToolCallID]; ok && s.ToolCallID != "" && len(a.Result.Content) > len(p.result) {
			p.setResult(a.Result.Content)
			p.version++
		}
	}
}
