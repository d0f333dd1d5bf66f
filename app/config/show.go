package config

import (
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/jarvis-workbench/jarvis/app/attach"
	"github.com/jarvis-workbench/jarvis/store"
	storemem "github.com/jarvis-workbench/jarvis/store/memory"
	"github.com/jarvis-workbench/jarvis/store/tasks"
	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/channels"
	"github.com/jarvis-workbench/jarvis/tools/code"
	memorytools "github.com/jarvis-workbench/jarvis/tools/memory"
	"github.com/jarvis-workbench/jarvis/tools/web"
)

// Setting is one line of `jarvis config show`.
type Setting struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// Settings lists every setting with its effective value and where it came
// from ("default", "config FILE:LINE", "env VAR", "flag --name"), in the
// order of the file's sections. Every field of every section is listed,
// the defaults included, so that a person sees what can be set; the
// entries of tables and lists ([tool.NAME], [channels.NAME],
// [[mcp.servers]], [[endpoints]]) show what they set.
//
// No secret is shown: API keys, channel tokens, webhook URLs and ntfy
// topics, MCP env and header values appear as set or not and the
// variable they are read from; any value under a credential's name, and
// any URL with credentials, is hidden as tools.RedactArgs hides it.
func (c *Config) Settings() []Setting {
	s := &shower{c: c}
	s.fields(reflect.ValueOf(c).Elem(), "", "", "", false)
	return s.out
}

type shower struct {
	c   *Config
	out []Setting
}

// source says where the value at path came from; a value inside one the
// file set as a whole (a key of [tool.NAME.parameters]) is located at its
// own line.
func (s *shower) source(path string) string {
	if src, ok := s.c.sources[path]; ok {
		return src
	}
	for p := parentPath(path); p != ""; p = parentPath(p) {
		if src, ok := s.c.sources[p]; ok {
			if strings.HasPrefix(src, "config ") {
				return s.c.fileSource(path)
			}
			return src
		}
	}
	return "default"
}

func (s *shower) add(key, value, source string) {
	s.out = append(s.out, Setting{Key: key, Value: value, Source: source})
}

// fields lists the fields of struct v. key is how the struct is shown
// ("mcp.servers.files"), path where it is in the file ("mcp.servers[0]"),
// pattern its path with map keys and indexes as * ("mcp.servers.*"), by
// which the displays below are found. In an entry of a table or list
// only the fields set are shown.
func (s *shower) fields(v reflect.Value, key, path, pattern string, entry bool) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name, ok := tomlName(t.Field(i))
		if !ok || entry && name == "name" && t.Field(i).Type.Kind() == reflect.String {
			continue // an entry is shown under its name
		}
		s.value(v.Field(i), joinPath(key, name), joinPath(path, name), joinPath(pattern, name), entry)
	}
}

// display shows the values whose effective value or form is not the
// value written: defaults that depend on other settings, secrets, prices.
// It is filled in init: its entries walk values themselves.
var display map[string]func(s *shower, v reflect.Value, key, path string)

