package table

import (
	"errors"
	"fmt"
	"testing"
)

// countingWriter records each Write it is given.
type countingWriter struct {
	writes []string
	err    error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	c.writes = append(c.writes, string(p))
	return len(p), nil
}

func TestARowsLayoutIsWrittenAtOnceOnFlush(t *testing.T) {
	out := &countingWriter{}
	w := New(out)
	fmt.Fprintln(w, "NAME\tCATEGORY\tDESCRIPTION")
	fmt.Fprintln(w, "calculator\tcompute\tEvaluates arithmetic.")
	fmt.Fprintln(w, "web_fetch\tweb\tFetches a page.")
	if len(out.writes) != 0 {
		t.Fatalf("wrote before Flush: %q", out.writes)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "NAME        CATEGORY  DESCRIPTION\n" +
		"calculator  compute   Evaluates arithmetic.\n" +
		"web_fetch   web       Fetches a page.\n"
	if len(out.writes) != 1 || out.writes[0] != want {
		t.Errorf("writes %q, want the one layout %q", out.writes, want)
	}
}

func TestFlushReportsTheWriteError(t *testing.T) {
	broken := errors.New("broken pipe")
	w := New(&countingWriter{err: broken})
	fmt.Fprintln(w, "a\tb")
	if err := w.Flush(); !errors.Is(err, broken) {
		t.Errorf("Flush returned %v, want the destination's error", err)
	}
}
