package ollamatest

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/model/renderers"
	"github.com/ollama/ollama/template"
)

// The prompt a model reads is made by Ollama's own code, as in the real
// server's renderPrompt: the model's template (TEMPLATE in a Modelfile)
// run by Ollama's template package, or, for a model with a built-in
// renderer (RENDERER qwen3-coder, ...), that renderer from Ollama's
// model/renderers.

func init() {
	// The real server sets this when it starts: renderers mark images
	// with [img] tags.
	renderers.RenderImgTags = true
}

// The stand-in's own templates, by the names a ModelSpec's Template takes.
// Both render every message as "<role>: <content>" (a tool result as
// "tool (<name>): <content>", a tool call as {"name":...,"arguments":...})
// and end with "assistant: ", the point where the model writes.
const (
	// TemplateJSON, the default, renders each offered tool as its full
	// JSON definition, one per line after "Tools:", as real templates do:
	// the schemas cost the model's window what they weigh.
	TemplateJSON = "json"
	// TemplateNames renders the tools as a list of names, as the tiny
	// test model of the project's wire notes did:
	// "Tools: calculator\nsystem: be brief\nuser: hi\nassistant: ".
	TemplateNames = "names"
)

// messagesTemplate renders the conversation; the stand-in's templates
// share it. Its {{ if .ToolCalls }} block starts with "{", so the tool
// parser Ollama derives from it reads bare JSON objects as calls.
const messagesTemplate = `{{- range .Messages }}{{ .Role }}{{ with .ToolName }} ({{ . }}){{ end }}: {{ .Content }}
{{- if .ToolCalls }}{{ $sep := .Content }}{{ range .ToolCalls }}{{ if $sep }} {{ end }}{"name":"{{ .Function.Name }}","arguments":{{ .Function.Arguments }}}{{ $sep = "x" }}{{ end }}{{ end }}
{{ end }}assistant: `

var ownTemplates = map[string]string{
	TemplateJSON: `{{- if .Tools }}Tools:
{{ range .Tools }}{{ json . }}
{{ end }}{{ end }}` + messagesTemplate,
	TemplateNames: `{{- if .Tools }}Tools: {{ range $i, $t := .Tools }}{{ if $i }}, {{ end }}{{ $t.Function.Name }}{{ end }}
{{ end }}` + messagesTemplate,
}

// chatTemplate is how a model's prompt is made: its template (for a
// renderer model Ollama's default, "{{ .Prompt }}", which is also what
// /api/show says) and, when set, the built-in renderer that makes the
// prompt instead.
type chatTemplate struct {
	source   string
	tmpl     *template.Template
	renderer string
}

// parseTemplate reads a ModelSpec's Template and Renderer: Template ""
// or "json" is TemplateJSON, "names" TemplateNames, a name Ollama ships
// ("command-r", "llama3-instruct", "chatml", ...; see ShippedTemplate)
// that template, and anything else Go template source in Ollama's
// dialect. With a Renderer, the template is Ollama's default unless one is
// given.
func parseTemplate(spec, renderer string) (*chatTemplate, error) {
	name := strings.TrimSpace(spec)
	if renderer != "" {
		if !knownRenderer(renderer) {
			return nil, fmt.Errorf("renderer %q is not one Ollama has built in (qwen3-coder, qwen3-vl-instruct, qwen3-vl-thinking, qwen3.5, cogito, deepseek3.1, olmo3, olmo3.1, olmo3-think, nemotron-3-nano, functiongemma, glm-4.7, lfm2, lfm2-thinking, ...)", renderer)
		}
		if name == "" {
			name = "{{ .Prompt }}"
		}
	}
	if name == "" {
		name = TemplateJSON
	}
	source, own := ownTemplates[name]
	switch {
	case own:
	case strings.Contains(spec, "{{") || name == "{{ .Prompt }}":
		source = cmp.Or(spec, name)
	default:
		var err error
		if source, err = ShippedTemplate(name); err != nil {
			return nil, fmt.Errorf("template %q is neither the stand-in's (%q or %q) nor Go template text, and %w", spec, TemplateJSON, TemplateNames, err)
		}
	}
	t, err := template.Parse(source)
	if err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	return &chatTemplate{source: source, tmpl: t, renderer: renderer}, nil
}

// knownRenderer reports whether Ollama has a renderer of that name (its
// package lists none, so one is asked for a prompt).
func knownRenderer(name string) (known bool) {
	defer func() {
		if recover() != nil {
			known = true // it exists, and disliked the probe
		}
	}()
	_, err := renderers.RenderWithRenderer(name, []api.Message{{Role: "user", Content: "hi"}}, nil, nil)
	return err == nil || !strings.HasPrefix(err.Error(), "unknown renderer")
}

// render is the real server's renderPrompt. Ollama's template code merges
// consecutive messages of one role in place, so it gets a copy.
func (t *chatTemplate) render(msgs []api.Message, tools []api.Tool, think *api.ThinkValue) (string, error) {
	msgs = slices.Clone(msgs)
	if t.renderer != "" {
		return renderers.RenderWithRenderer(t.renderer, msgs, tools, think)
	}
	var b bytes.Buffer
	v := template.Values{Messages: msgs, Tools: tools, IsThinkSet: think != nil}
	if think != nil {
		v.Think, v.ThinkLevel = think.Bool(), think.String()
	}
	if err := t.tmpl.Execute(&b, v); err != nil {
		return "", err
	}
	return b.String(), nil
}

