package tui

import "strings"

// transcript is the scrollable list of items. It renders only the lines in
// view, asking each item for its height (cached) and the lines it has in
// the window, so typing stays fast with thousands of messages.
type transcript struct {
	items  []item
	offset int  // first visible line
	follow bool // stick to the bottom as content arrives
	height int  // lines in view

	// heights caches item heights for hkey; -1 is unknown. live is the
	// item of the run in progress, whose height is never cached: it is the
	// only one that changes.
	heights []int
	hkey    cacheKey
	live    item
}

func newTranscript() *transcript { return &transcript{follow: true} }

func (t *transcript) add(it item) {
	t.items = append(t.items, it)
	t.heights = append(t.heights, -1)
}

func (t *transcript) clear() {
	t.items, t.heights, t.live = nil, nil, nil
	t.offset = 0
	t.follow = true
}

// setLive marks the item of the run in progress; the previous live item
// is finished and its height may be cached from now on.
func (t *transcript) setLive(it item) {
	if t.live != nil {
		for i, x := range t.items {
			if x == t.live {
				t.heights[i] = -1
			}
		}
	}
	t.live = it
}

func (t *transcript) heightOf(i int, rc renderCtx) int {
	it := t.items[i]
	if it == t.live {
		return it.height(rc)
	}
	if k := rc.key(); k != t.hkey {
		t.hkey = k
		for j := range t.heights {
			t.heights[j] = -1
		}
	}
	if t.heights[i] < 0 {
		t.heights[i] = it.height(rc)
	}
	return t.heights[i]
}

func (t *transcript) total(rc renderCtx) int {
	n := 0
	for i := range t.items {
		n += t.heightOf(i, rc)
	}
	return n
}

// clamp keeps the offset in range and applies follow mode.
func (t *transcript) clamp(rc renderCtx) {
	maxOff := max(t.total(rc)-t.height, 0)
	if t.follow || t.offset > maxOff {
		t.offset = maxOff
	}
	t.offset = max(t.offset, 0)
}

// scroll moves by delta lines. Scrolling up leaves follow mode; reaching
// the bottom enters it again.
func (t *transcript) scroll(rc renderCtx, delta int) {
	maxOff := max(t.total(rc)-t.height, 0)
	if t.follow {
		t.offset = maxOff
	}
	t.offset = min(max(t.offset+delta, 0), maxOff)
	t.follow = t.offset >= maxOff
}

func (t *transcript) top() {
	t.offset = 0
	t.follow = false
}

func (t *transcript) bottom() { t.follow = true }

// view returns exactly t.height lines, each rc.width cells wide.
func (t *transcript) view(rc renderCtx) []string {
	t.clamp(rc)
	out := make([]string, 0, t.height)
	off := 0
	from, to := t.offset, t.offset+t.height
	for i, it := range t.items {
		if off >= to {
			break
		}
		h := t.heightOf(i, rc)
		if off+h > from {
			out = append(out, it.lines(rc, from-off, to-off)...)
		}
		off += h
	}
	if len(out) < t.height {
		blank := strings.Repeat(" ", rc.width)
		for len(out) < t.height {
			out = append(out, blank)
		}
	}
	return out[:t.height]
}

// atBottom reports whether the last line is in view.
func (t *transcript) atBottom() bool { return t.follow }
