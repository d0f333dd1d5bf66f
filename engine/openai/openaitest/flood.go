package openaitest

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
)

// floodText is what Flood streams, token by token, over and over: prose
// with paragraph breaks, so a UI renders something like a real answer.
const floodText = `The quick brown fox jumps over the lazy dog, and the dog, being lazy, does not mind at all. ` +
	`Streaming a long answer exercises every layer between the socket and the screen: decoding, ` +
	`accumulating, publishing deltas and redrawing.

Each token here is one event on the wire, exactly as a server would send it, with the space ` +
	`before a word carried by the word. Numbers like 3.14159 and 2,718 appear too, as do ` +
	`punctuation marks; quotes "like these"; and a list:

- first item
- second item
- third item

`

// floodWords are the flood's tokens; floodQuoted the same already
// JSON-quoted, so writing an event costs a few appends.
var (
	floodWords  = splitTokens(floodText)
	floodQuoted = sync.OnceValue(func() [][]byte {
		out := make([][]byte, len(floodWords))
		for i, w := range floodWords {
			out[i], _ = json.Marshal(w)
		}
		return out
	})
)

// flood streams n content events built by hand in the bytes json.Marshal
// gives chunk, flushing only when the buffer fills, so the server side
// costs well under a microsecond per event.
func (p *player) flood(n int) {
	if !p.stream {
		p.content.WriteString(FloodText(n))
		p.sent += n
		return
	}
	tokens := floodQuoted()
	id, _ := json.Marshal(p.id)
	model, _ := json.Marshal(p.model)
	head := `data: {"id":` + string(id) + `,"object":"chat.completion.chunk","created":` +
		strconv.FormatInt(p.start.Unix(), 10) + `,"model":` + string(model) +
		`,"choices":[{"index":0,"delta":{"content":`
	const tail = `},"finish_reason":null}]}` + "\n\n"
	buf := make([]byte, 0, 32<<10)
	for i := range n {
		buf = append(buf, head...)
		buf = append(buf, tokens[i%len(tokens)]...)
		buf = append(buf, tail...)
		p.sent++
		last := p.plan.disconnectAfter > 0 && p.sent >= p.plan.disconnectAfter
		if len(buf) >= 28<<10 || last || i == n-1 {
			if !p.write(buf) {
				p.ended = true
				return
			}
			buf = buf[:0]
		}
		if last {
			p.disconnect()
			return
		}
	}
}

// FloodText returns the content n flood events add up to, for tests that
// check a flooded reply arrived whole.
func FloodText(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(floodWords[i%len(floodWords)])
	}
	return b.String()
}
