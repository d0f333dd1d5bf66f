package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/tools"
)

// The tools that change files (file_write, file_edit, apply_patch) share
// one path from the arguments to the disk, so each rule holds for all of
// them:
//
//  1. refused before anyone is asked (Refuse): a secret file by its name,
//     a path past the tool's allowed_dirs;
//  2. worked out before anyone is asked (Preview): the file as it is (a
//     regular UTF-8 text file of at most MaxFileSize, not a secret by its
//     content or its links, and, when it exists, the one the model last
//     read or wrote in this session), and the file as it would be, shown
//     to the person as a diff;
//  3. always asked, the dialog naming the directory a grant would cover;
//  4. written as approved (Execute): worked out again, refused when the
//     files are no longer what the person saw, then each file written
//     whole to a temporary file beside it and renamed over it, its mode
//     kept; the change is recorded in the session for /undo.

// ChangeLog records the changes the tools make, in the session they
// belong to (store/sessions.Store queues them on the database).
type ChangeLog interface {
	RecordChangeQueued(session string, c sessions.Change) (sessions.Change, error)
}

// changer is what the write tools share: their reach, where they record
// changes, and their name for messages.
type changer struct {
	name  string
	reach *Reach
	log   ChangeLog
}

func newChanger(name string, deps tools.Deps, log ChangeLog) changer {
	return changer{name: name, reach: NewReachIn("[tool."+name+"] allowed_dirs", deps.For(name).AllowedDirs, deps.WorkDir), log: log}
}

// refuse refuses, before anyone is asked, a secret by name and a path past
// allowed_dirs.
func (c changer) refuse(paths ...string) *tools.Refusal {
	secrets := c.reach.Secrets()
	for _, p := range paths {
		if strings.TrimSpace(p) == "" {
			continue
		}
		if ref := secrets.Refuse(p); ref != nil {
			return ref
		}
		if ref := c.reach.Refuse(p, "write"); ref != nil {
			return ref
		}
	}
	return nil
}

// confirmationFor gives the reason to show when a path is outside the
// working directory (every call asks: the spec requires it).
func (c changer) confirmationFor(paths ...string) (bool, string) {
	for _, p := range paths {
		if ok, why := c.reach.ConfirmationFor(p, "changes"); ok {
			return true, why
		}
	}
	return true, ""
}