// Render returns the prompt a model with the given template (as in
// ModelSpec.Template) reads for a conversation and its tools, exactly as
// the server renders it with thinking unset, so a test can compute what
// prompt_eval_count will be: CountTokens(Render(...)).
func Render(tmpl string, msgs []api.Message, tools []api.Tool) (string, error) {
	t, err := parseTemplate(tmpl, "")
	if err != nil {
		return "", err
	}
	return t.render(msgs, tools, nil)
}

// ShippedTemplate is the text of a chat template Ollama ships in its
// template package (template/NAME.gotmpl: chatml, command-r,
// gemma3-instruct, llama3-instruct, mistral-instruct, phi-3, ...), read
// from the source of the Ollama module jarvis is built with, in the Go
// module cache.
func ShippedTemplate(name string) (string, error) {
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return "", fmt.Errorf("%q is not the name of a template Ollama ships", name)
	}
	dir, err := ollamaSource()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(dir, "template", name+".gotmpl"))
	if errors.Is(err, os.ErrNotExist) {
		names, _ := filepath.Glob(filepath.Join(dir, "template", "*.gotmpl"))
		for i, n := range names {
			names[i] = strings.TrimSuffix(filepath.Base(n), ".gotmpl")
		}
		return "", fmt.Errorf("no template %q is shipped with Ollama (it has %s)", name, strings.Join(names, ", "))
	}
	if err != nil {
		return "", err
	}
	// As template.Named does: one kind of line end.
	return strings.ReplaceAll(string(b), "\r\n", "\n"), nil
}

// ollamaSource finds the source of the Ollama module the binary was
// built with, from where its template package's code was compiled: that
// very directory, or with -trimpath its module@version path inside the
// module cache ($GOMODCACHE, else what `go env GOMODCACHE` says).
var ollamaSource = sync.OnceValues(func() (string, error) {
	file, _ := runtime.FuncForPC(reflect.ValueOf(template.Parse).Pointer()).FileLine(0)
	dir := filepath.Dir(filepath.Dir(file)) // .../github.com/ollama/ollama@v0.17.4
	if !filepath.IsAbs(dir) {
		cache := os.Getenv("GOMODCACHE")
		if cache == "" {
			out, err := exec.Command("go", "env", "GOMODCACHE").Output()
			if err != nil {
				return "", fmt.Errorf("finding the Go module cache for Ollama's templates: set GOMODCACHE (go env GOMODCACHE): %w", err)
			}
			cache = strings.TrimSpace(string(out))
		}
		dir = filepath.Join(cache, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "template", "index.json")); err != nil {
		return "", fmt.Errorf("the templates Ollama ships are not at %s (run `go mod download github.com/ollama/ollama`): %w", dir, err)
	}
	return dir, nil
})

// fitted is a conversation as the model gets it after the window's rules.
type fitted struct {
	prompt      string
	tokens      int // tokens of the prompt as the model reads it
	fullTokens  int // tokens of the whole conversation rendered
	cutMessages int // messages dropped from the front (silent cut)
	cutTokens   int // tokens dropped after that (the last message alone did not fit)
}

// fit renders msgs as the real server's chatPrompt does: with truncate on,
// the oldest messages go one at a time (system messages are kept, the last
// message always) until the rendering fits the window, and when even the
// last message alone does not fit, the runner drops tokens from the front
// of the prompt down to the window. Nothing tells the client. With
// truncate off the whole conversation is rendered and the caller refuses
// it when it does not fit.
func (t *chatTemplate) fit(msgs []api.Message, tools []api.Tool, think *api.ThinkValue, window int, truncate bool) (fitted, error) {
	full, err := t.render(msgs, tools, think)
	if err != nil {
		return fitted{}, err
	}
	f := fitted{prompt: full, tokens: CountTokens(full)}
	f.fullTokens = f.tokens
	if !truncate || f.tokens <= window || len(msgs) == 0 {
		return f, nil
	}
	// The real server drops one message at a time until the rendering
	// fits. Dropping more never makes it longer, so the first start that
	// fits is found by bisection, with the same result in far fewer
	// renderings of a long conversation.
	last := len(msgs) - 1
	render := func(i int) (fitted, error) {
		var kept []api.Message
		dropped := 0
		for _, m := range msgs[:i] {
			if m.Role == "system" {
				kept = append(kept, m)
			} else {
				dropped++
			}
		}
		p, err := t.render(append(kept, msgs[i:]...), tools, think)
		return fitted{prompt: p, tokens: CountTokens(p), fullTokens: f.fullTokens, cutMessages: dropped}, err
	}
	lo, hi := 1, last // the answer is in [lo, hi]; hi may not fit either
	for lo < hi {
		mid := (lo + hi) / 2
		g, err := render(mid)
		if err != nil {
			return fitted{}, err
		}
		if g.tokens <= window {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if last > 0 {
		g, err := render(lo)
		if err != nil {
			return fitted{}, err
		}
		if f = g; f.tokens <= window {
			return f, nil
		}
	}
	// The last message alone is too big: the runner keeps the window's
	// worth of tokens.
	f.cutTokens = f.tokens - window
	f.tokens = window
	return f, nil
}
