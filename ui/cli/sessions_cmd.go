package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jarvis-workbench/jarvis/app/history"
	"github.com/jarvis-workbench/jarvis/internal/table"
	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

func (a *cmdline) sessionsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show, export, search, rename and remove saved sessions",
		Long: `The saved conversations, as the workbench's /sessions lists them: those of
the workbench and of ask --save, --continue and --session. Every command
takes a session's id or a unique prefix of it, and --json.

show prints the session as /export writes it (markdown: the line the
model sees, then the other attempts and edits); export writes that to a
file, with the session's images beside it, never replacing a file.`,
		Example: `  jarvis sessions list
  jarvis sessions show 01jpa3k8
  jarvis sessions export 01jpa3k8 ~/notes/
  jarvis sessions search lisbon weather --json | jq -r '.[].session.id'
  jarvis sessions rename 01jpa3k8 "Trip to Lisbon"
  jarvis sessions rm 01jpa3k8`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(a.sessionsListCommand(), a.sessionsShowCommand(), a.sessionsExportCommand(),
		a.sessionsSearchCommand(), a.sessionsRenameCommand(), a.sessionsRmCommand())
	return cmd
}

// sessionStore opens the sessions of the database, which must exist.
func (a *cmdline) sessionStore() (*sessions.Store, error) {
	db, err := a.readDB("sessions")
	if err != nil {
		return nil, err
	}
	return sessions.New(db), nil
}

// sessionErr is a lookup's error as the command reports it: a wrong id is
// a wrong use (exit 2), anything else a failure.
func sessionErr(err error) error {
	if errors.Is(err, sessions.ErrNotFound) || strings.Contains(err.Error(), "no session id given") {
		return usageErr("%v; 'jarvis sessions list' lists them", err)
	}
	return failErr("%v", err)
}

// sessionsSub is a sessions subcommand: cmd with its --json flag (what
// jsonHelp says it prints), whose run gets the database's sessions opened.
func (a *cmdline) sessionsSub(cmd *cobra.Command, jsonHelp string, run func(st *sessions.Store, args []string, asJSON bool) error) *cobra.Command {
	var asJSON bool
	cmd.RunE = func(_ *cobra.Command, args []string) error {
		st, err := a.sessionStore()
		if err != nil {
			return err
		}
		return run(st, args, asJSON)
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, jsonHelp)
	return cmd
}

// checkLimit refuses a negative --limit before anything is opened.
func checkLimit(limit *int) func(*cobra.Command, []string) error {
	return func(*cobra.Command, []string) error {
		if *limit < 0 {
			return usageErr("--limit must be 0 (all) or more, not %d", *limit)
		}
		return nil
	}
}

// loadSession loads a session by id or prefix, a wrong one reported as
// sessionErr says.
func loadSession(st *sessions.Store, id string) (sessions.Session, []sessions.Message, error) {
	sess, msgs, err := st.Load(id)
	if err != nil {
		return sess, nil, sessionErr(err)
	}
	return sess, msgs, nil
}

func (a *cmdline) sessionsListCommand() *cobra.Command {
	var limit int
	cmd := a.sessionsSub(&cobra.Command{
		Use:     "list",
		Short:   "List the sessions, the most recently active first",
		Args:    argsUsage(cobra.NoArgs),
		PreRunE: checkLimit(&limit),
	}, "print the sessions as JSON", func(st *sessions.Store, _ []string, asJSON bool) error {
		list, err := st.List(limit)
		if err != nil {
			return failErr("%v", err)
		}
		if asJSON {
			if list == nil {
				list = []sessions.Session{}
			}
			return writeJSON(a.io.Out, list)
		}
		if len(list) == 0 {
			fmt.Fprintln(a.io.Err, "No saved sessions yet: the workbench saves each conversation, and ask --save starts one.")
			return nil
		}
		w := table.New(a.io.Out)
		fmt.Fprintln(w, "ID\tUPDATED\tMSGS\tMODEL\tCOST\tTITLE")
		for _, s := range list {
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\n", s.ID, s.UpdatedAt.Local().Format("Jan 02 15:04"), s.Messages,
				orDash(safe.Text(s.Model)), format.Cost(s.Totals.CostUSD+s.Totals.ToolCostUSD, false), sessionTitle(s))
		}
		return w.Flush()
	})
	cmd.Flags().IntVar(&limit, "limit", 0, "list at most this many (0: all)")
	return cmd
}

// sessionTitle is a session's title for a line of text: one line, what
// jarvis did not write stripped, a fork said to be one. Ids are shown
// whole: they begin with their creation time, so sessions made close
// together share a long prefix.
func sessionTitle(s sessions.Session) string {
	title := format.OneLine(safe.Text(s.Title), 0)
	if title == "" {
		title = "(untitled)"
	}
	if s.Parent != "" {
		title += " (fork of " + s.Parent + ")"
	}
	return title
}

func (a *cmdline) sessionsShowCommand() *cobra.Command {
	return a.sessionsSub(&cobra.Command{
		Use:   "show ID",
		Short: "Print a session as /export writes it (markdown), or as JSON",
		Long: `Print the session as the workbench's /export writes it: markdown with the
line the model sees, each reply's model and usage, the tool calls and their
results, then the other attempts and edits. With --json: the session and the
messages of the line the model sees, in order.`,
		Args: argsUsage(cobra.ExactArgs(1)),
	}, "print the session and its messages as JSON", func(st *sessions.Store, args []string, asJSON bool) error {
		sess, msgs, err := loadSession(st, args[0])
		if err != nil {
			return err
		}
		if asJSON {
			line := sessions.ChatMessages(sessions.TreeOf(sess, msgs).CurrentPath())
			if err := st.FillImages(line); err != nil {
				return failErr("%v", err)
			}
			return writeJSON(a.io.Out, struct {
				Session  sessions.Session   `json:"session"`
				Messages []sessions.Message `json:"messages"`
			}{sess, line})
		}
		fmt.Fprint(a.io.Out, format.SessionMarkdown(sess, msgs))
		return nil
	})
}