// scope is the directory of the files: a grant covers changes there. A
// patch of files in several directories is granted only for exactly
// those.
func (c changer) scope(paths ...string) tools.Scope {
	var dirs, shownDirs []string
	for _, p := range paths {
		if strings.TrimSpace(p) == "" {
			continue
		}
		s := c.reach.DirScope(p, false, "%s")
		if !containsString(dirs, s.Value) {
			dirs = append(dirs, s.Value)
			shownDirs = append(shownDirs, c.relShown(s.Value))
		}
	}
	if len(dirs) == 0 {
		return tools.Scope{Kind: tools.ScopeDir, Value: "", Words: "changes in no directory"}
	}
	words := "changes in " + strings.Join(shownDirs, " and ") + " (not its subfolders)"
	if len(dirs) > 1 {
		words = "changes in " + strings.Join(shownDirs, " and ") + " together (not their subfolders)"
	}
	return tools.Scope{Kind: tools.ScopeDir, Value: strings.Join(dirs, string(os.PathListSeparator)), Words: words}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// current is a file as it is on disk before a change.
type current struct {
	// shown is real as the person reads it (relShown).
	path, real, shown string
	exists            bool
	content           string
	mode              fs.FileMode
}

// failure is a message for the model, a whole sentence: the tools' errors
// are what the call's result says.
type failure struct{ msg string }

func (f *failure) Error() string { return f.msg }

func failf(format string, a ...any) error { return &failure{msg: fmt.Sprintf(format, a...)} }

// load reads the file a call would change, with every rule on what may
// be changed. mustExist is file_edit's: an edit needs a file.
func (c changer) load(ctx context.Context, path string, mustExist bool) (current, error) {
	if strings.TrimSpace(path) == "" {
		return current{}, failf("No path provided.")
	}
	secrets := c.reach.Secrets()
	real := c.reach.Resolve(path)
	cur := current{path: path, real: real, shown: c.relShown(real), mode: 0o644}
	if why := secrets.File(path, real); why != "" {
		return cur, failf("%s", Denied(path, why))
	}
	if c.reach.Limited() && !c.reach.Contains(real) {
		return cur, failf("%s", c.reach.refusal(path, "write").Message)
	}
	info, err := os.Stat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if mustExist {
			return cur, failf("File not found: %s. To create a file, use file_write.", shown(path))
		}
		if dir := nearestDir(real); dir != "" {
			if why := secrets.Dir(dir); why != "" {
				return cur, failf("%s", Denied(path, why))
			}
		}
		return cur, nil
	case err != nil:
		if errors.Is(err, fs.ErrPermission) {
			return cur, failf("Permission denied: %s", shown(path))
		}
		return cur, failf("Cannot change %s: %v", shown(path), err)
	case info.IsDir():
		return cur, failf("%s is a directory, not a file.", shown(path))
	case !info.Mode().IsRegular():
		return cur, failf("Not a file: %s (only regular files are changed).", shown(path))
	case info.Size() > MaxFileSize:
		return cur, failf("File too large: %s has %d bytes; files of more than %d bytes are not changed.", shown(path), info.Size(), MaxFileSize)
	}
	data, err := ReadRegular(real, info, MaxFileSize)
	if err != nil {
		return cur, failf("%s", readFailure(path, err))
	}
	if why := secrets.Opened(info, data); why != "" {
		return cur, failf("%s", Denied(path, why))
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return cur, failf("Cannot change %s: it is not a UTF-8 text file (binary content); binary files are never changed.", shown(path))
	}
	cur.exists, cur.content, cur.mode = true, string(data), info.Mode().Perm()
	session := tools.CallOf(ctx).Session
	switch seen, same := reads.current(session, real, data); {
	case !seen:
		return cur, failf("%s exists and was not read in this session: read it with file_read before changing it, so the change starts from what is there.", shown(path))
	case !same:
		return cur, failf("%s changed on disk since you last read it (someone or something else edited it): read it again with file_read, then make the change from what is there now.", shown(path))
	}
	return cur, nil
}

// nearestDir is the deepest existing directory on the way to real.
func nearestDir(real string) string {
	for dir := filepath.Dir(real); ; dir = filepath.Dir(dir) {
		if info, err := os.Stat(dir); err == nil && info.IsDir() {
			return dir
		}
		if dir == filepath.Dir(dir) {
			return ""
		}
	}
}

// checkNew checks the content a change would leave.
func checkNew(path, content string) error {
	if len(content) > MaxFileSize {
		return failf("The new content of %s is %d bytes; files of more than %d bytes are not written.", shown(path), len(content), MaxFileSize)
	}
	if !utf8.ValidString(content) || strings.IndexByte(content, 0) >= 0 {
		return failf("The new content of %s is not UTF-8 text (binary content); only text files are written.", shown(path))
	}
	return nil
}

// fileChange is a file's change for the preview.
func fileChange(cur current, content string, deleted bool) tools.FileChange {
	return tools.FileChange{Path: cur.real, Shown: cur.shown, Old: cur.content, New: content,
		OldExists: cur.exists, NewExists: !deleted, Mode: uint32(cur.mode)}
}

// relShown names a resolved path for the person: relative to the working
// directory when inside it.
func (c changer) relShown(real string) string {
	if wd, err := c.reach.WorkDir(); err == nil {
		if wdReal, err := filepath.EvalSymlinks(wd); err == nil && Within(wdReal, real) {
			if rel, err := filepath.Rel(wdReal, real); err == nil {
				if rel == "." {
					return "the working directory"
				}
				return "./" + rel
			}
		}
	}
	return shown(real)
}

