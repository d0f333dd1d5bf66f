package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/agent/scheduler"
	"github.com/jarvis-workbench/jarvis/app"
	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/tasks"
	"github.com/jarvis-workbench/jarvis/tools/mcp"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

func (a *cmdline) schedulerCommand() *cobra.Command {
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
// the database. A command that does not create tasks or runs (write
// false) refuses a named database that does not exist (see readDB).
func (a *cmdline) openScheduler(opts scheduler.Options, write bool) (*scheduler.Scheduler, *store.DB, error) {
	open := a.readDB
	if write {
		open = a.openDB
	}
	db, err := open("scheduler")
	if err != nil {
		return nil, nil, err
	}
	return scheduler.New(db, opts), db, nil
}

// registerMCPFor starts the MCP servers whose tools (SERVER__TOOL) names
// include, so that the tool names can be checked against what the
// servers offer.
func (a *cmdline) registerMCPFor(ctx context.Context, names []string) error {
	env, err := a.environment()
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, mcp.Separator) && !env.registry.Has(n) }) ||
		!needsMCP(env.cfg.MCP, names) {
		return nil
	}
	_, err = a.startMCPFor(ctx, env, app.MCPServersFor(names), true, a.io.Err)
	return err
}

// needsApproval returns the task's tools that need confirmation but were
// not approved: their calls will be denied in scheduled runs.
func (a *cmdline) needsApproval(names, approved []string) []string {
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

func (a *cmdline) schedCreateCommand() *cobra.Command {
	var typ, value, agentName, toolList, approve, zone string
	var timeout time.Duration
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
  --type once      --value is a time from now ("+2h", "+1d6h", "in 90m") or an
                   ISO 8601 time ("2030-06-01T09:00:00+02:00"; without an offset
                   it is read in --tz). It must be in the future.

--tz is an IANA zone name (Europe/Paris); the default is the local zone.

The task records the model server it is for (this jarvis's --host and
--model): its runs happen on that server, and only a scheduler that can reach
it claims them. Each run is stopped after --timeout (default 10m, or
[scheduler] timeout in the config). A task with --tools and no --agent runs
with the orchestrator agent: the simple agent never calls tools.`,
		Example: `  jarvis scheduler create "Summarise yesterday's commits" --type cron --value "0 9 * * 1-5" --tz Europe/Paris
  jarvis scheduler create "Check the build" --type interval --value 1h --tools http_request --approve http_request --timeout 5m
  jarvis scheduler create "Remind me to call Sam" --type once --value +2h`,
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
				Timeout:       timeout,
				Metadata:      map[string]string{"created_by": "cli"},
			}
			opts, err := a.schedOptions("scheduler create", nil)
			if err != nil {
				return err
			}
			// Wrong input is a usage error (exit 2); a database failure
			// is not.
			if _, _, err := tasks.Validate(nt, time.Now()); err != nil {
				return usageErr("%v", err)
			}
			// MCP tools are named SERVER__TOOL, as the workbench's form
			// takes them; they are known once their servers list them.
			if err := a.registerMCPFor(cmd.Context(), append(slices.Clone(nt.Tools), nt.ApprovedTools...)); err != nil {
				return err
			}
			if err := opts.Validate(tasks.AgentFor(nt.Agent, nt.Tools), nt.Tools); err != nil {
				return usageErr("%v", err)
			}
			s, db, err := a.openScheduler(opts, true)
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
			fmt.Fprintf(a.io.Out, "Runs on %s with the %s agent, time limit %s.\n", task.Server, task.Agent, limitText(task, s.TimeoutFor(task)))
			if strings.TrimSpace(agentName) == agent.Simple && len(task.Tools) > 0 {
				fmt.Fprintf(a.io.Err, "Note: the simple agent never calls tools, so %s will not be used. Use --agent orchestrator (or react), or leave --agent out.\n",
					strings.Join(task.Tools, ", "))
			}
			if slices.Contains(task.ApprovedTools, mcp.AdapterName) {
				fmt.Fprintf(a.io.Err, "Note: approving %s lets it list a server's tools; its calls to a server's tool are approved by that tool's name (--tools SERVER__TOOL --approve SERVER__TOOL).\n", mcp.AdapterName)
			}
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
	f.StringVar(&value, "value", "", "the cron expression, the interval, or the time (+2h, or ISO 8601)")
	f.StringVar(&agentName, "agent", "", "agent that runs the task: "+strings.Join(agent.Names, ", ")+" (default simple, or orchestrator with --tools)")
	f.StringVar(&toolList, "tools", "", "comma-separated tools the agent may use")
	f.StringVar(&approve, "approve", "", "comma-separated tools (among --tools) that may run without confirmation in this task's runs")
	f.StringVar(&zone, "tz", "", "IANA time zone of the schedule (default the local zone)")
	f.DurationVar(&timeout, "timeout", 0, "time limit of each run, e.g. 5m or 1h (default 10m, or [scheduler] timeout in the config)")
	f.BoolVar(&asJSON, "json", false, "print the created task as JSON")
	return cmd
}

// limitText says a task's time limit and where it comes from.
func limitText(t tasks.Task, limit time.Duration) string {
	if t.Timeout > 0 {
		return tasks.FormatDuration(limit)
	}
	return tasks.FormatDuration(limit) + " (default)"
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (a *cmdline) schedListCommand() *cobra.Command {
	var status string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List scheduled tasks: status, schedule, next and last run, server",
		Long: `List the tasks: id, status, schedule, next run, last run and how it ended,
the server the task runs on, and the prompt. The last line says which jarvis
processes serve the database (run the tasks) right now.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := tasks.ParseStatus(status)
			if err != nil {
				return usageErr("%v", err)
			}
			s, db, err := a.openScheduler(scheduler.Options{}, false)
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
			now := time.Now()
			writeTaskTable(a.io.Out, list, now)
			peers, err := scheduler.Serving(s.Store(), now)
			if err != nil {
				return failErr("%v", err)
			}
			fmt.Fprintln(a.io.Out, servingLine(peers))
			return nil
		},
	}
	cmd.Flags().StringVar(&status, "status", "", "only tasks with this status: active, paused, completed or cancelled")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tasks as a JSON array")
	return cmd
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

