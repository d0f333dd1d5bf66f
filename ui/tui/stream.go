package tui

import (
	"strings"

	"github.com/jarvis-workbench/jarvis/ui/safe"
	"github.com/jarvis-workbench/jarvis/ui/tui/termtext"
)

// streamText holds the text of a reply while it streams and its wrapped
// lines, updated incrementally: a delta only re-wraps the source line it
// touches, so a 20,000-token answer costs the same per token at the end as
// at the start. Markdown is rendered once the reply is complete. What it
// stores is already stripped of escape sequences and control characters.
// Once the reply is complete (SetFinal) it keeps the final text alone,
// the string the conversation holds, and wraps it again only if asked for
// lines: a long session keeps its replies once, not once more per
// buffer.
type streamText struct {
	src strings.Builder
	// final is the whole text once it is complete; src is then empty.
	final  string
	frozen bool
	width  int
	// done are the wrapped lines of every complete source line; tail is the
	// source line still being written.
	done []string
	tail string
	// tailLines caches the wrapping of tail.
	tailLines []string
	tailDirty bool
	// version grows with every change, for the caches of renderings.
	version int
	// strip removes escape sequences, also those split between deltas.
	strip safe.Stream
}

// Append adds a delta.
func (s *streamText) Append(delta string) {
	s.add(s.strip.Text(delta))
}

// add appends text that is already clean.
func (s *streamText) add(delta string) {
	if delta == "" {
		return
	}
	if s.frozen { // more text after the end: a stream again
		s.frozen = false
		s.src.WriteString(s.final)
		s.final = ""
	}
	s.version++
	s.src.WriteString(delta)
	s.wrap(delta)
}

// wrap adds the wrapped lines of delta, appended to the text.
func (s *streamText) wrap(delta string) {
	for {
		i := strings.IndexByte(delta, '\n')
		if i < 0 {
			s.tail += delta
			break
		}
		line := s.tail + delta[:i]
		s.tail = ""
		if s.width > 0 {
			s.done = append(s.done, wrapLine(line, s.width)...)
		}
		delta = delta[i+1:]
	}
	s.tailDirty = true
}

// Set replaces the whole text (the authoritative text from turn_end, which
// also covers deltas a slow subscriber dropped).
func (s *streamText) Set(text string) {
	s.strip.Reset()
	text = safe.Text(text)
	if text == s.String() {
		return
	}
	s.src.Reset()
	s.final, s.frozen = "", false
	s.done, s.tail, s.tailLines = s.done[:0], "", nil
	s.version++
	s.add(text)
	s.tailDirty = true
}

// SetFinal sets the complete text and lets go of the stream's buffers: the
// text and its wrapped lines.
func (s *streamText) SetFinal(text string) {
	s.strip.Reset()
	text = safe.Text(text)
	if text != s.String() {
		s.version++
	}
	s.src = strings.Builder{}
	s.final, s.frozen = text, true
	s.done, s.tail, s.tailLines, s.tailDirty = nil, "", nil, false
	s.width = 0 // wrapped again if lines are asked for
}

// String returns the text so far.
func (s *streamText) String() string {
	if s.frozen {
		return s.final
	}
	return s.src.String()
}

// Count returns the number of wrapped lines at width.
func (s *streamText) Count(width int) int {
	s.prepare(width)
	if s.tail == "" {
		return len(s.done)
	}
	return len(s.done) + len(s.tailLines)
}

// Slice returns wrapped lines [from, to) at width, copying only those: a
// frame shows a screenful, not the whole answer.
func (s *streamText) Slice(width, from, to int) []string {
	n := s.Count(width)
	from, to = max(from, 0), min(to, n)
	if from >= to {
		return nil
	}
	out := make([]string, 0, to-from)
	for i := from; i < to; i++ {
		if i < len(s.done) {
			out = append(out, s.done[i])
		} else {
			out = append(out, s.tailLines[i-len(s.done)])
		}
	}
	return out
}

func (s *streamText) prepare(width int) {
	if width < 1 {
		width = 1
	}
	if width != s.width {
		s.width = width
		s.rewrap()
	}
	if s.tailDirty {
		s.tailLines = wrapLine(s.tail, width)
		s.tailDirty = false
	}
}

func (s *streamText) rewrap() {
	s.done, s.tail = s.done[:0], ""
	s.wrap(s.String())
	s.tailDirty = true
}

// wrapLine wraps one source line (no newlines, controls stripped) to width
// cells (see termtext.WrapLine).
func wrapLine(line string, width int) []string { return termtext.WrapLine(line, width) }