// apply writes a worked-out change, after checking it is the one
// approved (ctx's) and that every file is still in reach and as it was
// when worked out. It records the change and notes the new contents as
// read. It returns the result the model reads.
func (c changer) apply(ctx context.Context, pv *tools.Preview, summary string) tools.Result {
	if err := c.reach.Err(); err != nil {
		return tools.Fail("%s is misconfigured: %v. Fix allowed_dirs under [tool.%s] in the config file.", c.name, err, c.name)
	}
	if approved := tools.Approved(ctx); approved != nil && !samePreview(approved, pv) {
		return tools.Fail("Nothing was written: the files are no longer what the user approved (they changed after the question was asked). Read them again and propose the change anew.")
	}
	for _, f := range pv.Files {
		if !c.reach.Permits(f.Path, tools.Confirmed(ctx)) {
			return c.reach.Outside(f.Shown, "write")
		}
	}
	call := tools.CallOf(ctx)
	var notes []string
	for i, f := range pv.Files {
		if err := ctx.Err(); err != nil {
			return partial(pv.Files[:i], "Cancelled")
		}
		if err := commit(f); err != nil {
			if i > 0 {
				return partial(pv.Files[:i], fmt.Sprintf("Writing %s failed (%v)", f.Shown, err))
			}
			return tools.Fail("Cannot write %s: %v", f.Shown, err)
		}
		if f.NewExists {
			if info, err := os.Stat(f.Path); err == nil {
				reads.saw(call.Session, f.Path, []byte(f.New), info.ModTime())
			}
		} else {
			reads.forget(call.Session, f.Path)
		}
		if note := c.record(call, f); note != "" && !containsString(notes, note) {
			notes = append(notes, note)
		}
	}
	diff := pv.Diff()
	text := summary
	if pv.Note != "" {
		text += " Note: " + pv.Note
	}
	for _, n := range notes {
		text += " " + n
	}
	r := tools.OK(text).WithMeta(tools.MetaDiff, diff)
	paths := make([]string, len(pv.Files))
	for i, f := range pv.Files {
		paths[i] = f.Path
	}
	return r.WithMeta("paths", paths)
}

// partial is the result of a change that stopped after some files were
// written: the model must know which.
func partial(done []tools.FileChange, why string) tools.Result {
	names := make([]string, len(done))
	for i, f := range done {
		names[i] = f.Shown
	}
	return tools.Fail("%s after %s had been written; the other files are unchanged (the person can take back what was written with undo).", why, strings.Join(names, ", "))
}

// record writes the change to the session's log; the note says why it
// could not be ("" when it was).
func (c changer) record(call tools.CallInfo, f tools.FileChange) string {
	if c.log == nil || call.Session == "" {
		return "(The change is not recorded for undo: this run keeps no session.)"
	}
	_, err := c.log.RecordChangeQueued(call.Session, sessions.Change{CallID: call.ID, Tool: c.name, Path: f.Path, Shown: f.Shown,
		Before: f.Old, BeforeExists: f.OldExists, After: f.New, AfterExists: f.NewExists, Mode: f.Mode})
	if err != nil {
		return "(The change could not be recorded for undo: " + err.Error() + ".)"
	}
	return ""
}

// samePreview reports whether two workings-out of a change agree.
func samePreview(a, b *tools.Preview) bool {
	if len(a.Files) != len(b.Files) {
		return false
	}
	for i := range a.Files {
		x, y := a.Files[i], b.Files[i]
		if x.Path != y.Path || x.Old != y.Old || x.OldExists != y.OldExists || x.New != y.New || x.NewExists != y.NewExists {
			return false
		}
	}
	return true
}

// commit writes one file's new state: the content through a temporary
// file in the same directory, synced and renamed over the file (so a
// crash leaves the old file or the new one, never half of one), with the
// file's mode; or the file removed.
func commit(f tools.FileChange) error {
	if !f.NewExists {
		if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	return WriteAtomic(f.Path, []byte(f.New), fs.FileMode(f.Mode))
}

// WriteAtomic replaces (or creates) path with data and mode, through a
// temporary file beside it that is synced and renamed over it. Missing
// parent directories are created.
func WriteAtomic(path string, data []byte, mode fs.FileMode) error {
	if mode == 0 {
		mode = 0o644
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".jarvis-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Chmod(mode.Perm()); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // the rename itself survives a crash
		d.Close()
	}
	return nil
}
