//go:build unix

package code

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCapBufferKeepsEverythingUnderTheLimit(t *testing.T) {
	b := newCapBuffer(100)
	for i := 0; i < 10; i++ {
		_, _ = b.Write([]byte("0123456789"))
	}
	if b.Truncated() || b.String() != strings.Repeat("0123456789", 10) {
		t.Fatalf("got %q (truncated %v)", b.String(), b.Truncated())
	}
}

func TestCapBufferKeepsHeadAndTail(t *testing.T) {
	b := newCapBuffer(40) // 30 bytes of head, 10 of tail
	var all bytes.Buffer
	for i := 0; i < 1000; i++ {
		chunk := []byte{byte('a' + i%26)}
		if i%7 == 0 {
			chunk = bytes.Repeat(chunk, 13) // writes larger than the tail, too
		}
		all.Write(chunk)
		_, _ = b.Write(chunk)
	}
	data := all.Bytes()
	want := string(data[:30]) + "\n[output truncated: " + strconv.Itoa(len(data)-40) + " bytes omitted]\n" + string(data[len(data)-10:])
	if got := b.String(); got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if !b.Truncated() || b.Total() != int64(len(data)) {
		t.Fatalf("truncated %v total %d", b.Truncated(), b.Total())
	}
}

func TestCapBufferCutsOnCharacterBoundaries(t *testing.T) {
	b := newCapBuffer(16)
	_, _ = b.Write([]byte(strings.Repeat("é", 100))) // 2 bytes each
	s := b.String()
	if !utf8.ValidString(s) || strings.ContainsRune(s, utf8.RuneError) {
		t.Fatalf("broken characters: %q", s)
	}
	if !strings.Contains(s, "[output truncated: ") {
		t.Fatalf("no note: %q", s)
	}
}

func TestFormatOutput(t *testing.T) {
	cases := []struct{ out, err, want string }{
		{"", "", "(no output)"},
		{"a\n", "", "--- stdout ---\na"},
		{"", "b", "--- stderr ---\nb"},
		{"a", "b\n", "--- stdout ---\na\n\n--- stderr ---\nb"},
	}
	for _, c := range cases {
		if got := formatOutput(c.out, c.err); got != c.want {
			t.Fatalf("formatOutput(%q, %q) = %q, want %q", c.out, c.err, got, c.want)
		}
	}
}

func TestPartialSuffix(t *testing.T) {
	m := []byte("<END>")
	cases := map[string]int{"abc": 0, "abc<": 1, "abc<EN": 3, "<END": 4, "x<E>": 0, "": 0}
	for in, want := range cases {
		if got := partialSuffix([]byte(in), m); got != want {
			t.Fatalf("partialSuffix(%q) = %d, want %d", in, got, want)
		}
	}
}

// A marker split across reads still ends the call, and what follows it
// belongs to the next call.
func TestCollectorSplitsAtMarkerAcrossReads(t *testing.T) {
	c := &collector{limit: 1024, between: newCapBuffer(1024)}
	marker := []byte("\x00end-1\x00")
	buf, seen := c.begin(marker)
	for _, chunk := range []string{"hello \x00en", "d", "-1", "\x00lat", "er"} {
		c.feed([]byte(chunk))
	}
	select {
	case <-seen:
	default:
		t.Fatal("the marker was not seen")
	}
	c.end()
	if buf.String() != "hello " {
		t.Fatalf("call output %q", buf.String())
	}
	next, _ := c.begin([]byte("\x00end-2\x00"))
	c.feed([]byte("!"))
	if got := next.String(); got != "later!" {
		t.Fatalf("next call output %q", got)
	}
}

// Text that starts like a marker but is not one is output.
func TestCollectorFalseStartIsOutput(t *testing.T) {
	c := &collector{limit: 1024, between: newCapBuffer(1024)}
	buf, _ := c.begin([]byte("\x00end-1\x00"))
	c.feed([]byte("a\x00en"))
	c.feed([]byte("X"))
	c.end()
	if got := buf.String(); got != "a\x00enX" {
		t.Fatalf("got %q", got)
	}
}
