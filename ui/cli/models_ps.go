package cli

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jarvis-workbench/jarvis/app"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/internal/table"
	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// loadedModel is one line of `jarvis models ps`.
type loadedModel struct {
	engine.LoadedModel
	Endpoint string `json:"endpoint,omitempty"`
}

func (a *cmdline) modelsPsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ps",
		Short: "The models the server holds in memory: size, VRAM, window, until when",
		Long: `List the models the Ollama server (and every Ollama endpoint) holds in memory
now, from its /api/ps: the size in memory, the part in VRAM, the context
window it was loaded with, and when it will be unloaded if unused.
OpenAI-compatible servers do not say what they have loaded.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			env, err := a.environment()
			if err != nil {
				return err
			}
			if _, ok := env.def.Engine.(engine.LoadLister); !ok {
				return failErr("the %s at %s does not say which models it has loaded (that is Ollama's /api/ps); it holds the models it was started with", env.def.Driver.Label, env.def.Engine.Host())
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			loaded := []loadedModel{}
			failed := false
			for _, s := range env.servers() {
				ll, ok := s.Engine.(engine.LoadLister)
				if !ok || s.Err != nil && s.Name != "" {
					continue
				}
				list, err := ll.Loaded(ctx)
				if err != nil {
					if s.Name == "" {
						return failErr("%v", err)
					}
					fmt.Fprintf(a.io.Err, "jarvis: %s: %s\n", s.Label(), safe.Text(err.Error()))
					failed = true
					continue
				}
				for _, m := range list {
					m.Name = s.Ref(m.Name)
					loaded = append(loaded, loadedModel{LoadedModel: m, Endpoint: s.Name})
				}
			}
			if asJSON {
				if err := writeJSON(a.io.Out, loaded); err != nil {
					return err
				}
			} else if len(loaded) == 0 {
				fmt.Fprintf(a.io.Out, "No model is loaded on the server at %s; a model loads at its first request.\n", env.def.Engine.Host())
			} else {
				w := table.New(a.io.Out)
				fmt.Fprintln(w, "NAME\tSIZE\tVRAM\tCONTEXT\tUNTIL")
				now := time.Now()
				for _, m := range loaded {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", m.Name, format.Bytes(m.SizeBytes), vramText(m.LoadedModel),
						tokensOrDash(m.ContextLength), untilText(m.ExpiresAt, now))
				}
				if err := w.Flush(); err != nil {
					return err
				}
			}
			if failed {
				return silentFail
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the loaded models as JSON")
	return cmd
}

// vramText is the part of a loaded model in VRAM: "4.1 GB (100%)".
func vramText(m engine.LoadedModel) string {
	if m.VRAMBytes <= 0 {
		return "0 B (CPU)"
	}
	pct := 100
	if m.SizeBytes > 0 {
		pct = int(m.VRAMBytes * 100 / m.SizeBytes)
	}
	return fmt.Sprintf("%s (%d%%)", format.Bytes(m.VRAMBytes), pct)
}

func tokensOrDash(n int) string {
	if n <= 0 {
		return "-"
	}
	return groupThousands(n) + " tokens"
}

// untilText says when a loaded model will be unloaded: "14:05 (in 4m)",
// or "forever" for keep_alive < 0 (Ollama shows those centuries ahead).
func untilText(t, now time.Time) string {
	switch {
	case t.IsZero():
		return "-"
	case t.Sub(now) > 50*365*24*time.Hour:
		return "forever"
	case !t.After(now):
		return "now"
	}
	clock := t.Local().Format("15:04")
	if t.Local().YearDay() != now.Local().YearDay() || t.Year() != now.Year() {
		clock = t.Local().Format("Jan 2 15:04")
	}
	return fmt.Sprintf("%s (in %s)", clock, format.Remaining(t.Sub(now)))
}

func groupThousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// shownModel is `jarvis models show --json`.
type shownModel struct {
	engine.ModelDetails
	Endpoint string              `json:"endpoint,omitempty"`
	Server   string              `json:"server"`
	Loaded   *engine.LoadedModel `json:"loaded,omitempty"`
}

func (a *cmdline) modelsShowCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "A model's capabilities, context window, parameters and chat template",
		Long: `Show what the server says about one model (NAME, or ENDPOINT/NAME): its