func (a *cmdline) sessionsExportCommand() *cobra.Command {
	return a.sessionsSub(&cobra.Command{
		Use:   "export ID [PATH]",
		Short: "Write a session as markdown, with its images beside it",
		Long: `Write the session as the workbench's /export does: markdown, its images in
a directory beside it (NAME-images for NAME.md). Without PATH it goes to the
exports directory ($XDG_DATA_HOME/jarvis/exports); PATH may start with ~ and
may be a directory. A file that exists is never replaced: the export takes
the next free name (NAME-2.md, ...) and says so.`,
		Args: argsUsage(cobra.RangeArgs(1, 2)),
	}, "print what was written as JSON (path, asked, image_dir, images)", func(st *sessions.Store, args []string, asJSON bool) error {
		sess, msgs, err := loadSession(st, args[0])
		if err != nil {
			return err
		}
		arg := ""
		if len(args) == 2 {
			arg = args[1]
		}
		path, err := history.ExportPath(arg, sess.ID, time.Now())
		if err != nil {
			return usageErr("%v", err)
		}
		res, err := history.WriteExport(st, sess, msgs, path)
		if err != nil {
			return failErr("exporting session %s: %v", sess.ID, err)
		}
		if asJSON {
			return writeJSON(a.io.Out, res)
		}
		fmt.Fprintln(a.io.Out, history.ExportedText(res))
		return nil
	})
}

func (a *cmdline) sessionsSearchCommand() *cobra.Command {
	var limit int
	cmd := a.sessionsSub(&cobra.Command{
		Use:   "search WORDS...",
		Short: "Find the sessions that hold every word given",
		Long: `Find the sessions that hold every word given, case aside, in their title or
their messages (yours, the model's answers, the tools' results, on every
attempt); the most recently active first, each with the lines that hold the
words. Exit status 1 when nothing matched.`,
		Args:    argsUsage(cobra.MinimumNArgs(1)),
		PreRunE: checkLimit(&limit),
	}, "print the sessions found, each with its hits (seq, role, line), as JSON", func(st *sessions.Store, args []string, asJSON bool) error {
		found, err := st.Search(strings.Join(args, " "), limit)
		if err != nil {
			return failErr("%v", err)
		}
		if asJSON {
			if found == nil {
				found = []sessions.Found{}
			}
			if err := writeJSON(a.io.Out, found); err != nil {
				return err
			}
		} else {
			for _, f := range found {
				fmt.Fprintf(a.io.Out, "%s  %s  %s\n", f.Session.ID, f.Session.UpdatedAt.Local().Format("Jan 02 15:04"), sessionTitle(f.Session))
				for _, h := range f.Hits {
					if h.Role == "title" {
						continue
					}
					fmt.Fprintf(a.io.Out, "  #%d %s: %s\n", h.Seq, h.Role, safe.Text(h.Line))
				}
			}
		}
		if len(found) == 0 {
			if !asJSON {
				fmt.Fprintln(a.io.Err, "No session holds every word of that.")
			}
			return silentFail
		}
		return nil
	})
	cmd.Flags().IntVar(&limit, "limit", 0, "find at most this many sessions (0: all)")
	return cmd
}

func (a *cmdline) sessionsRenameCommand() *cobra.Command {
	return a.sessionsSub(&cobra.Command{
		Use:   "rename ID TITLE...",
		Short: "Give a session a title",
		Args:  argsUsage(cobra.MinimumNArgs(2)),
	}, "print the renamed session as JSON", func(st *sessions.Store, args []string, asJSON bool) error {
		title := joinArgs(args[1:])
		if title == "" {
			return usageErr("the title is empty. Usage: jarvis sessions rename ID TITLE...")
		}
		if err := st.Rename(args[0], title); err != nil {
			return sessionErr(err)
		}
		sess, err := st.Get(args[0])
		if err != nil {
			return sessionErr(err)
		}
		if asJSON {
			return writeJSON(a.io.Out, sess)
		}
		fmt.Fprintf(a.io.Out, "Renamed session %s to %q.\n", sess.ID, safe.Text(sess.Title))
		return nil
	})
}

func (a *cmdline) sessionsRmCommand() *cobra.Command {
	return a.sessionsSub(&cobra.Command{
		Use:   "rm ID...",
		Short: "Remove sessions, their messages and the images only they hold",
		Long: `Remove each session named, with its messages and the images no other session
holds. Its forks stay (they are sessions of their own). Every id is checked
before anything is removed.`,
		Args: argsUsage(cobra.MinimumNArgs(1)),
	}, "print the ids removed as JSON", func(st *sessions.Store, args []string, asJSON bool) error {
		var gone []sessions.Session
		for _, id := range args {
			sess, err := st.Get(id)
			if err != nil {
				return sessionErr(err)
			}
			gone = append(gone, sess)
		}
		removed := []string{}
		for _, sess := range gone {
			if err := st.Delete(sess.ID); err != nil {
				return failErr("%v", err)
			}
			removed = append(removed, sess.ID)
			if !asJSON {
				fmt.Fprintf(a.io.Out, "Removed session %s (%s).\n", sess.ID, sessionTitle(sess))
			}
		}
		if asJSON {
			return writeJSON(a.io.Out, struct {
				Removed []string `json:"removed"`
			}{removed})
		}
		return nil
	})
}
