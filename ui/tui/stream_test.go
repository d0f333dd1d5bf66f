package tui

import (
	"strings"
	"testing"
)

func TestStreamTextWrapsIncrementally(t *testing.T) {
	var s streamText
	allLines(&s, 10)
	for _, d := range []string{"hello ", "world, this is", " long\nsecond", " line\n", "third"} {
		s.Append(d)
	}
	want := []string{"hello", "world,", "this is", "long", "second", "line", "third"}
	if got := allLines(&s, 10); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
	// The same text wrapped in one go gives the same lines.
	var whole streamText
	whole.Append(s.String())
	if strings.Join(allLines(&whole, 10), "|") != strings.Join(want, "|") {
		t.Fatalf("incremental and whole wrapping differ: %q", allLines(&whole, 10))
	}
	// A new width re-wraps everything.
	if got := allLines(&s, 40); len(got) != 3 || got[0] != "hello world, this is long" {
		t.Fatalf("rewrap: %q", got)
	}
	s.Set("replaced\ntext")
	if got := allLines(&s, 40); strings.Join(got, "|") != "replaced|text" {
		t.Fatalf("set: %q", got)
	}
}

func TestStreamTextLinesNotOverwrittenByAppend(t *testing.T) {
	var s streamText
	s.Append("a\nb")
	first := allLines(&s, 20)
	saved := strings.Join(first, "|")
	s.Append("c\nd")
	if strings.Join(first, "|") != saved {
		t.Fatalf("earlier Lines result changed: %q", first)
	}
}

// allLines is every wrapped line at width.
func allLines(s *streamText, width int) []string { return s.Slice(width, 0, s.Count(width)) }