func init() {
	display = map[string]func(s *shower, v reflect.Value, key, path string){
		"model": func(s *shower, v reflect.Value, key, path string) {
			s.add(key, orNone(s.c.Model, "(ask the server: the first model with tool support)"), s.source(path))
		},
		"engine": func(s *shower, _ reflect.Value, key, path string) {
			s.add(key, s.c.EngineName(), s.source(path))
		},
		"host": func(s *shower, _ reflect.Value, key, path string) {
			s.add(key, s.shown("host", s.c.HostOrDefault()), s.source(path))
		},
		"api_key": func(s *shower, _ reflect.Value, key, path string) {
			src := s.source(path)
			if s.c.APIKey == "" && os.Getenv(EnvAPIKey) != "" {
				src = "env " + EnvAPIKey
			}
			s.add(key, keySetting(s.c.APIKey, true), src)
		},
		"tools": func(s *shower, _ reflect.Value, key, path string) {
			s.add(key, orNone(strings.Join(s.c.Tools, ","), "(none)"), s.source(path))
		},
		"system": func(s *shower, _ reflect.Value, key, path string) {
			s.add(key, orNone(s.shown("system", s.c.System), "(the agent's own)"), s.source(path))
		},
		"db": func(s *shower, _ reflect.Value, key, path string) {
			s.add(key, orNone(s.c.DB, store.DefaultPath()), s.source(path))
		},
		"options.num_ctx": func(s *shower, _ reflect.Value, key, path string) {
			if s.c.Options.NumCtx == 0 && s.source(path) == "default" {
				s.add(key, "(the server's window for the model, else min(its maximum, 4096))", "default")
				return
			}
			s.add(key, strconv.Itoa(s.c.Options.NumCtx), s.source(path))
		},
		"prices.*":             showPrice,
		"endpoints.*.prices.*": showPrice,
		"channels.*": func(s *shower, v reflect.Value, key, path string) {
			name := key[strings.LastIndexByte(key, '.')+1:]
			redacted := v.Interface().(channels.Channel).Redacted(name)
			s.fields(reflect.ValueOf(redacted), key, path, "channels.*", true)
		},
		"mcp.servers.*.env.*":     showHidden,
		"mcp.servers.*.headers.*": showHidden,
		"mcp.servers.*.url": func(s *shower, v reflect.Value, key, path string) {
			if u := v.String(); u != "" {
				s.add(key, tools.RedactURL(u), s.source(path))
			}
		},
		"mcp.servers.*.args": func(s *shower, v reflect.Value, key, path string) {
			if args := v.Interface().([]string); len(args) > 0 {
				s.add(key, strings.Join(redactCommandArgs(args), " "), s.source(path))
			}
		},
		"web.search.searxng_url":    envFallback(web.EnvSearxNGURL, false),
		"web.search.brave_api_key":  envFallback(web.EnvBraveAPIKey, true),
		"web.search.tavily_api_key": envFallback(web.EnvTavilyAPIKey, true),
	}
}

// defaults say what an unset value means.
var defaults = map[string]string{
	"options.num_predict":       "(the server's default)",
	"options.temperature":       "(the model's default)",
	"options.seed":              "(random)",
	"options.keep_alive":        "(the server's default; Ollama's is 5m)",
	"options.think":             "(the model's default)",
	"prices":                    "(none: every model is free)",
	"tool":                      "(none: each tool as built)",
	"web.http.allow_hosts":      "(none: public addresses only)",
	"web.http.max_bytes":        strconv.Itoa(web.DefaultMaxBytes),
	"web.http.timeout":          strconv.Itoa(web.DefaultTimeout),
	"web.http.max_timeout":      strconv.Itoa(web.DefaultMaxTimeout),
	"web.http.user_agent":       web.DefaultUserAgent,
	"web.search.backend":        "(the first configured of searxng, brave, tavily)",
	"web.search.searxng_url":    "(none)",
	"web.search.brave_api_key":  "(none)",
	"web.search.tavily_api_key": "(none)",
	"web.search.brave_url":      web.DefaultBraveURL,
	"web.search.tavily_url":     web.DefaultTavilyURL,
	"web.search.timeout":        strconv.Itoa(web.DefaultSearchTimeout),
	"channels":                  "(none)",
	"code.python":               code.DefaultPython,
	"code.timeout":              strconv.Itoa(code.DefaultTimeout),
	"code.cpu_seconds":          strconv.Itoa(code.DefaultCPUSeconds),
	"code.memory_mb":            strconv.Itoa(code.DefaultMemoryMB),
	"code.max_processes":        strconv.Itoa(code.DefaultMaxProcesses),
	"code.max_file_size_mb":     strconv.Itoa(code.DefaultMaxFileSizeMB),
	"code.max_output_bytes":     strconv.Itoa(code.DefaultMaxOutputBytes),
	"code.session_cpu_seconds":  fmt.Sprintf("(%d times cpu_seconds)", code.DefaultSessionCPUFactor),
	"code.hide_paths":           "(none besides jarvis's own list)",
	"code.docker.binary":        code.DefaultDockerBinary,
	"code.docker.image":         code.DefaultDockerImage,
	"code.docker.memory_mb":     strconv.Itoa(code.DefaultDockerMemoryMB),
	"code.docker.pids_limit":    strconv.Itoa(code.DefaultDockerPidsLimit),
	"code.docker.cpus":          strconv.FormatFloat(code.DefaultDockerCPUs, 'g', -1, 64),
	"code.docker.timeout":       strconv.Itoa(code.DefaultDockerTimeout),
	"mcp.servers":               "(none)",
	"memory.embed_model":        "(none: keyword ranking alone)",
	"memory.chunk_size":         strconv.Itoa(storemem.DefaultChunkSize),
	"memory.chunk_overlap":      strconv.Itoa(storemem.DefaultChunkOverlap),
	"memory.semantic_weight":    strconv.FormatFloat(storemem.DefaultSemanticWeight, 'g', -1, 64),
	"memory.max_file_bytes":     strconv.Itoa(memorytools.DefaultMaxFileBytes),
	"context.tool_result_share": "0.25",
	"context.compact_at":        "0.85",
	"scheduler.timeout":         strings.TrimSuffix(tasks.DefaultTimeout.String(), "0s"),
	"endpoints":                 "(none)",
	"commands":                  "(none)",
	"images.max_bytes":          strconv.Itoa(attach.DefaultMaxBytes),
}

