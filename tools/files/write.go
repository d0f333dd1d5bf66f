package files

import (
	"context"
	"fmt"
	"strings"

	"github.com/jarvis-workbench/jarvis/internal/textdiff"
	"github.com/jarvis-workbench/jarvis/tools"
)

// onePath is what the tools that change one file (its "path") share:
// refusals, the reason to ask and the grant's scope all come from it.
type onePath struct{ changer }

// Refuse refuses secrets and paths past allowed_dirs before anyone is asked.
func (o *onePath) Refuse(args tools.Args) *tools.Refusal { return o.refuse(args.String("path")) }

// ConfirmationFor says why the call asks when the file is outside the
// working directory.
func (o *onePath) ConfirmationFor(args tools.Args) (bool, string) {
	return o.confirmationFor(args.String("path"))
}

// GrantScope is the file's directory.
func (o *onePath) GrantScope(args tools.Args) tools.Scope { return o.scope(args.String("path")) }

// FileWrite creates a text file or replaces one the model read, after the
// person saw the diff (see change.go for the rules every write tool
// follows).
type FileWrite struct{ onePath }

// NewFileWrite builds file_write with its settings' allowed directories,
// recording changes in log (nil: not recorded).
func NewFileWrite(deps tools.Deps, log ChangeLog) *FileWrite {
	return &FileWrite{onePath{newChanger("file_write", deps, log)}}
}

var fileWriteSpec = tools.Spec{
	Name: "file_write",
	Description: "Create a UTF-8 text file, or replace the whole content of one (at most 1 MiB). The user sees the diff and approves it. " +
		"Replacing an existing file requires having read it with file_read in this session, and it must not have changed since. " +
		"Prefer file_edit to change part of a file. Missing parent directories are created. Sensitive files are always refused.",
	Parameters: tools.Params(
		tools.StringParam("path", "Path of the file to write", true),
		tools.StringParam("content", "The file's whole new content", true),
	),
	Category:             "filesystem",
	RequiresConfirmation: true,
	TimeoutSeconds:       30,
}

// Spec returns file_write's spec.
func (w *FileWrite) Spec() tools.Spec { return withReach(fileWriteSpec, w.reach) }

// withReach puts the directories a tool acts in into its spec's metadata.
func withReach(s tools.Spec, r *Reach) tools.Spec {
	if dirs := r.Dirs(); len(dirs) > 0 {
		s.Metadata = map[string]any{"reach": dirs}
	}
	return s
}

// Preview works out the file before and after.
func (w *FileWrite) Preview(ctx context.Context, args tools.Args) (*tools.Preview, error) {
	path, content := args.String("path"), args.String("content")
	cur, err := w.load(ctx, path, false)
	if err != nil {
		return nil, err
	}
	if err := checkNew(path, content); err != nil {
		return nil, err
	}
	if cur.exists && cur.content == content {
		return nil, failf("%s already has exactly this content: nothing to write.", shown(path))
	}
	return oneFile(cur, content, func(edited string) tools.Args {
		return tools.Args{"path": path, "content": edited}
	}), nil
}

// oneFile is the preview of a change to one file, whose edited content
// rebuild turns into the tool's arguments.
func oneFile(cur current, content string, rebuild func(edited string) tools.Args) *tools.Preview {
	return &tools.Preview{
		Files: []tools.FileChange{fileChange(cur, content, false)},
		Rebuild: func(contents []string) (tools.Args, error) {
			if len(contents) != 1 {
				return nil, failf("one file's content was expected")
			}
			return rebuild(contents[0]), nil
		},
	}
}

// Execute writes the file.
func (w *FileWrite) Execute(ctx context.Context, args tools.Args) tools.Result {
	pv, err := w.Preview(ctx, args)
	if err != nil {
		return tools.Fail("%s", err.Error())
	}
	f := pv.Files[0]
	what := fmt.Sprintf("Wrote %s (%s).", f.Shown, countLines(textdiff.LineCount(f.New)))
	if !f.OldExists {
		what = fmt.Sprintf("Created %s (%s).", f.Shown, countLines(textdiff.LineCount(f.New)))
	}
	return w.apply(ctx, pv, what)
}

func countLines(n int) string {
	if n == 1 {
		return "1 line"
	}
	return fmt.Sprintf("%d lines", n)
}

// FileEdit replaces an exact piece of text in a file the model read.
type FileEdit struct{ onePath }

// NewFileEdit builds file_edit with its settings' allowed directories,
// recording changes in log (nil: not recorded).
func NewFileEdit(deps tools.Deps, log ChangeLog) *FileEdit {
	return &FileEdit{onePath{newChanger("file_edit", deps, log)}}
}