// stopWait is how long pause and cancel wait to see a run in progress
// stop: the process running it notices within about a second.
const stopWait = 5 * time.Second

func (a *cmdline) schedChangeCommand(verb, short string, apply func(*scheduler.Scheduler, context.Context, string) (tasks.Task, error), done string) *cobra.Command {
	return &cobra.Command{
		Use:   verb + " ID",
		Short: short,
		Args:  argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, db, err := a.openScheduler(scheduler.Options{Command: "scheduler " + verb}, false)
			if err != nil {
				return err
			}
			defer db.Close()
			before, err := s.Get(cmd.Context(), args[0])
			if err != nil {
				return taskErr(err)
			}
			t, err := apply(s, cmd.Context(), args[0])
			if err != nil {
				return taskErr(err)
			}
			fmt.Fprintf(a.io.Out, "Task %s %s.", t.ID, done)
			if !t.NextRun.IsZero() {
				fmt.Fprintf(a.io.Out, " Next run: %s (%s).", t.NextRun.Format(timeLayout), scheduler.Relative(t.NextRun, time.Now()))
			}
			fmt.Fprintln(a.io.Out)
			// Pausing or cancelling stops a run in progress; resuming
			// does not touch one, and a no-op change stops nothing.
			if verb == "resume" || !t.Running || before.Status == t.Status {
				return nil
			}
			fmt.Fprintf(a.io.Out, "A run was in progress in %s; it was asked to stop.\n", runningIn(t))
			a.awaitStop(cmd.Context(), s, db, t)
			return nil
		},
	}
}

// runningIn names the process running a task.
func runningIn(t tasks.Task) string {
	if t.RunningIn == nil {
		return "another jarvis process"
	}
	return t.RunningIn.String()
}

// awaitStop waits up to stopWait for a run that was asked to stop to end,
// and says how it ended. The file is released between looks, so the
// process running the task can write the run's end.
func (a *cmdline) awaitStop(ctx context.Context, s *scheduler.Scheduler, db *store.DB, t tasks.Task) {
	deadline := time.Now().Add(stopWait)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		db.Close()
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
		_, runs, err := s.Logs(ctx, t.ID, 1)
		if err != nil {
			continue
		}
		if len(runs) == 1 && runs[0].Finished() && !runs[0].StartedAt.Before(t.LastRun) {
			fmt.Fprintf(a.io.Out, "It stopped: %s.\n", outcomeWords(runs[0].OutcomeOrGuess()))
			return
		}
	}
	fmt.Fprintf(a.io.Out, "It has not stopped yet (the process running it may be busy, or an older jarvis that does not watch for this). 'jarvis scheduler logs %s' shows how it ends.\n", t.ID)
}

func (a *cmdline) schedLogsCommand() *cobra.Command {
	var n int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "logs ID",
		Short: "Show a task's last runs, newest first: when, where, how they ended, results, errors, denied tools",
		Long: `Show a task's last runs, newest first. Each run says when it started, why
(a slot or by hand), how it ended and how long it took, the jarvis process
that ran it (pid and command) and the server and model it ran on, then its
result or error and the tools it was denied.`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if n < 1 {
				return usageErr("-n must be at least 1, got %d", n)
			}
			s, db, err := a.openScheduler(scheduler.Options{Timeout: a.configTimeout()}, false)
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
			writeRuns(a.io.Out, t, runs, s.TimeoutFor(t), time.Now())
			return nil
		},
	}
	cmd.Flags().IntVarP(&n, "n", "n", 10, "how many of the last runs to show")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the runs as JSON (newest first), results in full")
	return cmd
}