var secretType = reflect.TypeOf(Secret(""))

// value lists one value: a table's fields, a map's or list's entries, or
// a leaf.
func (s *shower) value(v reflect.Value, key, path, pattern string, entry bool) {
	if show, ok := display[pattern]; ok {
		show(s, v, key, path)
		return
	}
	t := v.Type()
	switch {
	case t == secretType:
		if !entry || v.String() != "" {
			s.add(key, keySetting(Secret(v.String()), false), s.source(path))
		}
		return
	case t.Kind() == reflect.Struct:
		s.fields(v, key, path, pattern, entry)
		return
	case t.Kind() == reflect.Map && (t.Elem().Kind() == reflect.Struct || entry):
		keys := v.MapKeys()
		if len(keys) == 0 {
			if d, ok := defaults[pattern]; ok && !entry {
				s.add(key, d, "default")
			}
			return
		}
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = k.String()
		}
		sort.Strings(names)
		for _, n := range names {
			ev := v.MapIndex(reflect.ValueOf(n).Convert(t.Key()))
			s.entry(ev, joinPath(key, n), joinPath(path, n), pattern+".*")
		}
		return
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		if v.Len() == 0 {
			if d, ok := defaults[pattern]; ok {
				s.add(key, d, "default")
			}
			return
		}
		for i := 0; i < v.Len(); i++ {
			ev := v.Index(i)
			sub := fmt.Sprintf("%s[%d]", key, i)
			if f := ev.FieldByName("Name"); f.IsValid() && f.Kind() == reflect.String && f.String() != "" {
				sub = key + "." + f.String()
			}
			s.entry(ev, sub, fmt.Sprintf("%s[%d]", path, i), pattern+".*")
		}
		return
	}
	s.leaf(v, key, path, pattern, entry)
}

// entry lists one entry of a table or list, and the entry itself when it
// sets nothing that is shown ([tool.think] with no keys, an MCP server
// with a name alone), so that every entry appears.
func (s *shower) entry(v reflect.Value, key, path, pattern string) {
	before := len(s.out)
	s.value(v, key, path, pattern, true)
	if len(s.out) == before {
		s.add(key, "(nothing set)", s.c.fileSource(path))
	}
}

