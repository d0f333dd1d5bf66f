package memory

import (
	"slices"
	"testing"
)

func TestExcerptShowsTheMatchingLines(t *testing.T) {
	text := "# Notes\n\nThe weather was grey.\nWe kept running to the station.\n\nThe train runs hourly.\nNothing else."
	if got := Excerpt("run", text, 3); !slices.Equal(got, []string{"We kept running to the station.", "The train runs hourly."}) {
		t.Fatalf("got %q", got)
	}
	if got := Excerpt("Runs", text, 1); !slices.Equal(got, []string{"We kept running to the station."}) {
		t.Fatalf("n=1: %q", got)
	}
	// No line holds a term (a match by meaning): the first lines.
	if got := Excerpt("umbrella", text, 2); !slices.Equal(got, []string{"# Notes", "The weather was grey."}) {
		t.Fatalf("no match: %q", got)
	}
}
