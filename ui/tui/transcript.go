package tui

import "strings"

// transcript is the scrollable list of items. A frame renders only the
// items in view: following the conversation it walks back from the last
// item, scrolled it walks forward from an anchor (an item and a line in
// it). No frame needs the height of the whole transcript, so a toggle that
// changes every item's height (ctrl+e, a resize, a theme) costs what is on
// screen, not what the session holds.
type transcript struct {
	items  []item
	follow bool // stick to the bottom as content arrives
	anchor pos  // the top line of the view when not following
	height int  // lines in view

	// heights caches item heights, each with the layout it was measured
	// at, so a new layout only costs the items that are measured again.
	// live is the item of the run in progress, whose height is never
	// cached: it is the only one that changes.
	heights []heightEntry
	live    item
}

// pos is a line of the transcript: line of items[item].
type pos struct{ item, line int }

type heightEntry struct {
	key layoutKey
	h   int // -1: not measured
}

func newTranscript() *transcript { return &transcript{follow: true} }

func (t *transcript) add(it item) {
	t.items = append(t.items, it)
	t.heights = append(t.heights, heightEntry{h: -1})
}

// indexOf returns the position of it, -1 when it is not shown.
func (t *transcript) indexOf(it item) int {
	for i := len(t.items) - 1; i >= 0; i-- {
		if t.items[i] == it {
			return i
		}
	}
	return -1
}

// invalidate forgets it's cached height: something it draws changed.
func (t *transcript) invalidate(it item) {
	if i := t.indexOf(it); i >= 0 {
		t.heights[i] = heightEntry{h: -1}
	}
}

// truncate drops the items from position i on (another line of the
// conversation is shown from there).
func (t *transcript) truncate(i int) {
	i = min(max(i, 0), len(t.items))
	for _, it := range t.items[i:] {
		if it == t.live {
			t.live = nil
		}
	}
	t.items, t.heights = t.items[:i], t.heights[:i]
	if t.anchor.item >= i {
		t.follow = true
	}
}

// reveal scrolls so that item i starts in view, unless it is in view
// already.
func (t *transcript) reveal(rc renderCtx, i int) {
	if i < 0 || i >= len(t.items) {
		return
	}
	top := t.start(rc)
	if i > top.item || i == top.item && top.line == 0 {
		// Below the top: in view when the lines from the top to it fit.
		n := -top.line
		for j := top.item; j < i; j++ {
			n += t.heightOf(j, rc)
		}
		if n < t.height {
			return
		}
	}
	t.anchor = pos{item: i}
	t.follow = t.linesFrom(rc, t.anchor, t.height) <= t.height
}

func (t *transcript) clear() {
	t.items, t.heights, t.live = nil, nil, nil
	t.anchor = pos{}
	t.follow = true
}

// setLive marks the item of the run in progress. The previous live item
// is finished; its height was never cached, so it is measured afresh.
func (t *transcript) setLive(it item) { t.live = it }

func (t *transcript) heightOf(i int, rc renderCtx) int {
	it := t.items[i]
	if it == t.live {
		return it.height(rc)
	}
	k := rc.layoutKey()
	if e := t.heights[i]; e.h >= 0 && e.key == k {
		return e.h
	}
	h := it.height(rc)
	t.heights[i] = heightEntry{key: k, h: h}
	return h
}

// bottomTop is the top line of the view when the last line is at its
// bottom.
func (t *transcript) bottomTop(rc renderCtx) pos {
	need := t.height
	for i := len(t.items) - 1; i >= 0; i-- {
		h := t.heightOf(i, rc)
		if h >= need {
			return pos{i, h - need}
		}
		need -= h
	}
	return pos{}
}

// linesFrom counts the lines from p to the end, stopping once the count
// passes limit.
func (t *transcript) linesFrom(rc renderCtx, p pos, limit int) int {
	n := -p.line
	for i := p.item; i < len(t.items) && n <= limit; i++ {
		n += t.heightOf(i, rc)
	}
	return n
}

// clampPos keeps p on an existing line (an item may have shrunk since p
// was taken).
func (t *transcript) clampPos(rc renderCtx, p pos) pos {
	if len(t.items) == 0 {
		return pos{}
	}
	p.item = min(max(p.item, 0), len(t.items)-1)
	p.line = min(max(p.line, 0), max(t.heightOf(p.item, rc)-1, 0))
	return p
}

// start is the top line of the view: the anchor, unless following or the
// anchor is so near the end that the view would not be full.
func (t *transcript) start(rc renderCtx) pos {
	if t.follow || len(t.items) == 0 {
		return t.bottomTop(rc)
	}
	p := t.clampPos(rc, t.anchor)
	if t.linesFrom(rc, p, t.height) < t.height {
		return t.bottomTop(rc)
	}
	return p
}

// scroll moves by delta lines. Scrolling up leaves follow mode; reaching
// the bottom enters it again.
func (t *transcript) scroll(rc renderCtx, delta int) {
	p := t.start(rc)
	if delta < 0 {
		p.line += delta
		for p.line < 0 && p.item > 0 {
			p.item--
			p.line += t.heightOf(p.item, rc)
		}
		p.line = max(p.line, 0)
	} else {
		p.line += delta
		for p.item < len(t.items)-1 {
			h := t.heightOf(p.item, rc)
			if p.line < h {
				break
			}
			p.line -= h
			p.item++
		}
	}
	t.anchor = t.clampPos(rc, p)
	t.follow = t.linesFrom(rc, t.anchor, t.height) <= t.height
}

// top shows the first line.
func (t *transcript) top(rc renderCtx) {
	t.anchor = pos{}
	t.follow = t.linesFrom(rc, t.anchor, t.height) <= t.height
}

func (t *transcript) bottom() { t.follow = true }

// view returns exactly t.height lines, each rc.width cells wide.
func (t *transcript) view(rc renderCtx) []string {
	out := make([]string, 0, t.height)
	p := t.start(rc)
	for i := p.item; i < len(t.items) && len(out) < t.height; i++ {
		from := 0
		if i == p.item {
			from = p.line
		}
		out = append(out, t.items[i].lines(rc, from, from+t.height-len(out))...)
	}
	if len(out) < t.height {
		blank := strings.Repeat(" ", rc.width)
		for len(out) < t.height {
			out = append(out, blank)
		}
	}
	return out[:t.height]
}

// atBottom reports whether the view follows the end of the conversation.
func (t *transcript) atBottom() bool { return t.follow }
