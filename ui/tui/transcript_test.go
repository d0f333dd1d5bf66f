package tui

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// probeItem is an item whose height depends on the layout (like a tool
// panel on ctrl+e) and which counts how often it is measured.
type probeItem struct {
	id       int
	h, hWide int // heights collapsed and expanded
	measured *int
}

func (p *probeItem) height(rc renderCtx) int {
	*p.measured++
	if rc.expand {
		return p.hWide
	}
	return p.h
}

func (p *probeItem) lines(rc renderCtx, from, to int) []string {
	var out []string
	for i := max(from, 0); i < min(to, p.height(rc)); i++ {
		out = append(out, fmt.Sprintf("%d.%d", p.id, i))
	}
	return out
}

// probeTranscript holds n probe items of 1–6 lines (2–12 expanded).
func probeTranscript(n, height int, measured *int) (*transcript, renderCtx) {
	r := rand.New(rand.NewSource(1))
	t := newTranscript()
	t.height = height
	for i := 0; i < n; i++ {
		h := 1 + r.Intn(6)
		t.add(&probeItem{id: i, h: h, hWide: 2 * h, measured: measured})
	}
	return t, renderCtx{width: 20, st: &styles{name: "test"}}
}

// reference is every line of the transcript, drawn naively.
func reference(t *transcript, rc renderCtx) []string {
	var all []string
	for _, it := range t.items {
		all = append(all, it.lines(rc, 0, it.height(rc))...)
	}
	return all
}

func TestTranscriptDrawsOnlyWhatIsInView(t *testing.T) {
	measured := 0
	tr, rc := probeTranscript(5000, 30, &measured)
	tr.view(rc)
	if measured > 200 {
		t.Fatalf("a frame measured %d items of 5000", measured)
	}
	// A toggle that changes every height costs what is on screen.
	measured = 0
	rc.expand = true
	tr.view(rc)
	if measured > 200 {
		t.Fatalf("a frame after ctrl+e measured %d items of 5000", measured)
	}
	// So does a page up from the bottom, and jumping to the top.
	measured = 0
	tr.scroll(rc, -28)
	tr.view(rc)
	tr.top(rc)
	tr.view(rc)
	if measured > 400 {
		t.Fatalf("scrolling measured %d items of 5000", measured)
	}
}

// TestTranscriptScrollMatchesReference checks the incremental walks of
// the anchored scrolling against plain offset arithmetic on the whole
// transcript, through random scrolls, layout changes and new items. The
// reference keeps the anchor as an item and a line too (so ctrl+e keeps
// the top item in place), converting through the flat list of lines.
func TestTranscriptScrollMatchesReference(t *testing.T) {
	measured := 0
	tr, rc := probeTranscript(120, 17, &measured)
	r := rand.New(rand.NewSource(2))
	anchor, follow := pos{}, true // the reference's state
	// flat converts between a position and a line number at rc.
	flat := func(p pos) int {
		n := 0
		for i := 0; i < p.item; i++ {
			n += tr.items[i].height(rc)
		}
		return n + min(p.line, tr.items[p.item].height(rc)-1)
	}
	unflat := func(off int) pos {
		for i, it := range tr.items {
			if h := it.height(rc); off < h || i == len(tr.items)-1 {
				return pos{i, off}
			} else {
				off -= h
			}
		}
		return pos{}
	}
	shown := func() int {
		total := len(reference(tr, rc))
		maxOff := max(total-tr.height, 0)
		if follow || total-flat(anchor) < tr.height {
			return maxOff
		}
		return flat(anchor)
	}
	for step := 0; step < 1500; step++ {
		maxOff := max(len(reference(tr, rc))-tr.height, 0)
		switch op := r.Intn(10); {
		case op < 6:
			d := r.Intn(80) - 40
			off := min(max(shown()+d, 0), maxOff)
			anchor, follow = unflat(off), off >= maxOff
			tr.scroll(rc, d)
		case op == 6:
			anchor, follow = pos{}, maxOff == 0
			tr.top(rc)
		case op == 7:
			follow = true
			tr.bottom()
		case op == 8:
			rc.expand = !rc.expand
		default:
			tr.add(&probeItem{id: 1000 + step, h: 1 + r.Intn(4), hWide: 3, measured: &measured})
		}
		all := reference(tr, rc)
		want := shown()
		got := tr.view(rc)
		for i := 0; i < tr.height && want+i < len(all); i++ {
			if strings.TrimSpace(got[i]) != all[want+i] {
				t.Fatalf("step %d: line %d is %q, want %q (offset %d, follow %v)", step, i, got[i], all[want+i], want, follow)
			}
		}
		if tr.atBottom() != follow {
			t.Fatalf("step %d: follow = %v, want %v", step, tr.atBottom(), follow)
		}
	}
}

func TestToggleKeepsScrolledViewAndSaysSo(t *testing.T) {
	m := newTestModel(t, 100, 30)
	longTranscript(t, m, 200)
	press(m, "pgup")
	press(m, "pgup")
	v := screen(t, m)
	if !strings.Contains(v, "scrolled (end returns)") {
		t.Fatalf("status does not say the view is scrolled:\n%s", v)
	}
	top := m.transcript.start(m.renderCtx(m.transcriptWidth())).item
	m.Update(tea.KeyMsg{Type: tea.KeyCtrlE})
	screen(t, m)
	if got := m.transcript.start(m.renderCtx(m.transcriptWidth())).item; got != top {
		t.Fatalf("ctrl+e moved the view from item %d to %d", top, got)
	}
	press(m, "end")
	if v := screen(t, m); strings.Contains(v, "scrolled") || !m.transcript.atBottom() {
		t.Fatal("end does not return to the bottom")
	}
	press(m, "home")
	if v := screen(t, m); !strings.Contains(v, "Question 0:") {
		t.Fatalf("home does not show the first message:\n%s", v)
	}
}
