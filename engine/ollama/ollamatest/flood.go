package ollamatest

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/jarvis-workbench/jarvis/engine/internal/fakewire"
)

// floodWords are the flood's tokens, one per chunk as a real server
// streams them (by CountTokens: " quick" is " qui", "ck"); floodQuoted the
// same already JSON-quoted, so writing a chunk costs a few appends.
var (
	floodWords  = tokenPieces(fakewire.FloodProse)
	floodQuoted = sync.OnceValue(func() [][]byte { return fakewire.Quoted(floodWords) })
)

// flood streams n content chunks of one token each, built by hand in the
// exact bytes json.Marshal would produce, flushing only when the writer's
// buffer fills, so the server side costs well under a microsecond per
// chunk. A flood is a load generator: it counts in eval_count but is not
// held to the window or num_predict, so a benchmark of any length needs no
// window set up for it.
func (p *player) flood(n int) {
	if !p.stream {
		p.content.WriteString(FloodText(n))
		p.sent += n
		p.generated += n
		return
	}
	tokens := floodQuoted()
	model, _ := json.Marshal(p.model)
	var head, mid, tail string
	if p.generate {
		head, mid, tail = `{"model":`+string(model)+`,"created_at":"`, `","response":`, `,"done":false}`+"\n"
	} else {
		head, mid, tail = `{"model":`+string(model)+`,"created_at":"`, `","message":{"role":"assistant","content":`, `},"done":false}`+"\n"
	}
	buf := make([]byte, 0, 32<<10)
	for i := range n {
		buf = append(buf, head...)
		buf = time.Now().UTC().AppendFormat(buf, time.RFC3339Nano)
		buf = append(buf, mid...)
		buf = append(buf, tokens[i%len(tokens)]...)
		buf = append(buf, tail...)
		p.sent++
		p.generated++
		last := p.plan.disconnectAfter > 0 && p.sent >= p.plan.disconnectAfter
		if len(buf) >= 28<<10 || last || i == n-1 {
			if !p.write(buf, last) {
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

// FloodText returns the content n flood chunks add up to, for tests that
// check a flooded reply arrived whole.
func FloodText(n int) string { return fakewire.Cycle(floodWords, n) }