capabilities, its context window, family, size and quantization, and on
Ollama its default parameters, its chat template and whether it is loaded.
For an OpenAI-compatible server this is what its /v1/models says (and the
window it runs the model with, where the server tells).`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			env, err := a.environment()
			if err != nil {
				return err
			}
			srv, model := env.lookup(args[0])
			if srv.Err != nil {
				return failErr("%v", srv.Err)
			}
			d, ok := srv.Engine.(engine.Describer)
			if !ok {
				return failErr("the %s at %s does not describe its models", srv.Driver.Label, srv.Engine.Host())
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			details, err := d.Show(ctx, model)
			if err != nil {
				return failErr("%v", err)
			}
			out := shownModel{ModelDetails: details, Endpoint: srv.Name, Server: srv.Engine.Host()}
			out.Name = srv.Ref(model)
			if ll, ok := srv.Engine.(engine.LoadLister); ok {
				if list, err := ll.Loaded(ctx); err == nil {
					for _, m := range list {
						if engine.SameModel(m.Name, model) {
							out.Loaded = &m
						}
					}
				}
			}
			if asJSON {
				return writeJSON(a.io.Out, out)
			}
			a.printShown(out, srv)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the details as JSON")
	return cmd
}

func (a *cmdline) printShown(m shownModel, srv *app.Server) {
	w := table.New(a.io.Out)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "%s\t%s\n", k, v)
		}
	}
	row("Model", m.Name)
	row("Server", m.Server)
	caps := strings.Join(m.Capabilities, ", ")
	if m.Capabilities == nil {
		caps = "unknown: the server does not say what the model can do (jarvis tries tools and images, and the server answers)"
	}
	row("Capabilities", caps)
	if srv.Driver.WindowFixedAtLoad {
		// These servers fix the window when they load the model: the
		// window in force, and the most a restart could give.
		window := "unknown: the server does not say the window it runs the model with; tell jarvis with --num-ctx or num_ctx"
		if m.Window > 0 {
			window = fmt.Sprintf("%s tokens (the window the server runs it with, fixed when the server loads the model", groupThousands(m.Window))
			if m.WindowFrom != "" {
				window += ", from " + m.WindowFrom
			}
			window += ")"
		}
		row("Context", window)
		if m.ContextLength > 0 {
			row("Maximum", fmt.Sprintf("%s tokens (the model's own: the most a server restarted with a larger window can give it)", groupThousands(m.ContextLength)))
		}
	} else if m.ContextLength > 0 {
		row("Context", fmt.Sprintf("%s tokens (the model's maximum; a request sets the window it runs with (num_ctx))", groupThousands(m.ContextLength)))
	}
	row("Family", m.Family)
	row("Parameters", m.ParameterSize)
	row("Quantization", m.Quantization)
	if _, ok := srv.Engine.(engine.LoadLister); ok {
		if l := m.Loaded; l != nil {
			row("Loaded", fmt.Sprintf("yes: %s in memory, %s VRAM, window %s, until %s", format.Bytes(l.SizeBytes), vramText(*l), tokensOrDash(l.ContextLength), untilText(l.ExpiresAt, time.Now())))
		} else {
			row("Loaded", "no (it loads at its first request)")
		}
	}
	w.Flush()
	if m.Parameters != "" {
		fmt.Fprintln(a.io.Out, "\nDefault parameters:")
		for _, line := range strings.Split(strings.TrimRight(m.Parameters, "\n"), "\n") {
			fmt.Fprintln(a.io.Out, "  "+strings.Join(strings.Fields(line), " "))
		}
	}
	if m.Template != "" {
		fmt.Fprintln(a.io.Out, "\nChat template:")
		for _, line := range strings.Split(strings.TrimRight(m.Template, "\n"), "\n") {
			fmt.Fprintln(a.io.Out, "  "+line)
		}
	}
	if m.Template == "" && m.Parameters == "" {
		fmt.Fprintf(a.io.Out, "\nThe %s shows no chat template or default parameters.\n", srv.Driver.Label)
	}
}

func (a *cmdline) modelsUnloadCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "unload [NAME]",
		Short: "Free the memory a loaded model holds (Ollama; default: the configured model)",
		Long: `Ask the Ollama server to unload a model now (keep_alive 0, as 'ollama stop'
does), freeing its memory and VRAM; it loads again at its next request.
Without NAME, the configured model. OpenAI-compatible servers cannot unload
a model on request.`,
		Args: argsUsage(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			env, err := a.environment()
			if err != nil {
				return err
			}
			ref := env.cfg.Model
			if len(args) == 1 {
				ref = args[0]
			}
			if ref == "" {
				return usageErr("no model given and none configured. Usage: jarvis models unload NAME (see 'jarvis models ps')")
			}
			srv, model := env.lookup(ref)
			if srv.Err != nil {
				return failErr("%v", srv.Err)
			}
			u, ok := srv.Engine.(engine.Unloader)
			if !ok {
				return failErr("the %s at %s cannot unload a model on request; stop or restart it to free the memory", srv.Driver.Label, srv.Engine.Host())
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			if ll, ok := srv.Engine.(engine.LoadLister); ok {
				list, err := ll.Loaded(ctx)
				if err != nil {
					return failErr("%v", err)
				}
				if !slices.ContainsFunc(list, func(m engine.LoadedModel) bool { return engine.SameModel(m.Name, model) }) {
					fmt.Fprintf(a.io.Out, "%s is not loaded; nothing to free.\n", srv.Ref(model))
					return nil
				}
			}
			if err := u.Unload(ctx, model); err != nil {
				return failErr("%v", err)
			}
			fmt.Fprintf(a.io.Out, "Unloaded %s: the server freed its memory (it loads again at its next request).\n", srv.Ref(model))
			return nil
		},
	}
}
