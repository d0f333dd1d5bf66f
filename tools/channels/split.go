package channels

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxParts is the most messages one channel_send splits a text into;
// anything longer is refused rather than flooding the channel.
const MaxParts = 10

// partPrefix numbers the parts of a split message; reserve is its largest
// size, kept free in every part.
const (
	partPrefix = "(%d/%d) "
	reserve    = len("(10/10) ")
)

// size measures s in the limit's unit. Characters are counted in UTF-16
// code units, as Telegram does and as Discord's limit works out in
// practice: an emoji counts two, which errs on the safe side.
func (l limit) size(s string) int {
	if l.bytes {
		return len(s)
	}
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// unit names what the limit counts.
func (l limit) unit() string {
	if l.bytes {
		return "bytes"
	}
	return "characters"
}

// splitMessage cuts text into parts that each fit l once numbered,
// preferring paragraph, then line, then word boundaries. It returns nil
// when more than MaxParts parts would be needed.
func splitMessage(text string, l limit) []string {
	if l.max <= 0 || l.size(text) <= l.max {
		return []string{text}
	}
	budget := l.max - reserve
	if budget < 1 || l.size(text) > budget*MaxParts*2 {
		return nil // hopeless: do not scan a huge text
	}
	var parts []string
	rest := text
	for rest != "" {
		if len(parts) == MaxParts {
			return nil
		}
		cut := fit(rest, l, budget)
		if cut == len(rest) {
			parts = append(parts, rest)
			break
		}
		brk := cut
		for _, sep := range []string{"\n\n", "\n", " "} {
			if i := strings.LastIndex(rest[:cut], sep); i > cut/2 {
				brk = i
				break
			}
		}
		part := strings.TrimRight(rest[:brk], " \n")
		if part == "" { // only whitespace before the break: cut hard
			part, brk = rest[:cut], cut
		}
		parts = append(parts, part)
		rest = strings.TrimLeft(rest[brk:], " \n")
	}
	for i := range parts {
		parts[i] = fmt.Sprintf(partPrefix, i+1, len(parts)) + parts[i]
	}
	return parts
}

// fit returns the byte length of the longest prefix of s within budget,
// on a rune boundary, and at least one rune so that splitting advances.
func fit(s string, l limit, budget int) int {
	used, i := 0, 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		w := n
		if !l.bytes {
			w = 1
			if r >= 0x10000 {
				w = 2
			}
		}
		if used+w > budget {
			break
		}
		used += w
		i += n
	}
	if i == 0 {
		_, i = utf8.DecodeRuneInString(s)
	}
	return i
}
