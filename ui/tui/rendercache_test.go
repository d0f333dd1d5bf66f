package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jarvis-workbench/jarvis/events"
)

// smallRenderCache bounds the rendering caches to n bytes for one test
// and starts it with none held.
func smallRenderCache(t *testing.T, n int) {
	t.Helper()
	saved := renderCacheBytes
	renderCacheBytes = n
	renders.mu.Lock()
	for c := renders.head; c != nil; {
		next := c.next
		c.out, c.bytes, c.prev, c.next = nil, 0, nil, nil
		c = next
	}
	renders.head, renders.tail, renders.bytes = nil, nil, 0
	renders.mu.Unlock()
	t.Cleanup(func() { renderCacheBytes = saved })
}

// countingRender returns lines of about size bytes, different for each
// name, and counts how often it was called.
func countingRender(name string, size int, calls *int) func() []string {
	return func() []string {
		*calls++
		var out []string
		for n := 0; n < size; n += 100 {
			out = append(out, fmt.Sprintf("%s %0100d", name, n))
		}
		return out
	}
}

// TestRenderCacheDropsTheLeastRecentlyDrawn: beyond the bound the lines
// drawn longest ago go first, the ones in use stay, and what was dropped
// is rendered again, the same, when it is drawn again.
func TestRenderCacheDropsTheLeastRecentlyDrawn(t *testing.T) {
	smallRenderCache(t, 40<<10)
	k := cacheKey{width: 120, theme: "dark"}
	items := make([]cached, 20)
	calls := make([]int, len(items))
	draw := func(i int) []string {
		return items[i].get(k, 0, countingRender(fmt.Sprint("item", i), 10<<10, &calls[i]))
	}
	first := slices.Clone(draw(0))
	for i := 1; i < len(items); i++ { // a frame each, item 0 on every screen
		renders.nextFrame()
		draw(i)
		draw(0)
	}
	held := 0
	for i := range items {
		if items[i].out != nil {
			held += linesBytes(items[i].out)
		}
	}
	if held > renderCacheBytes || renders.bytes != held {
		t.Errorf("the caches hold %d bytes, the list counts %d, the bound is %d", held, renders.bytes, renderCacheBytes)
	}
	if calls[0] != 1 {
		t.Errorf("the item on every screen was rendered %d times, want once", calls[0])
	}
	if items[1].out != nil || items[len(items)-1].out == nil {
		t.Error("the rendering drawn longest ago should be dropped first, the last one kept")
	}
	renders.nextFrame()
	again := draw(1)
	if want := padLines(countingRender("item1", 10<<10, new(int))(), k.width); calls[1] != 2 || !slices.Equal(again, want) {
		t.Errorf("a dropped rendering drawn again: rendered %d times (want 2), the same lines: %v", calls[1], slices.Equal(again, want))
	}
	if got := draw(0); !slices.Equal(got, first) || calls[0] != 1 {
		t.Error("a kept rendering changed or was made again")
	}
}

// TestRenderCacheKeepsWhatAFrameDraws: one reply longer than the bound
// does not push out what is drawn beside it, nor they it: a frame that
// draws the same again renders nothing.
func TestRenderCacheKeepsWhatAFrameDraws(t *testing.T) {
	smallRenderCache(t, 16<<10)
	k := cacheKey{width: 120, theme: "dark"}
	var big, small1, small2 cached
	var calls [3]int
	frame := func() {
		renders.nextFrame()
		big.get(k, 0, countingRender("big", 64<<10, &calls[0]))
		small1.get(k, 0, countingRender("small1", 2<<10, &calls[1]))
		small2.get(k, 0, countingRender("small2", 2<<10, &calls[2]))
	}
	for range 3 {
		frame()
	}
	if calls != [3]int{1, 1, 1} {
		t.Errorf("renders per item over three equal frames: %v, want one each", calls)
	}
	// The next frame draws something else: the big one, least recently
	// drawn beyond the bound, goes.
	renders.nextFrame()
	var other cached
	other.get(k, 0, countingRender("other", 2<<10, new(int)))
	if big.out != nil || renders.bytes > renderCacheBytes {
		t.Errorf("after a frame without it the big rendering is still held (%d bytes held, bound %d)", renders.bytes, renderCacheBytes)
	}
}

