package format

import (
	"fmt"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/jarvis-workbench/jarvis/engine"
)

// Bytes writes a size as model servers do, in powers of 1000: 4.7 GB,
// 512 MB.
func Bytes(n int64) string {
	if n < 0 {
		n = 0
	}
	return humanize.Bytes(uint64(n))
}

// Remaining writes a time left for people: <1s, 42s, 3m10s, 1h05m.
func Remaining(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Second:
		return "<1s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// Download follows a model download from the server's progress lines:
// each layer's bytes, the total of the layers seen so far, the speed over
// the last few seconds and the time left. The CLI's progress line and the
// workbench's progress bar both read it. The zero value is ready to use;
// it is not safe for concurrent use.
type Download struct {
	// Status is the server's latest status line ("pulling manifest",
	// "pulling 8eeb52dfb3bb", "verifying sha256 digest", "success").
	Status string
	// Layer is the digest of the layer the latest line was about ("" when
	// it was about none).
	Layer string

	layers  []DownloadLayer
	index   map[string]int
	samples []rateSample
	started time.Time
}

// DownloadLayer is one blob of a download.
type DownloadLayer struct {
	Digest           string
	Total, Completed int64
}

type rateSample struct {
	at   time.Time
	done int64
}

// speedWindow is how far back the speed is measured: long enough to even
// out a bursty connection, short enough to follow a change.
const speedWindow = 5 * time.Second

// Add takes one progress line received at now. It reports whether the
// line started something new (another status, or a layer not seen
// before), which a display may want to show on a line of its own.
func (d *Download) Add(p engine.PullProgress, now time.Time) bool {
	if d.started.IsZero() {
		d.started = now
	}
	changed := p.Status != d.Status
	d.Status, d.Layer = p.Status, ""
	if p.Digest != "" && p.Total > 0 {
		if d.index == nil {
			d.index = map[string]int{}
		}
		i, seen := d.index[p.Digest]
		if !seen {
			i = len(d.layers)
			d.index[p.Digest] = i
			d.layers = append(d.layers, DownloadLayer{Digest: p.Digest})
			changed = true
		}
		d.layers[i].Total, d.layers[i].Completed = p.Total, min(p.Completed, p.Total)
		d.Layer = p.Digest
	}
	done, _ := d.Totals()
	d.samples = append(d.samples, rateSample{at: now, done: done})
	// Keep one rateSample older than the window, to measure across it.
	cut := 0
	for cut+1 < len(d.samples) && now.Sub(d.samples[cut+1].at) > speedWindow {
		cut++
	}
	d.samples = d.samples[cut:]
	return changed
}

// Current returns the layer the latest line was about.
func (d *Download) Current() (DownloadLayer, bool) {
	if i, ok := d.index[d.Layer]; ok && d.Layer != "" {
		return d.layers[i], true
	}
	return DownloadLayer{}, false
}

// Layers returns every layer seen, in the order they appeared.
func (d *Download) Layers() []DownloadLayer { return append([]DownloadLayer(nil), d.layers...) }

// Totals returns the bytes done and to do over the layers seen so far.
func (d *Download) Totals() (done, total int64) {
	for _, l := range d.layers {
		done += l.Completed
		total += l.Total
	}
	return done, total
}

// Fraction is how much of the layers seen so far is done, 0 to 1.
func (d *Download) Fraction() float64 {
	done, total := d.Totals()
	if total == 0 {
		return 0
	}
	return float64(done) / float64(total)
}

// Speed is the bytes per second over the last few seconds (0 when not
// known yet).
func (d *Download) Speed() float64 {
	if len(d.samples) < 2 {
		return 0
	}
	first, last := d.samples[0], d.samples[len(d.samples)-1]
	dt := last.at.Sub(first.at).Seconds()
	if dt <= 0 || last.done <= first.done {
		return 0
	}
	return float64(last.done-first.done) / dt
}

// Left is the time the rest should take at the current speed.
func (d *Download) Left() (time.Duration, bool) {
	speed := d.Speed()
	done, total := d.Totals()
	if speed <= 0 || total <= done {
		return 0, false
	}
	return time.Duration(float64(total-done) / speed * float64(time.Second)), true
}

// Elapsed is the time since the first line.
func (d *Download) Elapsed(now time.Time) time.Duration {
	if d.started.IsZero() {
		return 0
	}
	return now.Sub(d.started)
}

// Fetched says how much was downloaded, for a message at the end:
// "2.1 GB of 4.7 GB".
func (d *Download) Fetched() string {
	done, total := d.Totals()
	if total == 0 {
		return "nothing"
	}
	return Bytes(done) + " of " + Bytes(total)
}

// ShortDigest is a layer's digest as Ollama prints it: the first 12 hex
// digits.
func ShortDigest(digest string) string {
	d := strings.TrimPrefix(digest, "sha256:")
	if len(d) > 12 {
		d = d[:12]
	}
	return d
}

// LayerText is one layer's progress: "8eeb52dfb3bb 45% 2.1 GB/4.7 GB".
func LayerText(l DownloadLayer) string {
	pct := 0
	if l.Total > 0 {
		pct = int(l.Completed * 100 / l.Total)
	}
	return fmt.Sprintf("%s %3d%% %s/%s", ShortDigest(l.Digest), pct, Bytes(l.Completed), Bytes(l.Total))
}

// Rates is the speed and the time left: "38 MB/s · 1m10s left" (parts
// not known yet are left out).
func (d *Download) Rates() string {
	var parts []string
	if s := d.Speed(); s > 0 {
		parts = append(parts, Bytes(int64(s))+"/s")
	}
	if left, ok := d.Left(); ok {
		parts = append(parts, Remaining(left)+" left")
	}
	return strings.Join(parts, " · ")
}

// Line is the whole state on one line: the status, the current layer,
// the total, the speed and the time left.
func (d *Download) Line() string {
	l, ok := d.Current()
	if !ok {
		return d.Status
	}
	done, total := d.Totals()
	parts := []string{"pulling " + LayerText(l)}
	if len(d.layers) > 1 {
		parts = append(parts, fmt.Sprintf("total %d%% %s/%s", int(done*100/max(total, 1)), Bytes(done), Bytes(total)))
	}
	if r := d.Rates(); r != "" {
		parts = append(parts, r)
	}
	return strings.Join(parts, " · ")
}
