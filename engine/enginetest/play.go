package enginetest

import (
	"net/http"
	"time"

	"github.com/jarvis-workbench/jarvis/engine/internal/fakewire"
)

// Wire writes a reply in one server's format; each stand-in has one (and
// the OpenAI stand-in one per flavour's details). Play calls it step by
// step: every method writes through the Player, whose Frame paces the
// chunks and drops the connection where the rule says.
type Wire interface {
	// Text, Think and Raw write a chunk of content, of thinking and of
	// the model's raw output (see Raw).
	Text(p *Player, chunk string)
	Think(p *Player, chunk string)
	Raw(p *Player, piece string)
	// ToolCalls writes calls made together.
	ToolCalls(p *Player, calls []ScriptedCall)
	// Fail ends the reply with an error, as the server does at that point
	// of a reply (its status before the first chunk, an error inside the
	// stream after).
	Fail(p *Player, f Failure)
	// Flood writes n content chunks as fast as the connection takes
	// them (see Player.FloodFrames).
	Flood(p *Player, n int)
	// Finish ends a reply whose steps all played, or that Stop cut short.
	Finish(p *Player)
}

// Player plays one Plan through a Wire on one HTTP response: the parts of
// replying that do not depend on the format (the rule's pace, drops,
// delays and hangs, the client going away).
type Player struct {
	Plan Plan
	// BeforeDrop, when set, runs just before the connection is dropped,
	// so a stand-in records how the reply ended before the client can
	// see the end.
	BeforeDrop func()
	// Started is set by the wire once the 200 header is out: an error
	// after it goes inside the stream, and a drop flushes what was
	// written first.
	Started bool

	rc        *http.ResponseController
	cancelled <-chan struct{}
	closing   <-chan struct{}
	sent      int
	ended     bool
	stopped   bool
}

// NewPlayer prepares plan for the response w to r; closing is closed when
// the server shuts down, which ends waits and hangs.
func NewPlayer(plan Plan, w http.ResponseWriter, r *http.Request, closing <-chan struct{}) *Player {
	return &Player{Plan: plan, rc: http.NewResponseController(w), cancelled: r.Context().Done(), closing: closing}
}

// Play plays the steps in order, then finishes the reply, unless a step
// ended it (an error, a drop, a client that went away).
func (p *Player) Play(w Wire) {
	for _, st := range p.Plan.Steps {
		p.step(w, st)
		if p.ended {
			return
		}
		if p.stopped {
			break
		}
	}
	w.Finish(p)
}

func (p *Player) step(w Wire, st Step) {
	switch st.kind {
	case stepText, stepThink, stepRaw:
		write := w.Text
		switch st.kind {
		case stepThink:
			write = w.Think
		case stepRaw:
			write = w.Raw
		}
		for _, c := range st.chunks {
			if write(p, c); p.ended || p.stopped {
				return
			}
		}
	case stepToolCalls:
		w.ToolCalls(p, st.calls)
	case stepError:
		p.ended = true
		w.Fail(p, st.fail)
	case stepDelay:
		p.Wait(st.delay)
	case stepDisconnect:
		p.Disconnect()
	case stepHang:
		p.Wait(-1)
		p.ended = true
	case stepFlood:
		w.Flood(p, st.n)
	}
}

// Frame writes one chunk: it waits the rule's chunk delay, calls write,
// and drops the connection after the rule's DisconnectAfter-th chunk.
// write reports false when the client has gone. Frame reports whether
// the reply goes on.
func (p *Player) Frame(write func() bool) bool {
	if !p.Pace() {
		return false
	}
	if !write() {
		p.ended = true
		return false
	}
	p.Count(1)
	return !p.ended
}

// Pace waits the rule's chunk delay; false when the reply ended meanwhile.
func (p *Player) Pace() bool {
	if p.Plan.ChunkDelay > 0 {
		p.Wait(p.Plan.ChunkDelay)
	}
	return !p.ended
}

// Count counts n chunks sent (or gathered for a whole reply) and drops the
// connection once the rule's DisconnectAfter is reached.
func (p *Player) Count(n int) {
	p.sent += n
	if p.Plan.DisconnectAfter > 0 && p.sent >= p.Plan.DisconnectAfter {
		p.Disconnect()
	}
}

// Sent is the number of chunks written (or gathered) so far.
func (p *Player) Sent() int { return p.sent }

// Ended reports whether the reply is over without its end: an error, a
// drop, a client gone.
func (p *Player) Ended() bool { return p.ended }

// End marks the reply over: no more steps and no Finish.
func (p *Player) End() { p.ended = true }

// Stop plays no more steps but still finishes the reply (a full window,
// num_predict reached).
func (p *Player) Stop() { p.stopped = true }

// Wait sleeps d (d < 0: until the end), cut short when the client cancels
// or the server closes; either ends the reply.
func (p *Player) Wait(d time.Duration) {
	if fakewire.Wait(d, p.cancelled, p.closing) {
		p.ended = true
	}
}

// Disconnect drops the connection as a crash would: what was flushed
// stays delivered, the chunked body is never terminated.
func (p *Player) Disconnect() {
	p.ended = true
	if p.BeforeDrop != nil {
		p.BeforeDrop()
	}
	if p.Started {
		_ = p.rc.Flush()
	}
	conn, _, err := p.rc.Hijack()
	if err != nil {
		// Not an HTTP/1 connection: abort the response instead, which
		// the server also turns into a reset stream.
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// FloodFrames is a wire's streamed Flood: n chunks built by frame (which
// appends chunk i to buf) in the exact bytes the wire's encoder would
// produce, written by write in batches of about 28 KiB rather than one
// flush a chunk, so the server side costs well under a microsecond per
// chunk. write's flush says the batch must reach the client now (before a
// drop); it reports false when the client has gone. The rule's
// DisconnectAfter still counts single chunks.
func (p *Player) FloodFrames(n int, frame func(buf []byte, i int) []byte, write func(b []byte, flush bool) bool) {
	buf := make([]byte, 0, 32<<10)
	for i := range n {
		buf = frame(buf, i)
		p.sent++
		last := p.Plan.DisconnectAfter > 0 && p.sent >= p.Plan.DisconnectAfter
		if len(buf) >= 28<<10 || last || i == n-1 {
			if !write(buf, last) {
				p.ended = true
				return
			}
			buf = buf[:0]
		}
		if last {
			p.Disconnect()
			return
		}
	}
}