// TestDroppedRenderingsKeepHeightsAndLines: in a long session the first
// replies' renderings are dropped, but the transcript keeps the heights
// it measured (scrolling measures nothing again) and, scrolled back to,
// they are drawn as they were.
func TestDroppedRenderingsKeepHeightsAndLines(t *testing.T) {
	smallRenderCache(t, 64<<10)
	answer, err := os.ReadFile(filepath.Join("testdata", "session_answer.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := newTestModel(t, 120, 40)
	exchange := func(i int) {
		reply := fmt.Sprintf("%s\n\nReply %d.", answer, i)
		run := fakeRun(m, fmt.Sprintf("question %d", i))
		feed(m, tok(run, reply), turnEnd(run, 1, reply, 0),
			events.Event{Type: events.RunEnd, Run: run, Turn: &events.TurnPayload{Turn: 1}})
		m.Update(runDoneMsg{runID: run.ID})
		screen(t, m)
	}
	for i := range 2 {
		exchange(i)
	}
	press(m, "home")
	top := screen(t, m)
	reply0 := m.transcript.items[1].(*assistantItem)
	text0 := reply0.blocks[0].(*textBlock)
	press(m, "end")
	for i := 2; i < 40; i++ {
		exchange(i)
	}
	if text0.cache.out != nil {
		t.Fatal("the first reply's rendering is still held after 40 replies: the bound does nothing")
	}
	heights := slices.Clone(m.transcript.heights)
	press(m, "home")
	if got := screen(t, m); got != top {
		t.Errorf("the first reply drawn again differs:\n%s\nwas:\n%s", got, top)
	}
	if heights[1].h < 0 {
		t.Fatal("the first reply's height was forgotten with its rendering")
	}
	for i, h := range heights {
		if h.h >= 0 && m.transcript.heights[i] != h {
			t.Errorf("item %d: height %v after drawing again, was %v", i, m.transcript.heights[i], h)
		}
	}
}

// TestPromptKeepsItsShapeAcrossSends: a sent prompt is emptied with a new
// textarea (the old one's cache of wrapped lines holds every state typed);
// the new one has the width, height and focus the old one had.
func TestPromptKeepsItsShapeAcrossSends(t *testing.T) {
	m := newTestModel(t, 100, 30)
	w, h := m.input.ta.Width(), m.input.ta.Height()
	for i := range 3 {
		m.input.set(fmt.Sprintf("a question, number %d", i))
		m.input.reset()
		if m.input.ta.Width() != w || m.input.ta.Height() != h || !m.input.ta.Focused() || m.input.value() != "" {
			t.Fatalf("after reset %d: width %d height %d focused %v value %q; want %d, %d, focused, empty",
				i, m.input.ta.Width(), m.input.ta.Height(), m.input.ta.Focused(), m.input.value(), w, h)
		}
	}
}

// TestFinalTextKeepsOnlyTheReply: once a reply is complete its stream lets
// go of its buffers and wrapped lines, shares the reply's string, and
// still gives lines when asked.
func TestFinalTextKeepsOnlyTheReply(t *testing.T) {
	var s streamText
	for _, d := range []string{"first line\nsec", "ond line\nthird"} {
		s.Append(d)
	}
	if s.Count(8) == 0 {
		t.Fatal("no lines while streaming")
	}
	reply := "first line\nsecond line\nthird"
	v := s.version
	s.SetFinal(reply)
	if s.done != nil || s.tailLines != nil || s.src.Len() != 0 || s.String() != reply || s.version != v {
		t.Errorf("after SetFinal: done %v tail %v src %d bytes, text %q, version %d (was %d)", s.done, s.tailLines, s.src.Len(), s.String(), s.version, v)
	}
	if got := s.Slice(8, 0, 10); len(got) != s.Count(8) || got[0] != "first" {
		t.Errorf("lines of a final text: %q", got)
	}
	s.Append(" more")
	if s.String() != reply+" more" {
		t.Errorf("text after more arrived: %q", s.String())
	}
}