// configTimeout is the configured default time limit, when the
// configuration loads (zero otherwise: the built-in default).
func (a *cmdline) configTimeout() time.Duration {
	cfg, err := a.loadConfig(config.Flags{})
	if err != nil {
		return 0
	}
	return cfg.TaskTimeout()
}

func (a *cmdline) schedRunCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "run ID",
		Short: "Run a task now, in the foreground, and print its result",
		Long: `Run a task now, whatever its schedule (which does not change). An active or
paused task can run this way; a cancelled or completed one cannot (exit status
1: create a new task instead).

The run uses the task's server and time limit, and the same rule as scheduled
runs: tools that need confirmation are denied unless approved for the task.
The result goes to stdout; an error and the denied tools go to stderr. Exit
status 1 when the run failed. Ctrl-C stops the run; its end is logged.`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Refused before any MCP server starts.
			check, db, err := a.openScheduler(scheduler.Options{}, false)
			if err != nil {
				return err
			}
			task, err := check.Get(cmd.Context(), args[0])
			if err != nil {
				return taskErr(err)
			}
			switch task.Status {
			case tasks.Cancelled:
				return failErr("task %s is cancelled, so it cannot run again. To run its prompt, create a new task with 'jarvis scheduler create'", task.ID)
			case tasks.Completed:
				return failErr("task %s has completed: its one-time run is over. To run its prompt again, create a new task with 'jarvis scheduler create'", task.ID)
			}
			opts, err := a.taskRunner("scheduler run", nil)
			if err != nil {
				return err
			}
			opts.Events = newSchedPrinter(a.io.Err)
			s := scheduler.New(db, opts)
			defer db.Close()
			srv := task.Server
			if srv.IsZero() {
				srv = opts.Server
			}
			fmt.Fprintf(a.io.Err, "Running task %s on %s (time limit %s).\n", task.ID, srv, limitText(task, s.TimeoutFor(task)))
			run, err := s.RunNow(cmd.Context(), task.ID)
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

func (a *cmdline) schedStartCommand() *cobra.Command {
	var maxRuns int
	var grace, skipAfter time.Duration
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Run the scheduler in the foreground until interrupted (the recommended way to run tasks)",
		Long: `Run due tasks until SIGINT or SIGTERM. Runs missed while no scheduler was
running are caught up once at start.

This is the recommended owner of the schedule: while it runs, a TUI open on the
same database leaves scheduled runs to it (and says so). Several schedulers on
one database never run the same slot twice.

A run is claimed only by a scheduler that can reach the task's server (a quick
version check, repeated every few seconds). When no scheduler has reached it
for --skip-after, the slot is recorded as skipped and the task waits for its
next slot. Each run is stopped after its time limit, so a stuck model never
holds back other tasks for long.

On SIGINT/SIGTERM no new run starts; running tasks get --grace to finish, are
then cancelled, and every run's end is written to its log before exiting.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if maxRuns < 1 {
				return usageErr("--max-runs must be at least 1, got %d", maxRuns)
			}
			if skipAfter < 0 {
				return usageErr("--skip-after must not be negative (0 never skips), got %s", skipAfter)
			}
			opts, err := a.taskRunner("scheduler start", nil)
			if err != nil {
				return err
			}
			if grace <= 0 {
				grace = -1 // cancel at once
			}
			if skipAfter == 0 {
				skipAfter = -1 // never skip
			}
			opts.Events, opts.Dedicated, opts.MaxConcurrent, opts.StopGrace, opts.SkipAfter = newSchedPrinter(a.io.Err), true, maxRuns, grace, skipAfter
			opts.Logger = slog.New(slog.NewTextHandler(a.io.Err, &slog.HandlerOptions{Level: slog.LevelWarn}))
			s, db, err := a.openScheduler(opts, true)
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
			fmt.Fprintf(a.io.Err, "Scheduler running on %s as %s: %s, %s. Default time limit %s; tasks that record no server run on %s. Press Ctrl-C to stop.\n",
				db.Path(), s.Process(), format.Count(len(active), "active task"), next, tasks.FormatDuration(s.Options().Timeout), opts.Server)
			if err := s.Serve(cmd.Context()); err != nil {
				return failErr("%v", err)
			}
			fmt.Fprintln(a.io.Err, "Scheduler stopped.")
			return nil
		},
	}
	cmd.Flags().IntVar(&maxRuns, "max-runs", scheduler.DefaultMaxConcurrent, "how many tasks may run at once")
	cmd.Flags().DurationVar(&grace, "grace", scheduler.DefaultStopGrace, "how long running tasks may finish after a stop signal before they are cancelled")
	cmd.Flags().DurationVar(&skipAfter, "skip-after", scheduler.DefaultSkipAfter, "record a slot as skipped when no scheduler could reach its server for this long (0: never)")
	return cmd
}