var fileEditSpec = tools.Spec{
	Name: "file_edit",
	Description: "Replace an exact piece of text in a UTF-8 text file with new text. old_string must match the file exactly " +
		"(whitespace and indentation included) and only once, unless replace_all is true; include enough surrounding lines to make it unique. " +
		"The file must have been read with file_read in this session and not changed since. The user sees the diff and approves it.",
	Parameters: tools.Params(
		tools.StringParam("path", "Path of the file to edit", true),
		tools.StringParam("old_string", "The exact text to replace", true),
		tools.StringParam("new_string", "The text to put in its place", true),
		tools.BoolParam("replace_all", "Replace every occurrence of old_string (default: false, which requires it to occur once)", false),
	),
	Category:             "filesystem",
	RequiresConfirmation: true,
	TimeoutSeconds:       30,
}

// Spec returns file_edit's spec.
func (e *FileEdit) Spec() tools.Spec { return withReach(fileEditSpec, e.reach) }

// Preview works out the edited file.
func (e *FileEdit) Preview(ctx context.Context, args tools.Args) (*tools.Preview, error) {
	path := args.String("path")
	oldS, newS, all := args.String("old_string"), args.String("new_string"), args.Bool("replace_all")
	cur, err := e.load(ctx, path, true)
	if err != nil {
		return nil, err
	}
	content, err := replace(cur.content, oldS, newS, all, path)
	if err != nil {
		return nil, err
	}
	if err := checkNew(path, content); err != nil {
		return nil, err
	}
	return oneFile(cur, content, func(edited string) tools.Args {
		o, n := minimalEdit(cur.content, edited)
		return tools.Args{"path": path, "old_string": o, "new_string": n}
	}), nil
}

// Execute makes the edit.
func (e *FileEdit) Execute(ctx context.Context, args tools.Args) tools.Result {
	pv, err := e.Preview(ctx, args)
	if err != nil {
		return tools.Fail("%s", err.Error())
	}
	n := 1
	if args.Bool("replace_all") {
		n = strings.Count(pv.Files[0].Old, args.String("old_string"))
	}
	what := fmt.Sprintf("Edited %s: replaced %s.", pv.Files[0].Shown, countOccurrences(n))
	return e.apply(ctx, pv, what)
}

func countOccurrences(n int) string {
	if n == 1 {
		return "1 occurrence"
	}
	return fmt.Sprintf("%d occurrences", n)
}

// replace is file_edit's rule: old must occur exactly once (or, with all,
// at least once), and the edit must change something. An empty old
// replaces the content of an empty file, and nothing else.
func replace(content, old, new string, all bool, path string) (string, error) {
	switch {
	case old == "" && content == "":
		return new, nil
	case old == "":
		return "", failf("old_string is empty: give the exact text to replace (file_write replaces a whole file).")
	case old == new:
		return "", failf("old_string and new_string are the same: the edit would change nothing.")
	}
	n := strings.Count(content, old)
	switch {
	case n == 0:
		return "", failf("old_string was not found in %s. It must match exactly, whitespace and indentation included%s; read the file again if it may have changed.", shown(path), nearMiss(content, old))
	case n > 1 && !all:
		return "", failf("old_string occurs %d times in %s: include more of the surrounding lines so it occurs once, or set replace_all to replace every one.", n, shown(path))
	}
	if all {
		return strings.ReplaceAll(content, old, new), nil
	}
	return strings.Replace(content, old, new, 1), nil
}

// nearMiss hints at why old was not found: it matches when whitespace is
// ignored, or its first line is in the file.
func nearMiss(content, old string) string {
	squash := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	if strings.Contains(squash(content), squash(old)) {
		return " (it matches when spaces and line breaks are ignored: check the indentation, tabs against spaces, and trailing spaces)"
	}
	first, _, _ := strings.Cut(strings.TrimSpace(old), "\n")
	if first = strings.TrimSpace(first); first != "" && strings.Contains(content, first) {
		return fmt.Sprintf(" (its first line, %q, is in the file, so the lines after it differ)", tools.Truncate(first, 80))
	}
	return ""
}

// minimalEdit turns an edited version of content into the old_string and
// new_string of file_edit that make it: the changed middle, widened to
// whole lines and then line by line until old_string occurs once in
// content (so a person's edit of the resulting file is an edit the model
// can read).
func minimalEdit(content, edited string) (old, new string) {
	if content == "" {
		return "", edited
	}
	p := 0
	for p < len(content) && p < len(edited) && content[p] == edited[p] {
		p++
	}
	s := 0
	for s < len(content)-p && s < len(edited)-p && content[len(content)-1-s] == edited[len(edited)-1-s] {
		s++
	}
	start := strings.LastIndexByte(content[:p], '\n') + 1
	end := len(content) - s
	if i := strings.IndexByte(content[end:], '\n'); i >= 0 {
		end += i + 1
	} else {
		end = len(content)
	}
	for {
		old = content[start:end]
		if old != "" && strings.Count(content, old) == 1 {
			break
		}
		if start == 0 && end == len(content) {
			break
		}
		if start > 0 {
			start = strings.LastIndexByte(content[:start-1], '\n') + 1
		}
		if end < len(content) {
			if i := strings.IndexByte(content[end:], '\n'); i >= 0 {
				end += i + 1
			} else {
				end = len(content)
			}
		}
	}
	tail := len(content) - end
	return old, edited[start : len(edited)-tail]
}
