package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/agent/scheduler"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/tasks"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

func (a *app) schedulerCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "scheduler",
		Short: "Create, list and run scheduled tasks",
		Long: `Scheduled tasks run a prompt with an agent and its tools on a schedule:
a cron expression, an interval, or once at a given time, each in a time zone.
Tasks run while 'jarvis scheduler start' or the TUI is running; runs missed
meanwhile are caught up once (not once per missed slot).

Nobody is there to approve a tool call during a scheduled run, so tools that
need confirmation are denied unless approved for the task with --approve when
it is created. The run log says which calls were denied.

Commands that take an ID accept any unique prefix of it.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(a.schedCreateCommand(), a.schedListCommand(),
		a.schedChangeCommand("pause", "Pause a task until it is resumed", (*scheduler.Scheduler).Pause, "paused"),
		a.schedChangeCommand("resume", "Resume a paused task (its next run is computed from now)", (*scheduler.Scheduler).Resume, "resumed"),
		a.schedChangeCommand("cancel", "Cancel a task for good", (*scheduler.Scheduler).Cancel, "cancelled"),
		a.schedLogsCommand(), a.schedRunCommand(), a.schedStartCommand())
	return cmd
}

// openScheduler opens the database and a scheduler on it. The caller closes
// the database.
func (a *app) openScheduler(opts scheduler.Options) (*scheduler.Scheduler, *store.DB, error) {
	db, err := a.openDB("scheduler")
	if err != nil {
		return nil, nil, err
	}
	return scheduler.New(db, opts), db, nil
}

// taskValidator checks a task's agent and tool names against the agents
// and the built-in tool registry, the same names `--agent` and `--tools`
// accept everywhere.
func (a *app) taskValidator() (func(agentName string, names []string) error, error) {
	env, err := a.environment()
	if err != nil {
		return nil, err
	}
	return func(agentName string, names []string) error {
		if !slices.Contains(agent.Names, agentName) {
			return fmt.Errorf("unknown agent %q: use one of %s", agentName, strings.Join(agent.Names, ", "))
		}
		for _, n := range names {
			if !env.registry.Has(n) {
				return &tools.UnknownToolError{Name: n, Known: env.registry.Names()}
			}
		}
		return nil
	}, nil
}

// needsApproval returns the task's tools that need confirmation but were
// not approved: their calls will be denied in scheduled runs.
func (a *app) needsApproval(names, approved []string) []string {
	env, err := a.environment()
	if err != nil {
		return nil
	}
	var out []string
	for _, n := range names {
		t, err := env.registry.Build(n, env.deps)
		if err == nil && t.Spec().RequiresConfirmation && !slices.Contains(approved, n) {
			out = append(out, n)
		}
	}
	return out
}

func (a *app) schedCreateCommand() *cobra.Command {
	var typ, value, agentName, toolList, approve, zone string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "create PROMPT... --type cron|interval|once --value V",
		Short: "Create a scheduled task and print its id and next run",
		Long: `Create a task that runs PROMPT on a schedule.

  --type cron      --value is five fields: minute hour day-of-month month
                   day-of-week ("0 9 * * 1-5": 09:00 on weekdays), or @hourly,
                   @daily, @weekly, @monthly, @yearly. Evaluated on the wall
                   clock of --tz: at a daylight-saving jump a skipped time runs
                   just after the jump, a repeated time runs once.
  --type interval  --value is seconds ("3600") or a duration ("90s", "1h30m"),
                   at least 1s; the first run is one interval from now.
  --type once      --value is an ISO 8601 time ("2025-06-01T09:00:00+02:00");
                   without an offset it is read in --tz. It must be in the future.

