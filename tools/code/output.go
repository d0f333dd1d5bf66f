package code

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// capBuffer keeps the first three quarters and the last quarter of what is
// written to it, up to limit bytes, and counts the rest. Keeping the end
// matters: a traceback comes last, after whatever flooded the stream.
// Memory stays at limit bytes however much is written.
type capBuffer struct {
	mu    sync.Mutex
	head  []byte
	tail  []byte // ring of tailCap bytes once full
	pos   int    // next write position in tail when full
	full  bool
	total int64
	limit int
}

func newCapBuffer(limit int) *capBuffer {
	if limit < 4 {
		limit = 4
	}
	return &capBuffer{limit: limit, head: make([]byte, 0, min(limit, 4096))}
}

func (b *capBuffer) headCap() int { return b.limit * 3 / 4 }
func (b *capBuffer) tailCap() int { return b.limit - b.headCap() }

// Write never fails, so a copy into it never stops early.
func (b *capBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	b.total += int64(n)
	if room := b.headCap() - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	tc := b.tailCap()
	if !b.full {
		if len(b.tail)+len(p) <= tc {
			b.tail = append(b.tail, p...)
			return n, nil
		}
		ring := make([]byte, tc)
		copy(ring, b.tail)
		b.pos = len(b.tail)
		b.tail = ring
		b.full = true
	}
	if len(p) >= tc {
		copy(b.tail, p[len(p)-tc:])
		b.pos = 0
		return n, nil
	}
	k := copy(b.tail[b.pos:], p)
	copy(b.tail, p[k:])
	b.pos = (b.pos + len(p)) % tc
	return n, nil
}

// Truncated reports whether bytes were dropped.
func (b *capBuffer) Truncated() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total > int64(len(b.head)+len(b.tail))
}

// Total is how many bytes were written.
func (b *capBuffer) Total() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

// String returns the kept text with a note where bytes were dropped. The
// cut points move to character boundaries and invalid UTF-8 is replaced,
// so the text is safe to hand to a model.
func (b *capBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	head := b.head
	var tail []byte
	if b.full {
		tail = append(append(make([]byte, 0, len(b.tail)), b.tail[b.pos:]...), b.tail[:b.pos]...)
	} else {
		tail = b.tail
	}
	omitted := b.total - int64(len(head)+len(tail))
	if omitted <= 0 {
		return strings.ToValidUTF8(string(head)+string(tail), "\uFFFD")
	}
	// Cut a character split at the end of the head or start of the tail.
	for cut := 0; cut < utf8.UTFMax && len(head) > 0; cut++ {
		if r, size := utf8.DecodeLastRune(head); r != utf8.RuneError || size != 1 {
			break
		}
		head = head[:len(head)-1]
		omitted++
	}
	for cut := 0; cut < utf8.UTFMax && len(tail) > 0 && !utf8.RuneStart(tail[0]); cut++ {
		tail = tail[1:]
		omitted++
	}
	var s strings.Builder
	s.WriteString(strings.ToValidUTF8(string(head), "\uFFFD"))
	if len(head) > 0 && head[len(head)-1] != '\n' {
		s.WriteByte('\n')
	}
	fmt.Fprintf(&s, "[output truncated: %d bytes omitted]\n", omitted)
	s.WriteString(strings.ToValidUTF8(string(tail), "\uFFFD"))
	return s.String()
}

// noOutput stands for a run that printed nothing, so a model does not wait
// for more.
const noOutput = "(no output)"

// formatOutput labels the two streams. Empty streams are left out; with
// nothing at all it returns noOutput.
func formatOutput(stdout, stderr string) string {
	var b strings.Builder
	section := func(label, text string) {
		if text == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("--- " + label + " ---\n")
		b.WriteString(text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteByte('\n')
		}
	}
	section("stdout", stdout)
	section("stderr", stderr)
	if b.Len() == 0 {
		return noOutput
	}
	return strings.TrimSuffix(b.String(), "\n")
}
