package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/jarvis-workbench/jarvis/app"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/internal/table"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

func (a *cmdline) modelsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the models of every configured server; pull, ps, show, unload",
		Long: `List the models of the server jarvis is configured for (--engine, --host)
and of every endpoint in the config ([[endpoints]], whose models are named
ENDPOINT/MODEL), with size and capabilities. The subcommands download a
model (pull), show what is loaded (ps), describe one model (show) and free
one (unload).

Exit status 1 when a server could not be listed (the others still are).`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			env, err := a.environment()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			lists := listServers(ctx, env.servers())
			var models []listedModel
			failed := false
			for _, l := range lists {
				if l.err != nil {
					failed = true
					if len(lists) == 1 {
						return failErr("%v", l.err)
					}
					if l.srv.Name != "" {
						fmt.Fprintf(a.io.Err, "jarvis: %s\n", safe.Text(env.serverErr(l.srv, l.err).Error()))
						continue
					}
					fmt.Fprintf(a.io.Err, "jarvis: %s (%s): %s\n", l.srv.Label(), l.srv.Engine.Host(), safe.Text(l.err.Error()))
					continue
				}
				models = append(models, l.models...)
			}
			if asJSON {
				if models == nil {
					models = []listedModel{}
				}
				if err := writeJSON(a.io.Out, models); err != nil {
					return err
				}
			} else if err := a.printModels(env, lists, models); err != nil {
				return err
			}
			if failed {
				return silentFail
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the models as JSON")
	cmd.AddCommand(a.modelsPullCommand(), a.modelsPsCommand(), a.modelsShowCommand(), a.modelsUnloadCommand())
	return cmd
}

// listedModel is one model in `jarvis models`: its name as --model takes
// it (ENDPOINT/MODEL for an endpoint's).
type listedModel struct {
	engine.ModelInfo
	Endpoint string `json:"endpoint,omitempty"`
}

// serverList is what one server listed.
type serverList struct {
	srv    *app.Server
	models []listedModel
	err    error
}

// listServers lists every server's models with their capabilities, the
// servers side by side.
func listServers(ctx context.Context, servers []*app.Server) []serverList {
	out := make([]serverList, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i].srv = s
			infos, err := s.Engine.ListModels(ctx)
			if err != nil {
				out[i].err = err
				return
			}
			fillCapabilities(ctx, s.Engine, infos)
			for _, m := range infos {
				m.Name = s.Ref(m.Name)
				out[i].models = append(out[i].models, listedModel{ModelInfo: m, Endpoint: s.Name})
			}
		}()
	}
	wg.Wait()
	return out
}

func (a *cmdline) printModels(env *environment, lists []serverList, models []listedModel) error {
	if len(models) == 0 {
		if l := lists[0]; l.err == nil && len(lists) == 1 {
			if !env.def.Driver.CanPull {
				fmt.Fprintf(a.io.Out, "The server at %s lists no models: it serves the ones it was started with (%s).\n", env.def.Engine.Host(), env.def.Driver.LoadHint)
			} else {
				fmt.Fprintf(a.io.Out, "The server at %s has no models. Download one with: jarvis models pull qwen3\n", env.def.Engine.Host())
			}
		}
		return nil
	}
	w := table.New(a.io.Out)
	fmt.Fprintln(w, "NAME\tSIZE\tPARAMS\tQUANT\tMODIFIED\tCAPABILITIES")
	for _, m := range models {
		size := "-"
		if m.SizeBytes > 0 {
			size = format.Bytes(m.SizeBytes)
		}
		caps := strings.Join(m.Capabilities, ", ")
		if m.Capabilities == nil {
			caps = "unknown" // the server does not say
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, size, orDash(m.ParameterSize),
			orDash(m.Quantization), ago(m.ModifiedAt), caps)
	}
	return w.Flush()
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

func configDefaultPath() string {
	if p := os.Getenv("JARVIS_CONFIG"); p != "" {
		return p
	}
	return configPathDefault()
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
