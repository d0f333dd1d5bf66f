package files

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/jarvis-workbench/jarvis/internal/lazyregexp"
	"github.com/jarvis-workbench/jarvis/internal/textdiff"
	"github.com/jarvis-workbench/jarvis/tools"
)

// ApplyPatch applies a unified diff of one or more files (as `diff -u`
// or `git diff` write it) to files the model read. The patch is parsed by
// go-gitdiff, which reads everything `git apply` reads; each hunk is then
// found in the file at the line its header names or, as GNU patch does,
// the nearest place where its context and removed lines match exactly,
// and the result says when a hunk moved. A patch whose hunks do not match
// fails, naming the hunk, and changes nothing: every file is worked out
// before any is written.
type ApplyPatch struct{ changer }

// NewApplyPatch builds apply_patch with its settings' allowed
// directories, recording changes in log (nil: not recorded).
func NewApplyPatch(deps tools.Deps, log ChangeLog) *ApplyPatch {
	return &ApplyPatch{newChanger("apply_patch", deps, log)}
}

var applyPatchSpec = tools.Spec{
	Name: "apply_patch",
	Description: "Apply a unified diff (the format of `diff -u` and `git diff`: --- a/PATH, +++ b/PATH, @@ hunks) to one or more UTF-8 text files; " +
		"/dev/null as the old name creates a file, as the new name deletes one. Paths are relative to the working directory. " +
		"Context and removed lines must match the files exactly; every file changed must have been read with file_read in this session. " +
		"Nothing is written unless every hunk applies. The user sees the diff and approves it.",
	Parameters: tools.Params(
		tools.StringParam("patch", "The unified diff", true),
	),
	Category:             "filesystem",
	RequiresConfirmation: true,
	TimeoutSeconds:       30,
}

// Spec returns apply_patch's spec.
func (a *ApplyPatch) Spec() tools.Spec { return withReach(applyPatchSpec, a.reach) }

// Refuse refuses a patch that touches a secret or a path past allowed_dirs.
func (a *ApplyPatch) Refuse(args tools.Args) *tools.Refusal {
	return a.refuse(patchPaths(args.String("patch"))...)
}

// ConfirmationFor says why the call asks when a file is outside the
// working directory.
func (a *ApplyPatch) ConfirmationFor(args tools.Args) (bool, string) {
	return a.confirmationFor(patchPaths(args.String("patch"))...)
}

// GrantScope is the directory of the files (all of them together when
// they are in several).
func (a *ApplyPatch) GrantScope(args tools.Args) tools.Scope {
	return a.scope(patchPaths(args.String("patch"))...)
}

// patchPaths names the files a patch touches ("" when it cannot be
// parsed: the call then fails with the reason).
func patchPaths(patch string) []string {
	files, _, err := parsePatch(patch)
	if err != nil {
		return nil
	}
	var out []string
	for _, f := range files {
		for _, n := range []string{f.OldName, f.NewName} {
			if n != "" && !containsString(out, stripPrefix(n)) {
				out = append(out, stripPrefix(n))
			}
		}
	}
	return out
}

// parsePatch parses a patch; when its hunk headers miscount their lines
// (models often do), it recounts them and says so in note.
func parsePatch(patch string) (files []*gitdiff.File, note string, err error) {
	if strings.TrimSpace(patch) == "" {
		return nil, "", failf("The patch is empty.")
	}
	files, _, err = gitdiff.Parse(strings.NewReader(patch))
	if err != nil {
		recounted := recount(patch)
		if again, _, err2 := gitdiff.Parse(strings.NewReader(recounted)); err2 == nil && recounted != patch {
			files, err, note = again, nil, "the hunk headers' line counts did not match their lines; they were recounted."
		}
	}
	if err != nil {
		return nil, "", failf("The patch cannot be read: %v. Give a unified diff: --- a/PATH and +++ b/PATH lines, then @@ -LINE,COUNT +LINE,COUNT @@ hunks.", err)
	}
	if len(files) == 0 {
		return nil, "", failf("The patch holds no file changes: give --- a/PATH and +++ b/PATH lines, then @@ hunks.")
	}
	return files, note, nil
}

// stripPrefix drops git's a/ and b/ from a name in a traditional header
// (git headers have them dropped by the parser already).
func stripPrefix(name string) string {
	if name == "/dev/null" {
		return ""
	}
	for _, p := range []string{"a/", "b/"} {
		if strings.HasPrefix(name, p) {
			return name[len(p):]
		}
	}
	return name
}

