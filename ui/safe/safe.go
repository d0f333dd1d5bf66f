// Package safe makes text that jarvis did not write itself safe to show on
// a terminal.
//
// Models, tools, files, MCP servers and the database hand jarvis text. Sent
// to a terminal as it is, an escape sequence in it can clear the screen,
// set the window title or write the clipboard (OSC 52), an 8-bit C1 control
// can start such a sequence on its own, and a carriage return overwrites
// what was drawn before. Text removes every escape sequence and every
// control character except newline and tab, and replaces invalid UTF-8.
// Stream does the same for text that arrives in pieces (a model's tokens),
// whose sequences may be split between two pieces; Writer applies a Stream
// to everything written through it.
//
// Both the TUI and the headless commands use it, so what one shows the
// other shows too. Tabs are kept: where columns matter (the TUI's panels),
// the caller expands them once it knows the column.
package safe

import (
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi/parser"
)

// Text returns s without escape sequences (CSI, OSC, DCS, APC, PM, SOS,
// and the 8-bit forms) and without control characters other than newline
// and tab; invalid UTF-8 becomes U+FFFD. Ordinary text is returned as it is,
// without copying.
func Text(s string) string {
	if clean(s) {
		return s
	}
	var st Stream
	var b strings.Builder
	b.Grow(len(s))
	st.strip(&b, strings.ToValidUTF8(s, "\uFFFD"))
	return b.String()
}

// clean reports whether s needs no stripping: valid UTF-8 without control
// characters. It is the fast path for ordinary text.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\n' || c == '\t':
		case c < 0x20 || c == 0x7f:
			return false
		case c == 0xc2: // the first byte of U+0080–U+00BF, where the C1 controls are
			if i+1 < len(s) && s[i+1] < 0xa0 {
				return false
			}
		}
	}
	return utf8.ValidString(s)
}

// maxHeld bounds the bytes of broken UTF-8 a Stream keeps for the next
// piece; past it they are replaced at once.
const maxHeld = 4096

// Stream strips escape sequences and control characters from a text that
// arrives in pieces. A sequence split between pieces ("\x1b" in one, "[2J"
// in the next) is removed whole, and a character split between pieces is
// kept whole: the pieces' results joined are exactly Text of the pieces
// joined (unless a piece ends in more than maxHeld bytes of broken UTF-8,
// which are then replaced at once). The zero value is ready to use; a
// Stream is not safe for concurrent use.
type Stream struct {
	// held is the end of the last piece that is not yet a whole valid
	// character: the start of a character, or invalid bytes that the next
	// piece's invalid bytes would join into one U+FFFD.
	held []byte
	// state is where the escape-sequence parser stands between pieces.
	state parser.State
	// char collects a multi-byte character the parser is reading.
	char       [utf8.UTFMax]byte
	have, need int
}

// Text returns what of piece can be shown now. Ordinary text outside any
// sequence is returned as it is, without copying.
func (s *Stream) Text(piece string) string {
	if len(s.held) == 0 && s.state == parser.GroundState && clean(piece) {
		return piece
	}
	if len(s.held) > 0 {
		piece = string(s.held) + piece
		s.held = s.held[:0]
	}
	whole := completePrefix(piece)
	if len(piece)-whole <= maxHeld {
		s.held = append(s.held, piece[whole:]...)
		piece = piece[:whole]
	}
	var b strings.Builder
	b.Grow(len(piece))
	s.strip(&b, strings.ToValidUTF8(piece, "\uFFFD"))
	return b.String()
}

// End returns what was held back (the bytes of an unfinished character,
// as U+FFFD) and resets the stream for a new text.
func (s *Stream) End() string {
	var b strings.Builder
	if len(s.held) > 0 {
		s.strip(&b, strings.ToValidUTF8(string(s.held), "\uFFFD"))
	}
	s.Reset()
	return b.String()
}

// Reset forgets what was held back and any sequence in progress, for a
// text that replaces the one streamed so far.
func (s *Stream) Reset() {
	s.held = s.held[:0]
	s.state = parser.GroundState
	s.have, s.need = 0, 0
}

// completePrefix returns the length of the longest prefix of s that ends
// with a whole valid character (or is empty): what follows is broken or
// unfinished UTF-8 that the next piece may complete or extend.
func completePrefix(s string) int {
	end := len(s)
	// Only the last few bytes can be an unfinished character; a run of
	// invalid bytes before them is also held, so that it and the next
	// piece's invalid bytes become a single U+FFFD, as in Text.
	for end > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:end])
		if r != utf8.RuneError || size > 1 {
			break
		}
		end--
	}
	return end
}

// strip runs the terminal parser of charmbracelet/x/ansi over text (valid
// UTF-8), keeping printable characters, newlines and tabs. It is
// ansi.Strip with its state kept between calls, and without C0 controls,
// DEL and C1 controls in what it keeps.
func (s *Stream) strip(b *strings.Builder, text string) {
	for i := 0; i < len(text); i++ {
		c := text[i]
		if s.state == parser.Utf8State {
			s.char[s.have] = c
			s.have++
			if s.have < s.need {
				continue
			}
			if ch := s.char[:s.need]; ch[0] != 0xc2 || ch[1] >= 0xa0 { // not a C1 control
				b.Write(ch)
			}
			s.state, s.have, s.need = parser.GroundState, 0, 0
			continue
		}
		next, action := parser.Table.Transition(s.state, c)
		switch action {
		case parser.CollectAction:
			if next == parser.Utf8State {
				s.char[0], s.have, s.need = c, 1, charLen(c)
			}
		case parser.PrintAction:
			if c != 0x7f {
				b.WriteByte(c)
			}
		case parser.ExecuteAction:
			if c == '\n' || c == '\t' {
				b.WriteByte(c)
			}
		}
		s.state = next
	}
}

// charLen is the length of the UTF-8 character that starts with lead.
func charLen(lead byte) int {
	switch {
	case lead >= 0xf0:
		return 4
	case lead >= 0xe0:
		return 3
	}
	return 2
}

// Writer writes to an underlying writer what a Stream lets through of
// everything written to it. It is how a command that prints data makes its
// output safe on a terminal: wrap the terminal, print as usual. Writes may
// come from several goroutines.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
	s  Stream
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write strips p and writes the result. It reports p as written in full
// even when stripping left nothing to write.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if out := w.s.Text(string(p)); out != "" {
		if _, err := io.WriteString(w.w, out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes what is held back (an unfinished character, as U+FFFD); call
// it when the output ends.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if out := w.s.End(); out != "" {
		_, err := io.WriteString(w.w, out)
		return err
	}
	return nil
}
