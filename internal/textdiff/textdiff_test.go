package textdiff

import (
	"strings"
	"testing"
)

func TestUnifiedCountsAndSummary(t *testing.T) {
	old := "a\nb\nc\n"
	new := "a\nB\nc\nd\n"
	d := Unified("x.go", old, new, true, true)
	if !strings.HasPrefix(d, "--- a/x.go\n+++ b/x.go\n@@") {
		t.Fatalf("diff = %q", d)
	}
	if a, r := Counts(d); a != 2 || r != 1 {
		t.Fatalf("counts = +%d -%d in\n%s", a, r, d)
	}
	if s := Summary(d, "x.go"); s != "+2 −1 x.go" {
		t.Fatalf("summary = %q", s)
	}
	if Unified("x", "same\n", "same\n", true, true) != "" {
		t.Fatal("equal texts must give no diff")
	}
}

func TestCreatedAndDeletedFilesAreLabelledDevNull(t *testing.T) {
	d := Unified("n.txt", "", "hi\n", false, true)
	if !strings.HasPrefix(d, "--- /dev/null\n+++ b/n.txt\n") {
		t.Fatalf("created: %q", d)
	}
	if d := Unified("e.txt", "", "", true, false); d != "--- a/e.txt\n+++ /dev/null\n" {
		t.Fatalf("an empty file deleted must still show: %q", d)
	}
}

func TestLinesKeepAddedLinesThatLookLikeHeaders(t *testing.T) {
	d := Unified("f", "-- x\n", "++ y\n", true, true)
	var kinds []Kind
	for _, l := range Lines(d) {
		kinds = append(kinds, l.Kind)
	}
	want := []Kind{KindHeader, KindHeader, KindHunk, KindRemoved, KindAdded}
	if len(kinds) != len(want) {
		t.Fatalf("kinds = %v for\n%s", kinds, d)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("kinds = %v, want %v for\n%s", kinds, want, d)
		}
	}
	if a, r := Counts(d); a != 1 || r != 1 {
		t.Fatalf("counts = +%d -%d", a, r)
	}
}
