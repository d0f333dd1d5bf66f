package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jarvis-workbench/jarvis/app"
	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/engine/openai"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/mcp"
)

func (a *cmdline) doctorCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check the servers, the model, tool support and the data directory",
		Long: `Check everything jarvis needs, and say how to fix what fails: the config
file, the model server (Ollama, or an OpenAI-compatible server with
--engine openai) and every configured endpoint, the model, its tool
support, the MCP servers (started and stopped as 'jarvis mcp list' does),
and the database. Each problem of the configuration is a failed
check of its own, with its file, line and fix; while there are any, the
other checks wait (every other command refuses to run). Exit status 1 when a
check fails.`,
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

func (a *cmdline) doctor(ctx context.Context) error {
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
	// Every problem of the configuration, each on its own line with its
	// fix: every other command refuses to run until they are fixed.
	cfg, problems := config.Read(a.globalConfigFlags())
	if len(problems) > 0 {
		for _, p := range problems {
			add(check{name: "config", detail: strings.TrimPrefix(p.Where(), "config ") + ": " + p.Detail(), fix: p.Fix})
		}
		return silentFail
	}
	a.cfg = cfg
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
	for _, s := range env.servers() {
		if a.doctorServer(ctx, env, s, add) && s == env.at {
			a.doctorModel(ctx, env, add)
		}
	}
	a.doctorEmbeddings(env, add)
	a.doctorMCP(ctx, env, add)

	dbPath := a.g.dbPath
	if dbPath == "" {
		dbPath = env.cfg.DB
	}
	if dbPath == "" {
		dbPath = store.DefaultPath()
	}
	if h, err := app.OpenDB(dbPath); err == nil {
		dbPath = h.Path() // ~ expanded, absolute; the file is not touched
	}
	if !exists(dbPath) {
		// A check creates nothing: the first command that saves does.
		c := check{name: "database", ok: true, detail: dbPath + " does not exist yet; the first command that saves (ask --save, memory index, the workbench) creates it"}
		if named := a.dbNamed(); named != "" {
			c.warn, c.fix = true, "check the path from "+named+" if you meant an existing database"
		}
		add(c)
	} else if db, err := store.Open(dbPath, "doctor"); err != nil {
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

// doctorServer checks that a server answers, and reports whether it did.
// The fix is the one for its kind: how to start Ollama or an
// OpenAI-compatible server, or where its key goes.
func (a *cmdline) doctorServer(ctx context.Context, env *environment, s *app.Server, add func(check)) bool {
	name := "server"
	if s.Name != "" {
		name = s.Name
	}
	host := s.Engine.Host()
	if s.Err != nil {
		var ke *config.KeyError
		fix := "correct the endpoint in the config"
		if errors.As(s.Err, &ke) {
			fix = fmt.Sprintf("export %s=... before running jarvis (the endpoint's api_key reads it)", ke.Var)
		}
		add(check{name: name, detail: s.Err.Error(), fix: fix})
		return false
	}
	version, err := s.Engine.Version(ctx)
	var auth *openai.AuthError
	switch {
	case err == nil:
		detail := fmt.Sprintf("%s at %s", serverVersion(s.Driver, version), host)
		if s.Name != "" {
			detail = "endpoint: " + detail
		}
		add(check{name: name, ok: true, detail: detail})
		return true
	case errors.Is(err, engine.ErrUnreachable):
		add(check{name: name, detail: fmt.Sprintf("no answer from %s", host), fix: env.startFix(s)})
	case errors.As(err, &auth):
		add(check{name: name, detail: fmt.Sprintf("%s refused the request: HTTP %d %s", host, auth.Status, auth.Message), fix: env.keyFix(s, auth.KeySent)})
	default:
		add(check{name: name, detail: fmt.Sprintf("%s answered, but not with %s: %v", host, s.Driver.API, err),
			fix: "check that the host is the server's (not a proxy or another service): " + s.Driver.HostHint + env.whereHost(s)})
	}
	return false
}

// serverVersion names what answered: "Ollama 0.17.4" for a server that
// reports a bare version number, "vLLM 0.10.1" as a server that names
// itself says it.
func serverVersion(d engine.Driver, version string) string {
	if version != "" && version[0] >= '0' && version[0] <= '9' {
		return d.Label + " " + version
	}
	return version
}

// startFix says how to start a server of s's kind, or point jarvis at it.
func (env *environment) startFix(s *app.Server) string {
	if s.Name != "" {
		return s.Driver.StartHint + " on that machine" + env.whereHost(s)
	}
	where := "--host"
	if s.Driver.HostEnv != "" {
		where += " or " + s.Driver.HostEnv
	}
	return s.Driver.StartHint + ", or point jarvis at it with " + where + " (" + strings.TrimPrefix(s.Driver.HostHint, "write ") + ")"
}

// whereHost is ", or correct the host of endpoint lab (config FILE:LINE)"
// for an endpoint, "" for the default server.
func (env *environment) whereHost(s *app.Server) string {
	if s.Name == "" {
		return ""
	}
	return fmt.Sprintf(", or correct the host of endpoint %s (config %s:%d)", s.Name, env.cfg.Path(), s.Line)
}

// keyFix says where the key of s is set.
func (env *environment) keyFix(s *app.Server, sent bool) string {
	what := "set the key"
	if sent {
		what = "check the key"
	}
	if s.Name != "" {
		return fmt.Sprintf("%s: api_key of endpoint %s (config %s:%d); write it as \"${VAR}\" to read it from the environment", what, s.Name, env.cfg.Path(), s.Line)
	}
	return what + ": api_key in the config (\"${VAR}\" reads it from the environment), or OPENAI_API_KEY"
}

func (a *cmdline) doctorModel(ctx context.Context, env *environment, add func(check)) {
	s := env.at
	models, err := s.Engine.ListModels(ctx)
	if err != nil {
		add(check{name: "model", detail: err.Error()})
		return
	}
	model := env.model
	if model == "" {
		if len(models) == 0 {
			fix := "jarvis models pull qwen3"
			if !s.Driver.CanPull {
				fix = "start the server with a model (" + s.Driver.LoadHint + ")"
			}
			add(check{name: "model", detail: "no model set and the server has none", fix: fix})
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
		// A server may serve a model its list does not name (llama.cpp
		// serves its one model under any name): ask it.
		if !found {
			_, err := s.Engine.Capabilities(ctx, model)
			found = err == nil
		}
		if !found {
			detail := fmt.Sprintf("%s is not on %s (from %s)", s.Ref(model), s.Label(), env.cfg.Source("model"))
			fix := fmt.Sprintf("jarvis models pull %s", s.Ref(model))
			if !s.Driver.CanPull {
				names := make([]string, len(models))
				for i, m := range models {
					names[i] = s.Ref(m.Name)
				}
				fix = "pick one the server serves with --model or model in the config"
				if len(names) > 0 {
					fix += ": " + strings.Join(names, ", ")
				}
			}
			add(check{name: "model", detail: detail, fix: fix})
			return
		}
		add(check{name: "model", ok: true, detail: s.Ref(model)})
	}
	caps, err := s.Engine.Capabilities(ctx, model)
	switch {
	case err != nil:
		add(check{name: "tools", detail: err.Error()})
	case caps == nil:
		add(check{name: "tools", ok: true, detail: fmt.Sprintf("the server does not say what %s can do: jarvis tries native tool calls and falls back to the react agent if the server refuses them", model)})
	case !slices.Contains(caps, engine.CapCompletion) && slices.Contains(caps, engine.CapEmbedding):
		add(check{name: "tools", detail: fmt.Sprintf("%s is an embedding model: it cannot chat", model), fix: "set a chat model with --model or model in the config (jarvis models lists them)"})
	case slices.Contains(caps, engine.CapTools):
		add(check{name: "tools", ok: true, detail: fmt.Sprintf("%s supports native tool calls (%s)", model, strings.Join(caps, ", "))})
	default:
		add(check{name: "tools", ok: true, warn: true, detail: fmt.Sprintf("%s has no native tool support (%s); the orchestrator falls back to the react agent", model, strings.Join(caps, ", ")),
			fix: "for native tool calls use a model such as qwen3 or llama3.1"})
	}
}

// doctorEmbeddings warns when memory is told to embed with a server that
// cannot.
func (a *cmdline) doctorEmbeddings(env *environment, add func(check)) {
	m := env.cfg.Memory.EmbedModel
	if m == "" {
		return
	}
	if _, ok := env.def.Engine.(engine.Embedder); ok {
		add(check{name: "memory", ok: true, detail: "semantic ranking with " + m})
		return
	}
	add(check{name: "memory", ok: true, warn: true,
		detail: fmt.Sprintf("[memory] embed_model is %s, but the %s does not make embeddings for jarvis; memory ranks with BM25 alone", m, env.def.Driver.Label),
		fix:    "use an Ollama server as the default engine for embeddings, or remove embed_model"})
}

// offeredNote says how many of a ready server's tools the configured
// tools offer the model, and how to offer them when none are: they are
// off until named, which a person who configured the server may not know.
func offeredNote(enabled []string, s mcp.ServerStatus) string {
	if len(s.Tools) == 0 {
		return ""
	}
	n := 0
	for _, t := range s.Tools {
		if slices.ContainsFunc(enabled, func(e string) bool { return e == t.Name || tools.IsPattern(e) && tools.MatchPattern(e, t.Name) }) {
			n++
		}
	}
	if n == 0 {
		return fmt.Sprintf("; none offered to the model (add \"%s__*\" to tools in the config, or /tools +%s__* in the workbench)", s.Name, s.Name)
	}
	return fmt.Sprintf("; %d offered to the model by the config's tools", n)
}

// doctorMCP starts every enabled MCP server as 'jarvis mcp list' does and
// says, for each, whether it came up with its tools, what it left out,
// or why it failed.
func (a *cmdline) doctorMCP(ctx context.Context, env *environment, add func(check)) {
	if len(env.cfg.MCP.Servers) == 0 {
		return
	}
	list, err := mcp.Inspect(ctx, env.cfg.MCP, mcp.InspectOptions{Options: mcp.Options{ClientVersion: versionString()}})
	if err != nil {
		add(check{name: "mcp", detail: err.Error(), fix: "correct [[mcp.servers]] in the config"})
		return
	}
	for _, s := range list {
		server := fmt.Sprintf("server %s (%s): ", s.Name, s.Target)
		switch {
		case s.State == mcp.StateDisabled:
			add(check{name: "mcp", ok: true, detail: server + "disabled (enabled = false)"})
		case s.Available() && len(s.Skipped) > 0:
			add(check{name: "mcp", ok: true, warn: true, detail: server + s.Summary(time.Now()) + "; left out: " + strings.Join(s.Skipped, "; "),
				fix: "these tools' input schemas cannot be checked, so they are not offered; 'jarvis mcp tools " + s.Name + "' lists what is"})
		case s.Available():
			add(check{name: "mcp", ok: true, detail: server + s.Summary(time.Now()) + offeredNote(env.cfg.Tools, s)})
		default:
			add(check{name: "mcp", detail: server + string(s.State) + ": " + cmp.Or(s.Reason, s.LastError, "no reason given"),
				fix: "'jarvis mcp tools " + s.Name + "' shows it in full; correct its command or url in the config, or set enabled = false"})
		}
	}
}
