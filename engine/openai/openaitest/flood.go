package openaitest

import (
	"encoding/json"
	"strconv"
	"sync"

	"github.com/jarvis-workbench/jarvis/engine/internal/fakewire"
)

// floodWords are the flood's tokens; floodQuoted the same already
// JSON-quoted, so writing an event costs a few appends.
var (
	floodWords  = fakewire.SplitTokens(fakewire.FloodProse)
	floodQuoted = sync.OnceValue(func() [][]byte { return fakewire.Quoted(floodWords) })
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
func FloodText(n int) string { return fakewire.Cycle(floodWords, n) }