--tz is an IANA zone name (Europe/Paris); the default is the local zone.`,
		Example: `  jarvis scheduler create "Summarise yesterday's commits" --type cron --value "0 9 * * 1-5" --tz Europe/Paris
  jarvis scheduler create "Check the build" --type interval --value 1h --agent orchestrator --tools http_request --approve http_request
  jarvis scheduler create "Remind me to call Sam" --type once --value 2025-06-01T15:00`,
		Args: argsUsage(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if typ == "" || value == "" {
				return usageErr("--type and --value are required (--type cron|interval|once)\nUsage: %s", cmd.UseLine())
			}
			nt := tasks.NewTask{
				Prompt:        joinArgs(args),
				ScheduleType:  tasks.ScheduleType(strings.ToLower(typ)),
				ScheduleValue: value,
				TimeZone:      zone,
				Agent:         agentName,
				Tools:         splitList(toolList),
				ApprovedTools: splitList(approve),
				Metadata:      map[string]string{"created_by": "cli"},
			}
			validate, err := a.taskValidator()
			if err != nil {
				return err
			}
			// Wrong input is a usage error (exit 2); a database failure
			// is not.
			if _, _, err := tasks.Validate(nt, time.Now()); err != nil {
				return usageErr("%v", err)
			}
			name := strings.TrimSpace(nt.Agent)
			if name == "" {
				name = tasks.DefaultAgent
			}
			if err := validate(name, nt.Tools); err != nil {
				return usageErr("%v", err)
			}
			s, db, err := a.openScheduler(scheduler.Options{Validate: validate})
			if err != nil {
				return err
			}
			defer db.Close()
			task, err := s.Create(cmd.Context(), nt)
			if err != nil {
				return failErr("%v", err)
			}
			if asJSON {
				return writeJSON(a.io.Out, task)
			}
			fmt.Fprintf(a.io.Out, "Created task %s (%s).\n", task.ID, task.Describe())
			fmt.Fprintf(a.io.Out, "Next run: %s (%s)\n", task.NextRun.Format(timeLayout), scheduler.Relative(task.NextRun, time.Now()))
			if denied := a.needsApproval(task.Tools, task.ApprovedTools); len(denied) > 0 {
				verb := "needs confirmation and was"
				if len(denied) > 1 {
					verb = "need confirmation and were"
				}
				fmt.Fprintf(a.io.Err, "Note: %s %s not approved, so scheduled runs will deny its calls. To allow them, create the task with --approve %s.\n",
					strings.Join(denied, ", "), verb, strings.Join(denied, ","))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&typ, "type", "", "schedule type: cron, interval or once")
	f.StringVar(&value, "value", "", "the cron expression, the interval, or the ISO 8601 time")
	f.StringVar(&agentName, "agent", "", "agent that runs the task: "+strings.Join(agent.Names, ", ")+" (default simple)")
	f.StringVar(&toolList, "tools", "", "comma-separated tools the agent may use")
	f.StringVar(&approve, "approve", "", "comma-separated tools (among --tools) that may run without confirmation in this task's runs")
	f.StringVar(&zone, "tz", "", "IANA time zone of the schedule (default the local zone)")
	f.BoolVar(&asJSON, "json", false, "print the created task as JSON")
	return cmd
}

// timeLayout is how the CLI shows a run time: in the task's zone, with the
// zone's abbreviation.
const timeLayout = "2006-01-02 15:04:05 MST"

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (a *app) schedListCommand() *cobra.Command {
	var status string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List scheduled tasks: status, schedule, next and last run",
		Args:  argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := tasks.ParseStatus(status)
			if err != nil {
				return usageErr("%v", err)
			}
			s, db, err := a.openScheduler(scheduler.Options{})
			if err != nil {
				return err
			}
			defer db.Close()
			list, err := s.List(cmd.Context(), st)
			if err != nil {
				return failErr("%v", err)
			}
			if asJSON {
				if list == nil {
					list = []tasks.Task{}
				}
				return writeJSON(a.io.Out, list)
			}
			if len(list) == 0 {
				what := "scheduled"
				if st != "" {
					what = string(st)
				}
				fmt.Fprintf(a.io.Out, "No %s tasks. Create one with 'jarvis scheduler create PROMPT --type interval --value 1h'.\n", what)
				return nil
			}
			writeTaskTable(a.io.Out, list, time.Now())
			return nil
		},
	}
	cmd.Flags().StringVar(&status, "status", "", "only tasks with this status: active, paused, completed or cancelled")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tasks as a JSON array")
	return cmd
}

func writeTaskTable(out io.Writer, list []tasks.Task, now time.Time) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tSTATUS\tSCHEDULE\tNEXT RUN\tLAST RUN\tPROMPT")
	for _, t := range list {
		next := "-"
		if !t.NextRun.IsZero() {
			next = fmt.Sprintf("%s (%s)", scheduler.Relative(t.NextRun, now), t.NextRun.Format("2006-01-02 15:04 MST"))
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Status, t.Describe(), next, lastRun(t, now), format.OneLine(t.Prompt, 50))
	}
	w.Flush()
}

// lastRun says when the task last ran and how that went.
func lastRun(t tasks.Task, now time.Time) string {
	switch {
	case t.Running:
		return "running since " + strings.TrimSuffix(scheduler.Relative(t.LastRun, now), " ago")
	case t.LastRun.IsZero():
		return "never"
	case t.LastOutcome == tasks.OutcomeNone:
		return scheduler.Relative(t.LastRun, now)
	}
	return fmt.Sprintf("%s, %s", scheduler.Relative(t.LastRun, now), t.LastOutcome)
}

// taskErr sorts a task lookup or change error into an exit code: an
// ambiguous id is a usage error, the rest are failures.
func taskErr(err error) error {
	var amb *tasks.AmbiguousError
	if errors.As(err, &amb) {
		return usageErr("%v", err)
	}
	return failErr("%v", err)
}

func (a *app) schedChangeCommand(verb, short string, apply func(*scheduler.Scheduler, context.Context, string) (tasks.Task, error), done string) *cobra.Command {
	return &cobra.Command{
		Use:   verb + " ID",
		Short: short,
		Args:  argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, db, err := a.openScheduler(scheduler.Options{})
			if err != nil {
				return err
			}
			defer db.Close()
			t, err := apply(s, cmd.Context(), args[0])
			if err != nil {
				return taskErr(err)
			}
			fmt.Fprintf(a.io.Out, "Task %s %s.", t.ID, done)
			if !t.NextRun.IsZero() {
				fmt.Fprintf(a.io.Out, " Next run: %s (%s).", t.NextRun.Format(timeLayout), scheduler.Relative(t.NextRun, time.Now()))
			}
			fmt.Fprintln(a.io.Out)
			return nil
		},
	}
}

func (a *app) schedLogsCommand() *cobra.Command {
	var n int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "logs ID",
		Short: "Show a task's last runs: when, how they ended, results, errors, denied tools",
		Args:  argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if n < 1 {
				return usageErr("-n must be at least 1, got %d", n)
			}
			s, db, err := a.openScheduler(scheduler.Options{})
			if err != nil {
				return err
			}
			defer db.Close()
			t, runs, err := s.Logs(cmd.Context(), args[0], n)
			if err != nil {
				return taskErr(err)
			}
			if asJSON {
				if runs == nil {
					runs = []tasks.Run{}
				}
				return writeJSON(a.io.Out, runs)
			}
			writeRuns(a.io.Out, t, runs, time.Now())
			return nil
		},
	}
	cmd.Flags().IntVarP(&n, "n", "n", 10, "how many of the last runs to show")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the runs as JSON, results in full")
	return cmd
}

func writeRuns(out io.Writer, t tasks.Task, runs []tasks.Run, now time.Time) {
	fmt.Fprintf(out, "Task %s (%s, %s): %s\n", t.ID, t.Status, t.Describe(), format.OneLine(t.Prompt, 80))
	if len(runs) == 0 {
		fmt.Fprintln(out, "No runs yet.")
		return
	}
	loc := t.NextRun.Location()
	if l, _, err := tasks.LoadZone(t.TimeZone); err == nil {
		loc = l
	}
	for _, r := range runs {
		outcome, took := "running", scheduler.Relative(r.StartedAt, now)
		if r.Finished() {
			outcome = string(r.Outcome)
			took = format.Latency(r.FinishedAt.Sub(r.StartedAt).Seconds())
		}
		kind := "by hand"
		if !r.Manual {
			kind = "for " + r.Slot.In(loc).Format(timeLayout)
		}
		fmt.Fprintf(out, "\nrun %d  %s  %s  %s  (%s)\n", r.ID, r.StartedAt.In(loc).Format(timeLayout), outcome, took, kind)
		if r.Result != "" {
			fmt.Fprintf(out, "  result: %s\n", format.OneLine(r.Result, 300))
		}
		if r.Error != "" {
			fmt.Fprintf(out, "  error:  %s\n", format.OneLine(r.Error, 300))
		}
		if note := r.DeniedNote(); note != "" {
			fmt.Fprintf(out, "  %s\n", note)
		}
	}
}

func (a *app) schedRunCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "run ID",
		Short: "Run a task now, in the foreground, and print its result",
		Long: `Run a task now, whatever its schedule (which does not change). The same rule