// Preview works out every file the patch changes.
func (a *ApplyPatch) Preview(ctx context.Context, args tools.Args) (*tools.Preview, error) {
	files, note, err := parsePatch(args.String("patch"))
	if err != nil {
		return nil, err
	}
	var changes []tools.FileChange
	var moved []string
	seen := map[string]bool{}
	for _, f := range files {
		oldName, newName := stripPrefix(f.OldName), stripPrefix(f.NewName)
		name := newName
		if name == "" {
			name = oldName
		}
		if f.IsBinary {
			return nil, failf("The patch changes %s as a binary file: binary files are never changed.", shown(name))
		}
		var cur current
		if f.IsNew {
			cur, err = a.load(ctx, newName, false)
			if err == nil && cur.exists {
				err = failf("The patch creates %s, which exists already: patch it instead (read it first).", shown(newName))
			}
		} else {
			cur, err = a.load(ctx, oldName, true)
		}
		if err != nil {
			return nil, err
		}
		if seen[cur.real] {
			return nil, failf("The patch changes %s twice: give each file once.", shown(name))
		}
		seen[cur.real] = true
		content, shifts, err := applyHunks(cur.content, f.TextFragments, name)
		if err != nil {
			return nil, err
		}
		moved = append(moved, shifts...)
		if f.IsDelete {
			if content != "" {
				return nil, failf("The patch deletes %s but leaves lines in it: a deletion removes every line.", shown(name))
			}
			changes = append(changes, fileChange(cur, "", true))
			continue
		}
		if err := checkNew(name, content); err != nil {
			return nil, err
		}
		if f.IsRename || f.IsCopy {
			dest, err := a.load(ctx, newName, false)
			if err != nil {
				return nil, err
			}
			if dest.exists {
				return nil, failf("The patch renames or copies to %s, which exists already.", shown(newName))
			}
			if f.IsRename {
				changes = append(changes, fileChange(cur, "", true))
			}
			changes = append(changes, fileChange(dest, content, false))
			continue
		}
		changes = append(changes, fileChange(cur, content, false))
	}
	if len(moved) > 0 {
		note = strings.TrimSpace(note + " " + strings.Join(moved, "; ") + ".")
	}
	pv := &tools.Preview{Files: changes, Note: note}
	pv.Rebuild = func(contents []string) (tools.Args, error) {
		if len(contents) != len(changes) {
			return nil, failf("%d files' contents were expected", len(changes))
		}
		var b strings.Builder
		for i, c := range changes {
			exists := c.NewExists || contents[i] != ""
			b.WriteString(textdiff.Unified(patchName(c), c.Old, contents[i], c.OldExists, exists))
		}
		return tools.Args{"patch": b.String()}, nil
	}
	return pv, nil
}

// patchName is how a rebuilt patch names a file: relative to the working
// directory when inside it, else absolute.
func patchName(c tools.FileChange) string {
	if strings.HasPrefix(c.Shown, "./") {
		return filepath.ToSlash(strings.TrimPrefix(c.Shown, "./"))
	}
	return c.Path
}

// Execute applies the patch.
func (a *ApplyPatch) Execute(ctx context.Context, args tools.Args) tools.Result {
	pv, err := a.Preview(ctx, args)
	if err != nil {
		return tools.Fail("%s", err.Error())
	}
	var parts []string
	for _, f := range pv.Files {
		switch {
		case !f.NewExists:
			parts = append(parts, "deleted "+f.Shown)
		case !f.OldExists:
			parts = append(parts, "created "+f.Shown)
		default:
			add, del := textdiff.Counts(textdiff.Unified("f", f.Old, f.New, true, true))
			parts = append(parts, fmt.Sprintf("patched %s (+%d −%d)", f.Shown, add, del))
		}
	}
	what := "Applied the patch: " + strings.Join(parts, ", ") + "."
	return a.apply(ctx, pv, what)
}

