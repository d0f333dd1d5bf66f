package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/jarvis-workbench/jarvis/store/sessions"
)

// Undo puts back what the write tools changed, from the session's
// record: the content a file had before (or its absence). It never
// overwrites work done since: each file must be exactly what the change
// left (the person, a command or a later change may have edited it), or
// nothing is restored and the refusal names the file. Every file of the
// undo is checked before any is written.

// UndoStore is where changes are read and undos recorded
// (store/sessions.Store).
type UndoStore interface {
	Load(id string) (sessions.Session, []sessions.Message, error)
	Changes(id string) (sessions.Session, []sessions.Change, error)
	UndoQueued(id string, ids ...string) error
}

// ChangedSinceError says a file is no longer what a change left.
type ChangedSinceError struct {
	Name string
	// Gone: the file was deleted since; Exists: a file the change
	// deleted is there again.
	Gone, Exists bool
}

func (e *ChangedSinceError) Error() string {
	switch {
	case e.Gone:
		return fmt.Sprintf("%s was deleted since the change; nothing was restored", e.Name)
	case e.Exists:
		return fmt.Sprintf("%s was created again since the change deleted it; nothing was restored", e.Name)
	}
	return fmt.Sprintf("%s changed since (an edit of yours, a command or a later change); nothing was restored: undo the later change first, or put the file back by hand", e.Name)
}

// ErrNothingToUndo means every change of the session (or of the turn
// asked for) was undone already, or there was none.
var ErrNothingToUndo = errors.New("nothing to undo")

// Pick chooses what /undo takes back from a session's changes: those of
// the last call that changed files and still stand, or, with turn > 0,
// every change of that turn that still stands (turns as sessions.Turns
// numbers them, from msgs).
func Pick(changes []sessions.Change, msgs []sessions.Message, turn int) []sessions.Change {
	var out []sessions.Change
	if turn > 0 {
		for _, g := range sessions.GroupChanges(msgs, changes) {
			if g.Turn == turn {
				for _, c := range g.Changes {
					if !c.Undone() {
						out = append(out, c)
					}
				}
			}
		}
		return out
	}
	for i := len(changes) - 1; i >= 0; i-- {
		c := changes[i]
		if c.Undone() {
			continue
		}
		if len(out) > 0 && c.CallID != out[0].CallID {
			break
		}
		if len(out) > 0 && c.CallID == "" {
			break // changes without a call are taken back one at a time
		}
		out = append([]sessions.Change{c}, out...)
	}
	return out
}

// Undo takes back, in session id, what Pick chooses (the last call's
// changes, or turn's), and records that they were undone. It returns
// them; on error nothing was restored.
func Undo(st UndoStore, id string, turn int) ([]sessions.Change, error) {
	_, changes, err := st.Changes(id)
	if err != nil {
		return nil, err
	}
	var msgs []sessions.Message
	if turn > 0 {
		if _, msgs, err = st.Load(id); err != nil {
			return nil, err
		}
	}
	pick := Pick(changes, msgs, turn)
	if len(pick) == 0 {
		return nil, ErrNothingToUndo
	}
	if err := Restore(pick); err != nil {
		return nil, err
	}
	ids := make([]string, len(pick))
	for i, c := range pick {
		ids[i] = c.ID
	}
	if err := st.UndoQueued(id, ids...); err != nil {
		return pick, fmt.Errorf("the files were restored, but the session could not record it: %w", err)
	}
	return pick, nil
}

// fileState is a file as Restore sees it: its content, or its absence.
type fileState struct {
	content string
	exists  bool
	mode    fs.FileMode
	name    string
}

// Restore takes back changes (oldest first, as Pick gives them): newest
// first in memory, checking every file against what the changes left,
// then writing each file's earliest Before once. On error nothing was
// written (unless a write itself failed, which the error says).
func Restore(changes []sessions.Change) error {
	if len(changes) == 0 {
		return ErrNothingToUndo
	}
	now := map[string]*fileState{}
	var order []string
	for i := len(changes) - 1; i >= 0; i-- {
		c := changes[i]
		st, ok := now[c.Path]
		if !ok {
			disk, err := onDisk(c.Path)
			if err != nil {
				return fmt.Errorf("%s cannot be read (%v); nothing was restored", c.Name(), err)
			}
			st = &disk
			st.name = c.Name()
			now[c.Path] = st
			order = append(order, c.Path)
		}
		switch {
		case c.AfterExists && !st.exists:
			return &ChangedSinceError{Name: c.Name(), Gone: true}
		case !c.AfterExists && st.exists:
			return &ChangedSinceError{Name: c.Name(), Exists: true}
		case c.AfterExists && st.content != c.After:
			return &ChangedSinceError{Name: c.Name()}
		}
		st.content, st.exists = c.Before, c.BeforeExists
		if c.Mode != 0 {
			st.mode = fs.FileMode(c.Mode)
		}
	}
	slices.Reverse(order)
	for _, p := range order {
		st := now[p]
		var err error
		if st.exists {
			err = WriteAtomic(p, []byte(st.content), st.mode)
		} else if err = os.Remove(p); errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		if err != nil {
			return fmt.Errorf("cannot restore %s: %w", st.name, err)
		}
	}
	return nil
}

// onDisk reads a file's state for Restore (absent is not an error).
func onDisk(p string) (fileState, error) {
	var st fileState
	info, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if !info.Mode().IsRegular() {
		return st, errors.New("it is not a regular file any more")
	}
	data, err := ReadRegular(p, info, MaxFileSize+1)
	if err != nil {
		return st, err
	}
	st.content, st.exists, st.mode = string(data), true, info.Mode().Perm()
	return st, nil
}