as for scheduled runs applies: tools that need confirmation are denied unless
approved for the task. The result goes to stdout; an error and the denied tools
go to stderr. Exit status 1 when the run failed.`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			runner, err := a.taskRunner()
			if err != nil {
				return err
			}
			s, db, err := a.openScheduler(scheduler.Options{Runner: runner, Events: newSchedPrinter(a.io.Err)})
			if err != nil {
				return err
			}
			defer db.Close()
			run, err := s.RunNow(cmd.Context(), args[0])
			if err != nil {
				return taskErr(err)
			}
			if run.Result != "" {
				fmt.Fprintln(a.io.Out, run.Result)
			}
			if note := run.DeniedNote(); note != "" {
				fmt.Fprintln(a.io.Err, "Note: "+safe.Text(note))
			}
			if !run.Success {
				return failErr("the run failed: %s", run.Error)
			}
			return nil
		},
	}
}

func (a *app) schedStartCommand() *cobra.Command {
	var maxRuns int
	var grace time.Duration
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Run the scheduler in the foreground until interrupted (for servers)",
		Long: `Run due tasks until SIGINT or SIGTERM. Runs missed while no scheduler was
running are caught up once at start. Several schedulers (this command, the TUI,
on one database) never run the same slot twice.

On SIGINT/SIGTERM no new run starts; running tasks get --grace to finish, are
then cancelled, and every run's end is written to its log before exiting.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if maxRuns < 1 {
				return usageErr("--max-runs must be at least 1, got %d", maxRuns)
			}
			runner, err := a.taskRunner()
			if err != nil {
				return err
			}
			if grace <= 0 {
				grace = -1 // cancel at once
			}
			s, db, err := a.openScheduler(scheduler.Options{
				Runner: runner, Events: newSchedPrinter(a.io.Err), MaxConcurrent: maxRuns, StopGrace: grace,
				Logger: slog.New(slog.NewTextHandler(a.io.Err, &slog.HandlerOptions{Level: slog.LevelWarn})),
			})
			if err != nil {
				return err
			}
			defer db.Close()
			active, err := s.List(cmd.Context(), tasks.Active)
			if err != nil {
				return failErr("%v", err)
			}
			next := "nothing scheduled yet"
			if len(active) > 0 && !active[0].NextRun.IsZero() {
				next = "next run " + scheduler.Relative(active[0].NextRun, time.Now())
			}
			fmt.Fprintf(a.io.Err, "Scheduler running on %s: %s, %s. Press Ctrl-C to stop.\n", db.Path(), plural(len(active), "active task"), next)
			if err := s.Serve(cmd.Context()); err != nil {
				return failErr("%v", err)
			}
			fmt.Fprintln(a.io.Err, "Scheduler stopped.")
			return nil
		},
	}
	cmd.Flags().IntVar(&maxRuns, "max-runs", scheduler.DefaultMaxConcurrent, "how many tasks may run at once")
	cmd.Flags().DurationVar(&grace, "grace", scheduler.DefaultStopGrace, "how long running tasks may finish after a stop signal before they are cancelled")
	return cmd
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// schedPrinter writes one line per scheduler event on stderr.
type schedPrinter struct {
	mu sync.Mutex
	w  io.Writer
}

