package fakewire

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestSplitTokens(t *testing.T) {
	cases := map[string][]string{
		"It is 51.":        {"It", " is", " 51."},
		"  lead":           {"  lead"},
		"a\n\nb":           {"a", "\n\nb"},
		"trailing space ":  {"trailing", " space", " "},
		"":                 nil,
		"one":              {"one"},
		"x  y\tz":          {"x", "  y", "\tz"},
		"15% of 340 is 51": {"15%", " of", " 340", " is", " 51"},
	}
	for in, want := range cases {
		got := SplitTokens(in)
		if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("SplitTokens(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCycleAndQuoted(t *testing.T) {
	tokens := []string{"a", ` "b"`, "\n"}
	if got := Cycle(tokens, 5); got != "a \"b\"\na \"b\"" {
		t.Errorf("Cycle = %q", got)
	}
	q := Quoted(tokens)
	if string(q[1]) != `" \"b\""` || string(q[2]) != `"\n"` {
		t.Errorf("Quoted = %q", q)
	}
	if got := Cycle(SplitTokens(FloodProse), len(SplitTokens(FloodProse))); got != FloodProse {
		t.Error("a whole cycle of the flood's tokens is not the flood's prose")
	}
}

func TestStatusWriterRemembersTheFirstStatus(t *testing.T) {
	rec := httptest.NewRecorder()
	w := &StatusWriter{ResponseWriter: rec}
	w.Write([]byte("body"))
	w.WriteHeader(http.StatusTeapot) // too late: the body went out as 200
	if w.Status != http.StatusOK {
		t.Errorf("status = %d, want 200 once the body was written", w.Status)
	}
	w2 := &StatusWriter{ResponseWriter: httptest.NewRecorder()}
	w2.WriteHeader(http.StatusNotFound)
	if w2.Status != http.StatusNotFound || http.NewResponseController(w2).Flush() != nil {
		t.Errorf("status = %d, or Flush does not reach the recorder", w2.Status)
	}
}

func TestWaitEndsEarlyOnCancelOrClose(t *testing.T) {
	if Wait(0, nil, nil) {
		t.Error("an elapsed wait reported the reply ended")
	}
	cancelled := make(chan struct{})
	close(cancelled)
	if !Wait(-1, cancelled, nil) {
		t.Error("a cancelled request did not end the wait")
	}
	closing := make(chan struct{})
	close(closing)
	if !Wait(time.Hour, nil, closing) {
		t.Error("a closing server did not end the wait")
	}
}
