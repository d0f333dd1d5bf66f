package tui

// transcript is the scrollable list of items. It renders only the lines in
// view, asking each item for its height (cached) and the lines it has in
// the window, so typing stays fast with thousands of messages.
type transcript struct {
	items  []item
	offset int  // first visible line
	follow bool // stick to the bottom as content arrives
	height int  // lines in view
}

func newTranscript() *transcript { return &transcript{follow: true} }

func (t *transcript) add(it item) { t.items = append(t.items, it) }

func (t *transcript) clear() {
	t.items = nil
	t.offset = 0
	t.follow = true
}

func (t *transcript) total(rc renderCtx) int {
	n := 0
	for _, it := range t.items {
		n += it.height(rc)
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

// view returns exactly t.height lines.
func (t *transcript) view(rc renderCtx) []string {
	t.clamp(rc)
	out := make([]string, 0, t.height)
	off := 0
	from, to := t.offset, t.offset+t.height
	for _, it := range t.items {
		if off >= to {
			break
		}
		h := it.height(rc)
		if off+h > from {
			out = append(out, it.lines(rc, from-off, to-off)...)
		}
		off += h
	}
	for len(out) < t.height {
		out = append(out, "")
	}
	return out[:t.height]
}

// atBottom reports whether the last line is in view.
func (t *transcript) atBottom() bool { return t.follow }
