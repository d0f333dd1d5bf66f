// Package textdiff is the one place jarvis turns two versions of a text
// file into a unified diff and its line counts: the approval dialog, a
// write tool's panel, /changes, the export and `jarvis changes` all show
// a change the same way. The diff itself is computed by go-udiff (the
// Myers diff of Go's own tools, as Crush uses it).
package textdiff

import (
	"fmt"
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

// Context is how many unchanged lines surround each hunk.
const Context = 3

// Unified is the unified diff that turns old into new, labelled a/path
// and b/path (or /dev/null for a file created or deleted, as git writes
// them). It is "" when the two are equal.
func Unified(path, old, new string, oldExists, newExists bool) string {
	from, to := "a/"+path, "b/"+path
	if !oldExists {
		from = "/dev/null"
	}
	if !newExists {
		to = "/dev/null"
	}
	edits := udiff.Lines(old, new)
	out, err := udiff.ToUnified(from, to, old, edits, Context)
	if err != nil {
		// Edits computed from old itself always apply; keep the claim
		// honest rather than panic if that ever stops being true.
		return fmt.Sprintf("--- %s\n+++ %s\n(the diff could not be computed: %v)\n", from, to, err)
	}
	if out == "" && oldExists != newExists {
		// An empty file created or deleted: the diff has no lines, yet
		// something happened.
		return "--- " + from + "\n+++ " + to + "\n"
	}
	return out
}

// Counts returns how many lines a unified diff adds and removes.
func Counts(diff string) (added, removed int) {
	for _, l := range Lines(diff) {
		switch l.Kind {
		case KindAdded:
			added++
		case KindRemoved:
			removed++
		}
	}
	return added, removed
}

// Summary is "+12 −3 main.go": the lines a diff adds and removes, then
// what it changed.
func Summary(diff, name string) string {
	a, r := Counts(diff)
	return fmt.Sprintf("+%d −%d %s", a, r, name)
}

// Kind says what a line of a unified diff is, for colouring it.
type Kind int

// Line kinds.
const (
	KindContext Kind = iota
	KindAdded
	KindRemoved
	KindHunk   // "@@ -1,3 +1,4 @@"
	KindHeader // "--- a/x", "+++ b/x"
	KindNote   // "\ No newline at end of file"
)

// Line is one line of a unified diff and what it is.
type Line struct {
	Kind Kind
	Text string
}

// Lines splits a unified diff (of one file or several) into classified
// lines. Inside a hunk the counts of its "@@" line say how many lines
// belong to it, so an added line that reads "++ x" stays an added line.
func Lines(diff string) []Line {
	if diff == "" {
		return nil
	}
	raw := strings.Split(strings.TrimSuffix(diff, "\n"), "\n")
	out := make([]Line, 0, len(raw))
	oldLeft, newLeft := 0, 0
	for _, l := range raw {
		k := KindContext
		inHunk := oldLeft > 0 || newLeft > 0
		switch {
		case inHunk && strings.HasPrefix(l, "+"):
			k, newLeft = KindAdded, newLeft-1
		case inHunk && strings.HasPrefix(l, "-"):
			k, oldLeft = KindRemoved, oldLeft-1
		case inHunk && strings.HasPrefix(l, " "), inHunk && l == "":
			oldLeft, newLeft = oldLeft-1, newLeft-1
		case strings.HasPrefix(l, "\\"):
			k = KindNote
		case strings.HasPrefix(l, "@@"):
			k = KindHunk
			oldLeft, newLeft = hunkCounts(l)
		case strings.HasPrefix(l, "--- "), strings.HasPrefix(l, "+++ "):
			k = KindHeader
		case strings.HasPrefix(l, "+"):
			k = KindAdded
		case strings.HasPrefix(l, "-"):
			k = KindRemoved
		}
		out = append(out, Line{Kind: k, Text: l})
	}
	return out
}

// hunkCounts reads the line counts of "@@ -a,b +c,d @@" (a missing count
// is 1, as the format says).
func hunkCounts(l string) (old, new int) {
	var a, b, c, d int
	if n, _ := fmt.Sscanf(l, "@@ -%d,%d +%d,%d @@", &a, &b, &c, &d); n == 4 {
		return b, d
	}
	if n, _ := fmt.Sscanf(l, "@@ -%d +%d,%d @@", &a, &c, &d); n == 3 {
		return 1, d
	}
	if n, _ := fmt.Sscanf(l, "@@ -%d,%d +%d @@", &a, &b, &c); n == 3 {
		return b, 1
	}
	return 1, 1
}

// FileDiff is one file's part of a unified diff.
type FileDiff struct {
	// Name is the file as the "+++" line names it (the "---" line's
	// for a deletion), without git's a/ and b/.
	Name           string
	Added, Removed int
}

// Files lists the files a unified diff changes, with their counts.
func Files(diff string) []FileDiff {
	var out []FileDiff
	var oldName string
	for _, l := range Lines(diff) {
		switch l.Kind {
		case KindHeader:
			if strings.HasPrefix(l.Text, "--- ") {
				oldName = strings.TrimPrefix(strings.TrimPrefix(l.Text, "--- "), "a/")
				continue
			}
			name := strings.TrimPrefix(strings.TrimPrefix(l.Text, "+++ "), "b/")
			if name == "/dev/null" {
				name = oldName
			}
			out = append(out, FileDiff{Name: name})
		case KindAdded:
			if len(out) > 0 {
				out[len(out)-1].Added++
			}
		case KindRemoved:
			if len(out) > 0 {
				out[len(out)-1].Removed++
			}
		}
	}
	return out
}

// String is "+12 −3 main.go".
func (f FileDiff) String() string { return fmt.Sprintf("+%d −%d %s", f.Added, f.Removed, f.Name) }

// LineCount counts the lines of a text ("a\nb" and "a\nb\n" have two).
func LineCount(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}
