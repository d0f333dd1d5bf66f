package format

import (
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/engine"
)

func TestDownloadFollowsLayersSpeedAndTimeLeft(t *testing.T) {
	var d Download
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	if !d.Add(engine.PullProgress{Status: "pulling manifest"}, t0) || d.Line() != "pulling manifest" {
		t.Fatalf("manifest: %q", d.Line())
	}
	a, b := "sha256:aaaaaaaaaaaa1111", "sha256:bbbbbbbbbbbb2222"
	if !d.Add(engine.PullProgress{Status: "pulling aaaaaaaaaaaa", Digest: a, Total: 4_000_000_000}, t0) {
		t.Fatal("a new layer is a change")
	}
	if d.Add(engine.PullProgress{Status: "pulling aaaaaaaaaaaa", Digest: a, Total: 4_000_000_000, Completed: 1_000_000_000}, t0.Add(10*time.Second)) {
		t.Fatal("progress of a known layer is no change")
	}
	// Ollama pulls layers side by side: the second one appears meanwhile.
	if !d.Add(engine.PullProgress{Status: "pulling bbbbbbbbbbbb", Digest: b, Total: 1_000_000_000}, t0.Add(10*time.Second)) {
		t.Fatal("the second layer is a change")
	}
	if done, total := d.Totals(); done != 1_000_000_000 || total != 5_000_000_000 {
		t.Fatalf("totals %d/%d", done, total)
	}
	// The speed is measured over the last five seconds only.
	d.Add(engine.PullProgress{Status: "pulling aaaaaaaaaaaa", Digest: a, Total: 4_000_000_000, Completed: 1_500_000_000}, t0.Add(14*time.Second))
	d.Add(engine.PullProgress{Status: "pulling aaaaaaaaaaaa", Digest: a, Total: 4_000_000_000, Completed: 2_000_000_000}, t0.Add(18*time.Second))
	if s := d.Speed(); s < 124e6 || s > 126e6 {
		t.Fatalf("speed = %v B/s, want 125 MB/s over the last window", s)
	}
	left, ok := d.Left()
	if !ok || left != 24*time.Second {
		t.Fatalf("left = %v", left)
	}
	line := d.Line()
	for _, want := range []string{"pulling aaaaaaaaaaaa  50% 2.0 GB/4.0 GB", "total 40% 2.0 GB/5.0 GB", "125 MB/s", "24s left"} {
		if !strings.Contains(line, want) {
			t.Errorf("line %q lacks %q", line, want)
		}
	}
	if d.Fetched() != "2.0 GB of 5.0 GB" || d.Elapsed(t0.Add(18*time.Second)) != 18*time.Second {
		t.Fatalf("fetched %q, elapsed %v", d.Fetched(), d.Elapsed(t0.Add(18*time.Second)))
	}
	if !d.Add(engine.PullProgress{Status: "verifying sha256 digest"}, t0.Add(40*time.Second)) || d.Line() != "verifying sha256 digest" {
		t.Fatalf("a status without a layer: %q", d.Line())
	}
}

func TestRemainingAndBytes(t *testing.T) {
	for d, want := range map[time.Duration]string{42 * time.Second: "42s", 190 * time.Second: "3m10s", 65 * time.Minute: "1h05m"} {
		if got := Remaining(d); got != want {
			t.Errorf("Remaining(%v) = %q", d, got)
		}
	}
	if Bytes(4_700_000_000) != "4.7 GB" || Bytes(-1) != "0 B" || ShortDigest("sha256:0123456789abcdef") != "0123456789ab" {
		t.Fatal("bytes or digest")
	}
}