func newSchedPrinter(w io.Writer) *schedPrinter { return &schedPrinter{w: w} }

// Publish prints task starts and ends and scheduler errors.
func (p *schedPrinter) Publish(e events.Event) {
	var line string
	ts := e.Time
	if ts.IsZero() {
		ts = time.Now()
	}
	stamp := ts.Format("15:04:05")
	switch {
	case e.Type == events.SchedulerTaskStart && e.Task != nil:
		line = fmt.Sprintf("%s ▶ task %s started: %s", stamp, e.Task.TaskID, format.OneLine(e.Task.Prompt, 80))
	case e.Type == events.SchedulerTaskEnd && e.Task != nil && e.Task.Success:
		line = fmt.Sprintf("%s ✓ task %s finished: %s", stamp, e.Task.TaskID, format.OneLine(e.Task.Result, 100))
	case e.Type == events.SchedulerTaskEnd && e.Task != nil:
		line = fmt.Sprintf("%s ✗ task %s failed: %s", stamp, e.Task.TaskID, format.OneLine(e.Task.Error, 140))
	case e.Type == events.Error:
		line = fmt.Sprintf("%s ! %s", stamp, e.Text)
	default:
		return
	}
	p.mu.Lock()
	fmt.Fprintln(p.w, safe.Text(line)) // prompts, results and errors are not jarvis's text
	p.mu.Unlock()
}
