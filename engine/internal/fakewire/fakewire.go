// Package fakewire holds what the fake servers (ollamatest and
// openaitest) share below their wire formats: the text a flood streams,
// how scripted text is cut into tokens, and the response writer that
// remembers a request's status. Each fake keeps its own framing, since
// that is what it exists to get exactly right.
package fakewire

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// FloodProse is what a flood streams, token by token, over and over: prose
// with paragraph breaks, so a UI renders something like a real answer.
const FloodProse = `The quick brown fox jumps over the lazy dog, and the dog, being lazy, does not mind at all. ` +
	`Streaming a long answer exercises every layer between the socket and the screen: decoding, ` +
	`accumulating, publishing deltas and redrawing.

Each token here is one chunk on the wire, exactly as a server would send it, with the space ` +
	`before a word carried by the word. Numbers like 3.14159 and 2,718 appear too, as do ` +
	`punctuation marks; quotes "like these"; and a list:

- first item
- second item
- third item

`

// Quoted returns each token JSON-quoted, so a flood writes a chunk with a
// few appends instead of a json.Marshal.
func Quoted(tokens []string) [][]byte {
	out := make([][]byte, len(tokens))
	for i, t := range tokens {
		out[i], _ = json.Marshal(t)
	}
	return out
}

// Cycle returns the first n tokens of tokens repeated: the content a flood
// of n chunks adds up to.
func Cycle(tokens []string, n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(tokens[i%len(tokens)])
	}
	return b.String()
}

// SplitTokens cuts text before every run of whitespace that follows
// non-space text, the way tokenizers attach a leading space to words.
func SplitTokens(s string) []string {
	var out []string
	start := 0
	for i := 1; i < len(s); i++ {
		if isSpace(s[i]) && !isSpace(s[i-1]) {
			out = append(out, s[start:i])
			start = i
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

// StatusWriter remembers the status for the fake's record and log; Unwrap
// keeps http.ResponseController's Flush and Hijack working through it.
type StatusWriter struct {
	http.ResponseWriter
	Status int
}

func (w *StatusWriter) WriteHeader(code int) {
	if w.Status == 0 {
		w.Status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *StatusWriter) Write(p []byte) (int, error) {
	if w.Status == 0 {
		w.Status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *StatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Wait sleeps d (d < 0: until the end) and reports whether the reply must
// end instead: the client cancelled (cancelled closed) or the server is
// closing.
func Wait(d time.Duration, cancelled, closing <-chan struct{}) (ended bool) {
	var timer <-chan time.Time
	if d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-timer:
		return false
	case <-cancelled:
		return true
	case <-closing:
		return true
	}
}

// LogLine writes a stand-in's line for one request to w: the time, the
// request and its status, then what the stand-in adds (model, window,
// which rule answered), with control characters replaced so nothing a
// client or a script sent can drive the terminal the log goes to.
func LogLine(w io.Writer, method, path string, status int, detail string) {
	line := fmt.Sprintf("%s %s %s -> %d%s", time.Now().Format("15:04:05.000"), method, path, status, detail)
	fmt.Fprintln(w, strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '\uFFFD'
		}
		return r
	}, line))
}
