package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/ui/format"
)

func (a *app) modelsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the server's models with their size and capabilities",
		Args:  argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			env, err := a.environment()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			models, err := env.engine.ListModels(ctx)
			if err != nil {
				return failErr("%v", err)
			}
			fillCapabilities(ctx, env.engine, models)
			if asJSON {
				return writeJSON(a.io.Out, models)
			}
			if len(models) == 0 {
				fmt.Fprintf(a.io.Out, "The server at %s has no models. Download one with: ollama pull qwen3\n", env.engine.Host())
				return nil
			}
			w := tabwriter.NewWriter(a.io.Out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tSIZE\tPARAMS\tQUANT\tMODIFIED\tCAPABILITIES")
			for _, m := range models {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, humanBytes(m.SizeBytes), orDash(m.ParameterSize),
					orDash(m.Quantization), ago(m.ModifiedAt), orDash(strings.Join(m.Capabilities, ", ")))
			}
			return w.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the models as JSON")
	return cmd
}

// fillCapabilities asks the server what each model can do, concurrently; a
// model whose capabilities cannot be read keeps an empty list.
func fillCapabilities(ctx context.Context, eng engine.InferenceEngine, models []engine.ModelInfo) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i := range models {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if caps, err := eng.Capabilities(ctx, models[i].Name); err == nil {
				models[i].Capabilities = caps
			}
		}()
	}
	wg.Wait()
}

func (a *app) doctorCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check the server, the model, tool support and the data directory",
		Long: `Check everything jarvis needs, and say how to fix what fails: the config
file, the Ollama server, the model, its tool support, and the database.
Exit status 1 when a check fails.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.doctor(cmd.Context())
		},
	}
}

type check struct {
	name, detail, fix string
	ok, warn          bool
}

func (a *app) doctor(ctx context.Context) error {
	var checks []check
	add := func(c check) {
		checks = append(checks, c)
		mark := "✓"
		switch {
		case !c.ok:
			mark = "✗"
		case c.warn:
			mark = "!"
		}
		fmt.Fprintf(a.io.Out, "%s %-9s %s\n", mark, c.name, c.detail)
		if c.fix != "" {
			fmt.Fprintf(a.io.Out, "  %s fix: %s\n", strings.Repeat(" ", 9), c.fix)
		}
	}
	env, err := a.environment()
	if err != nil {
		add(check{name: "config", detail: err.Error(), fix: "correct the file named above, or run with --config pointing at a good one"})
		return silentFail
	}
	if p := env.cfg.Path(); p != "" {
		add(check{name: "config", ok: true, detail: p})
	} else {
		add(check{name: "config", ok: true, detail: "no config file (defaults); create one at " + configDefaultPath()})
	}

	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	version, err := env.engine.Version(ctx)
	switch {
	case errors.Is(err, engine.ErrUnreachable):
		add(check{name: "server", detail: fmt.Sprintf("no answer from %s", env.engine.Host()),
			fix: "start Ollama with 'ollama serve' (or open the Ollama app), or point jarvis at it with --host or OLLAMA_HOST"})
	case err != nil:
		add(check{name: "server", detail: fmt.Sprintf("%s answered, but not like Ollama: %v", env.engine.Host(), err),
			fix: "check that --host or OLLAMA_HOST points at an Ollama server (not a proxy or another service)"})
	default:
		add(check{name: "server", ok: true, detail: fmt.Sprintf("Ollama %s at %s", version, env.engine.Host())})
		a.doctorModel(ctx, env, add)
	}

	dbPath := a.g.dbPath
	if dbPath == "" {
		dbPath = env.cfg.DB
	}
	if dbPath == "" {
		dbPath = store.DefaultPath()
	}
	if db, err := store.Open(dbPath, "doctor"); err != nil {
		var locked *store.LockedError
		fix := fmt.Sprintf("make %s writable, or choose another file with --db or JARVIS_DB", filepath.Dir(dbPath))
		if errors.As(err, &locked) {
			fix = "wait for the other jarvis process to finish, or use --db"
		}
		add(check{name: "database", detail: err.Error(), fix: fix})
	} else {
		db.Close()
		add(check{name: "database", ok: true, detail: db.Path()})
	}

	for _, c := range checks {
		if !c.ok {
			return silentFail
		}
	}
	return nil
}

func (a *app) doctorModel(ctx context.Context, env *environment, add func(check)) {
	models, err := env.engine.ListModels(ctx)
	if err != nil {
		add(check{name: "model", detail: err.Error()})
		return
	}
	model := env.cfg.Model
	if model == "" {
		if len(models) == 0 {
			add(check{name: "model", detail: "no model set and the server has none", fix: "ollama pull qwen3"})
			return
		}
		m, note, err := env.resolveModel(ctx)
		if err != nil {
			add(check{name: "model", detail: err.Error()})
			return
		}
		add(check{name: "model", ok: true, warn: true, detail: note})
		model = m
	} else {
		found := slices.ContainsFunc(models, func(m engine.ModelInfo) bool {
			return m.Name == model || strings.TrimSuffix(m.Name, ":latest") == model
		})
		if !found {
			add(check{name: "model", detail: fmt.Sprintf("%s is not on the server (from %s)", model, env.cfg.Source("model")), fix: "ollama pull " + model})
			return
		}
		add(check{name: "model", ok: true, detail: model})
	}
	caps, err := env.engine.Capabilities(ctx, model)
	switch {
	case err != nil:
		add(check{name: "tools", detail: err.Error()})
	case slices.Contains(caps, engine.CapTools):
		add(check{name: "tools", ok: true, detail: fmt.Sprintf("%s supports native tool calls (%s)", model, strings.Join(caps, ", "))})
	default:
		add(check{name: "tools", ok: true, warn: true, detail: fmt.Sprintf("%s has no native tool support (%s); the orchestrator falls back to the react agent", model, strings.Join(caps, ", ")),
			fix: "for native tool calls use a model such as qwen3 or llama3.1"})
	}
}

func configDefaultPath() string {
	if p := os.Getenv("JARVIS_CONFIG"); p != "" {
		return p
	}
	return configPathDefault()
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "KMGTPE"[exp])
}

func ago(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return format.Count(int(d.Minutes()), "minute") + " ago"
	case d < 48*time.Hour:
		return format.Count(int(d.Hours()), "hour") + " ago"
	}
	return format.Count(int(d.Hours()/24), "day") + " ago"
}