// applyHunks applies a file's hunks in order. Each is looked for at the
// line its header names, shifted by how far the hunks before it moved,
// then at the nearest line where it matches; shifts describe the hunks
// that moved.
func applyHunks(content string, frags []*gitdiff.TextFragment, name string) (string, []string, error) {
	lines := strings.SplitAfter(content, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var out, shifts []string
	pos, offset := 0, 0
	for i, f := range frags {
		var pre, post []string
		for _, l := range f.Lines {
			if l.Op != gitdiff.OpAdd {
				pre = append(pre, l.Line)
			}
			if l.Op != gitdiff.OpDelete {
				post = append(post, l.Line)
			}
		}
		want := int(f.OldPosition) - 1 + offset
		if f.OldLines == 0 {
			want = int(f.OldPosition) + offset // "-5,0": after line 5
		}
		at := findHunk(lines, pre, want, pos)
		if at < 0 {
			return "", nil, hunkFailure(i+1, len(frags), f, lines, pre, want, name)
		}
		if at != want {
			d := at - want
			dir := "later"
			if d < 0 {
				dir, d = "earlier", -d
			}
			shifts = append(shifts, fmt.Sprintf("hunk %d of %s matched %d line%s %s than its header says", i+1, name, d, plural(d), dir))
		}
		out = append(out, lines[pos:at]...)
		if at+len(pre) == len(lines) && len(post) > 0 && len(lines) > 0 && !strings.HasSuffix(lines[len(lines)-1], "\n") &&
			strings.HasSuffix(post[len(post)-1], "\n") && strings.TrimSuffix(post[len(post)-1], "\n") == lines[len(lines)-1] {
			// The file ends without a line break and the patch did not
			// say so ("\ No newline at end of file"): keep it that way.
			post[len(post)-1] = strings.TrimSuffix(post[len(post)-1], "\n")
		}
		out = append(out, post...)
		pos = at + len(pre)
		offset = at - (want - offset)
	}
	out = append(out, lines[pos:]...)
	return strings.Join(out, ""), shifts, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// findHunk returns where pre matches lines at or after from: want if it
// matches there, else the nearest match; -1 when there is none.
func findHunk(lines, pre []string, want, from int) int {
	last := len(lines) - len(pre)
	if len(pre) == 0 {
		return min(max(want, from), len(lines))
	}
	for d := 0; want-d >= from || want+d <= last; d++ {
		for _, at := range []int{want - d, want + d} {
			if at >= from && at <= last && matchesAt(lines, pre, at) {
				return at
			}
			if d == 0 {
				break
			}
		}
	}
	return -1
}

// matchesAt compares exactly, except that the file's last line may lack
// the line break the patch gives it.
func matchesAt(lines, pre []string, at int) bool {
	for j, p := range pre {
		l := lines[at+j]
		if l == p {
			continue
		}
		if at+j == len(lines)-1 && !strings.HasSuffix(l, "\n") && strings.TrimSuffix(p, "\n") == l {
			continue
		}
		return false
	}
	return true
}

// hunkFailure says which hunk does not apply and, where the header
// points, the first line that differs.
func hunkFailure(n, of int, f *gitdiff.TextFragment, lines, pre []string, want int, name string) error {
	msg := fmt.Sprintf("The patch does not apply: hunk %d of %d for %s (%s) does not match the file: its context and removed lines are not there as the patch has them.",
		n, of, shown(name), strings.TrimSpace(f.Header()))
	for j, p := range pre {
		at := want + j
		if at < 0 || at >= len(lines) {
			msg += fmt.Sprintf(" The file has %d lines.", len(lines))
			break
		}
		if lines[at] != p {
			msg += fmt.Sprintf(" At line %d the patch expects %s, the file has %s.", at+1,
				strconv.Quote(tools.Truncate(strings.TrimSuffix(p, "\n"), 80)), strconv.Quote(tools.Truncate(strings.TrimSuffix(lines[at], "\n"), 80)))
			break
		}
	}
	return failf("%s Nothing was changed; read the file again and make the patch from what is there.", msg)
}

// hunkHeader is "@@ -a[,b] +c[,d] @@ rest".
var hunkHeader = lazyregexp.New(`^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$`)

// recount rewrites every hunk header's line counts from the lines that
// follow it, taking an empty line inside a hunk as an empty context line
// (a line whose leading space was lost).
func recount(patch string) string {
	lines := strings.Split(patch, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		m := hunkHeader().FindStringSubmatch(lines[i])
		if m == nil {
			out = append(out, lines[i])
			continue
		}
		var body []string
		oldN, newN := 0, 0
		j := i + 1
	hunk:
		for ; j < len(lines); j++ {
			l := lines[j]
			if strings.HasPrefix(l, "@@ ") || strings.HasPrefix(l, "diff --git ") ||
				strings.HasPrefix(l, "--- ") && j+1 < len(lines) && strings.HasPrefix(lines[j+1], "+++ ") {
				break
			}
			switch {
			case l == "" && j == len(lines)-1:
				break hunk // the patch's final line break
			case l == "":
				l = " " // an empty context line that lost its space
				oldN++
				newN++
			case l[0] == ' ':
				oldN++
				newN++
			case l[0] == '-':
				oldN++
			case l[0] == '+':
				newN++
			case l[0] == '\\':
			default:
				break hunk // not a hunk line: the parser judges the rest
			}
			body = append(body, l)
		}
		out = append(out, fmt.Sprintf("@@ -%s,%d +%s,%d @@%s", m[1], oldN, m[2], newN, m[3]))
		out = append(out, body...)
		i = j - 1
	}
	res := strings.Join(out, "\n")
	if strings.HasSuffix(patch, "\n") && !strings.HasSuffix(res, "\n") {
		res += "\n"
	}
	return res
}
