package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jarvis-workbench/jarvis/internal/textdiff"
	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/tools/files"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// changeJSON is one change as `changes --json` and `undo --json` print it.
type changeJSON struct {
	ID       string     `json:"id"`
	At       time.Time  `json:"at"`
	Turn     int        `json:"turn"`
	Tool     string     `json:"tool"`
	CallID   string     `json:"call_id,omitempty"`
	Path     string     `json:"path"`
	Shown    string     `json:"shown"`
	Created  bool       `json:"created,omitempty"`
	Deleted  bool       `json:"deleted,omitempty"`
	Added    int        `json:"added"`
	Removed  int        `json:"removed"`
	Diff     string     `json:"diff"`
	UndoneAt *time.Time `json:"undone_at,omitempty"`
}

func toJSON(c sessions.Change, turn int) changeJSON {
	d := changeDiff(c)
	add, del := textdiff.Counts(d)
	j := changeJSON{ID: c.ID, At: c.At, Turn: turn, Tool: c.Tool, CallID: c.CallID, Path: c.Path, Shown: c.Name(),
		Created: !c.BeforeExists, Deleted: !c.AfterExists, Added: add, Removed: del, Diff: d}
	if c.Undone() {
		at := c.UndoneAt
		j.UndoneAt = &at
	}
	return j
}

func changeDiff(c sessions.Change) string {
	return textdiff.Unified(strings.TrimPrefix(c.Name(), "./"), c.Before, c.After, c.BeforeExists, c.AfterExists)
}

// sessionFor opens the database and names the session a command is about:
// id (or a prefix), or the most recent one.
func (a *cmdline) sessionFor(id, what string) (*sessions.Store, string, error) {
	db, err := a.openDB(what)
	if err != nil {
		return nil, "", err
	}
	st := sessions.New(db)
	if id != "" {
		s, err := st.Get(id)
		if err != nil {
			return nil, "", failErr("%v", err)
		}
		return st, s.ID, nil
	}
	last, ok, err := st.Last()
	if err != nil {
		return nil, "", failErr("%v", err)
	}
	if !ok {
		return nil, "", failErr("there is no session yet")
	}
	return st, last.ID, nil
}

func (a *cmdline) changesCommand() *cobra.Command {
	var id string
	var asJSON, stat bool
	cmd := &cobra.Command{
		Use:   "changes",
		Short: "List the files the tools changed in a session, with their diffs",
		Long: `Every file file_write, file_edit and apply_patch change is recorded in its
session: the content before and after. This lists them turn by turn (as
jarvis undo --turn numbers them), with each change's diff, and says which
were undone. Without --session, the most recent session.`,
		Example: "  jarvis changes\n  jarvis changes --session 01jq --stat\n  jarvis changes --json",
		Args:    argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, sid, err := a.sessionFor(id, "changes")
			if err != nil {
				return err
			}
			_, list, err := st.Changes(sid)
			if err != nil {
				return failErr("%v", err)
			}
			_, msgs, err := st.Load(sid)
			if err != nil {
				return failErr("%v", err)
			}
			groups := sessions.GroupChanges(msgs, list)
			if asJSON {
				out := struct {
					Session string       `json:"session"`
					Changes []changeJSON `json:"changes"`
				}{Session: sid, Changes: []changeJSON{}}
				for _, g := range groups {
					for _, c := range g.Changes {
						out.Changes = append(out.Changes, toJSON(c, g.Turn))
					}
				}
				return writeJSON(a.io.Out, out)
			}
			if len(list) == 0 {
				fmt.Fprintf(a.io.Out, "No file was changed in session %s.\n", sid)
				return nil
			}
			fmt.Fprintf(a.io.Out, "Session %s: %s\n", sid, format.Count(len(list), "change"))
			for _, g := range groups {
				head := fmt.Sprintf("\nTurn %d", g.Turn)
				if q := strings.TrimSpace(g.Question); q != "" {
					head += ": " + format.Cut(strings.Join(strings.Fields(q), " "), 70)
				}
				fmt.Fprintln(a.io.Out, safe.Text(head))
				for _, c := range g.Changes {
					d := changeDiff(c)
					line := fmt.Sprintf("  %s · %s · %s", textdiff.Summary(d, c.Name()), c.Tool, c.At.Local().Format(timeLayout))
					if c.Undone() {
						line += " · undone"
					}
					fmt.Fprintln(a.io.Out, safe.Text(line))
					if !stat {
						for _, l := range strings.Split(strings.TrimSuffix(d, "\n"), "\n") {
							fmt.Fprintln(a.io.Out, "    "+safe.Text(l))
						}
					}
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&id, "session", "", "the session's id or a unique prefix (default: the most recent session)")
	f.BoolVar(&stat, "stat", false, "only the files and their line counts, no diffs")
	f.BoolVar(&asJSON, "json", false, "print {session, changes: [{id, at, turn, tool, call_id, path, shown, created, deleted, added, removed, diff, undone_at}]}")
	return cmd
}

func (a *cmdline) undoCommand() *cobra.Command {
	var id string
	var turn int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "undo",
		Short: "Put back the files the last change of a session changed (or a turn's)",
		Long: `Restores what the tools changed: the files of the session's last change that
still stands, or with --turn N every change of turn N (as jarvis changes
numbers them), newest first. A file that is no longer what the change left
(you edited it, a command or a later change did) is not overwritten: the
undo is refused, naming it, and nothing is restored.`,
		Example: "  jarvis undo\n  jarvis undo --session 01jq --turn 2",
		Args:    argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if turn < 0 {
				return usageErr("--turn counts from 1, not %d", turn)
			}
			st, sid, err := a.sessionFor(id, "undo")
			if err != nil {
				return err
			}
			undone, err := files.Undo(st, sid, turn)
			if err == nil {
				ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
				err = st.Flush(ctx) // the record of the undo lands before we exit
				cancel()
				if err != nil {
					err = fmt.Errorf("the files were restored, but the session could not record it yet: %w", err)
				}
			}
			if asJSON {
				out := struct {
					Session string       `json:"session"`
					Undone  []changeJSON `json:"undone"`
					Error   string       `json:"error,omitempty"`
				}{Session: sid, Undone: []changeJSON{}}
				for _, c := range undone {
					out.Undone = append(out.Undone, toJSON(c, turn))
				}
				if err != nil {
					out.Error = err.Error()
				}
				if werr := writeJSON(a.io.Out, out); werr != nil {
					return werr
				}
				if err != nil {
					return failErr("%v", err)
				}
				return nil
			}
			switch {
			case errors.Is(err, files.ErrNothingToUndo):
				return failErr("nothing to undo in session %s: every change was undone already, or there was none", sid)
			case err != nil && len(undone) == 0:
				return failErr("undo refused: %v", err)
			case err != nil:
				return failErr("%v", err)
			}
			for _, c := range undone {
				fmt.Fprintln(a.io.Out, safe.Text(fmt.Sprintf("Restored %s (%s of %s)", c.Name(), c.Tool, c.At.Local().Format(timeLayout))))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&id, "session", "", "the session's id or a unique prefix (default: the most recent session)")
	f.IntVar(&turn, "turn", 0, "undo every change of this turn (as jarvis changes numbers them) instead of the last change")
	f.BoolVar(&asJSON, "json", false, "print {session, undone: [...], error}")
	return cmd
}