// leaf lists a value that is not a table.
func (s *shower) leaf(v reflect.Value, key, path, pattern string, entry bool) {
	// A value the file (or a flag) gave is shown as given with where it
	// came from, even when it is the zero that means "not set".
	_, given := s.c.sources[path]
	set := !v.IsZero() || given
	if !set {
		if entry {
			return
		}
		if d, ok := defaults[pattern]; ok {
			s.add(key, d, "default")
			return
		}
	}
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	var text string
	switch v.Kind() {
	case reflect.Pointer:
		text = "(not set)"
	case reflect.String:
		text = v.String()
	case reflect.Bool:
		text = strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		text = strconv.FormatInt(v.Int(), 10)
	case reflect.Float32, reflect.Float64:
		text = strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.Slice:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = fmt.Sprint(v.Index(i).Interface())
		}
		text = orNone(strings.Join(parts, ", "), "(none)")
	default:
		text = fmt.Sprint(v.Interface())
	}
	if !set && text == "" {
		text = "(none)"
	}
	name := pattern[strings.LastIndexByte(pattern, '.')+1:]
	s.add(key, s.shown(name, text), s.source(path))
}

// shown is text fit to show as the value of a setting called name: hidden
// whole when the name is a credential's, with its URLs' credentials and
// bearer tokens cut out otherwise, the way the audit log records tool
// arguments.
func (s *shower) shown(name, text string) string {
	red := tools.RedactArgs(tools.Args{name: text})[name]
	if red == tools.RedactedMark && text != tools.RedactedMark {
		return hidden(text)
	}
	if str, ok := red.(string); ok {
		return str
	}
	return text
}

func showPrice(s *shower, v reflect.Value, key, path string) {
	p := v.Interface().(Price)
	s.add(key, fmt.Sprintf("$%g in / $%g out per million tokens", p.Input, p.Output), s.c.fileSource(path))
}

// showHidden shows a value that is always a secret (an MCP server's env
// and header values) by where it comes from alone.
func showHidden(s *shower, v reflect.Value, key, path string) {
	s.add(key, hidden(v.String()), s.c.fileSource(path))
}

// envFallback shows a [web.search] setting that the environment supplies
// when the file does not.
func envFallback(env string, secret bool) func(s *shower, v reflect.Value, key, path string) {
	return func(s *shower, v reflect.Value, key, path string) {
		val, src := v.String(), s.source(path)
		if strings.TrimSpace(val) == "" {
			val = strings.TrimSpace(os.Getenv(env))
			src = "env " + env
		}
		switch {
		case val == "":
			s.add(key, "(none)", "default")
		case secret && src != "env "+env:
			s.add(key, hidden(val), src)
		case secret:
			s.add(key, "(set; hidden)", src)
		default:
			s.add(key, s.shown("url", val), src)
		}
	}
}

// hidden describes a secret without showing it: the variables it is read
// from and whether they are set, or that it is written in the file.
func hidden(raw string) string {
	if raw == "" {
		return "(none)"
	}
	if m := envRef().FindAllStringSubmatch(raw, -1); m != nil {
		var vars []string
		for _, sub := range m {
			state := "set"
			if os.Getenv(sub[1]) == "" {
				state = "NOT SET"
			}
			vars = append(vars, fmt.Sprintf("$%s (%s)", sub[1], state))
		}
		return "from " + strings.Join(vars, ", ") + "; hidden"
	}
	return "(set in the file; hidden)"
}

// redactCommandArgs hides the values of a command line's credential
// options ("--token X", "--api-key=X") and the credentials in its URLs.
func redactCommandArgs(args []string) []string {
	secretName := func(n string) bool {
		return tools.RedactArgs(tools.Args{n: "x"})[n] == tools.RedactedMark
	}
	text := func(a string) string {
		if s, ok := tools.RedactArgs(tools.Args{"arg": a})["arg"].(string); ok {
			return s
		}
		return a
	}
	out := make([]string, len(args))
	hideNext := false
	for i, a := range args {
		switch {
		case hideNext:
			out[i], hideNext = tools.RedactedMark, false
		case strings.HasPrefix(a, "-"):
			name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			switch {
			case !secretName(name):
				out[i] = text(a)
			case hasValue:
				out[i] = a[:strings.IndexByte(a, '=')+1] + tools.RedactedMark
			default:
				out[i], hideNext = a, true
			}
		default:
			out[i] = text(a)
		}
	}
	return out
}
