package ollamatest

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/template"

	"github.com/ollama/ollama/api"
)

// The built-in chat templates, by the names a ModelSpec's Template takes.
// Both render every message as "<role>: <content>" (a tool result as
// "tool (<name>): <content>", a tool call as its JSON function object) and
// end with "assistant: ", the point where the model writes.
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

// messagesTemplate renders the conversation; the built-in templates share it.
const messagesTemplate = `{{- range .Messages }}{{ .Role }}{{ with .ToolName }} ({{ . }}){{ end }}: {{ .Content }}
{{- $sep := .Content }}{{ range .ToolCalls }}{{ if $sep }} {{ end }}{{ toolcall .Function }}{{ $sep = "x" }}{{ end }}
{{ end }}assistant: `

var builtinTemplates = map[string]string{
	TemplateJSON: `{{- if .Tools }}Tools:
{{ range .Tools }}{{ json . }}
{{ end }}{{ end }}` + messagesTemplate,
	TemplateNames: `{{- if .Tools }}Tools: {{ range $i, $t := .Tools }}{{ if $i }}, {{ end }}{{ $t.Function.Name }}{{ end }}
{{ end }}` + messagesTemplate,
}

// templateFuncs are the functions a template may call: json (a value as
// compact JSON, the way Ollama's own templates print tools) and toolcall
// (a call as {"name":...,"arguments":{...}}).
var templateFuncs = template.FuncMap{
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	"toolcall": toolCallJSON,
}

// toolCallJSON renders a call as a model writes it:
// {"name":"calculator","arguments":{"expression":"2+2"}}.
func toolCallJSON(f api.ToolCallFunction) (string, error) {
	b, err := json.Marshal(struct {
		Name      string                        `json:"name"`
		Arguments api.ToolCallFunctionArguments `json:"arguments"`
	}{f.Name, f.Arguments})
	return string(b), err
}

// templateData is what a template sees: .Messages (api.Message: Role,
// Content, Thinking, ToolName, ToolCalls), .Tools (api.Tool), and, as in
// Ollama's templates, .Think (thinking on) and .IsThinkSet (the request,
// or the model being a thinking model, set it).
type templateData struct {
	Messages   []api.Message
	Tools      []api.Tool
	Think      bool
	IsThinkSet bool
}

// chatTemplate is a model's parsed template and the text /api/show shows.
type chatTemplate struct {
	source string
	tmpl   *template.Template
}

// parseTemplate reads a ModelSpec's Template: "" or "json" for
// TemplateJSON, "names" for TemplateNames, anything else as Go
// text/template source over templateData.
func parseTemplate(spec string) (*chatTemplate, error) {
	name := strings.TrimSpace(spec)
	if name == "" {
		name = TemplateJSON
	}
	source, builtin := builtinTemplates[name]
	if !builtin {
		if !strings.Contains(spec, "{{") {
			return nil, fmt.Errorf("template %q is neither a built-in (%q or %q) nor Go template text", spec, TemplateJSON, TemplateNames)
		}
		source = spec
	}
	t, err := template.New("chat").Funcs(templateFuncs).Parse(source)
	if err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	return &chatTemplate{source: source, tmpl: t}, nil
}

func (t *chatTemplate) render(msgs []api.Message, tools []api.Tool, think *api.ThinkValue) (string, error) {
	data := templateData{Messages: msgs, Tools: tools, IsThinkSet: think != nil}
	if think != nil {
		data.Think = think.Bool()
	}
	var b strings.Builder
	if err := t.tmpl.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// Render returns the prompt a model with the given template (as in
// ModelSpec.Template) reads for a conversation and its tools, exactly as
// the server renders it with thinking unset, so a test can compute what
// prompt_eval_count will be: CountTokens(Render(...)).
func Render(tmpl string, msgs []api.Message, tools []api.Tool) (string, error) {
	t, err := parseTemplate(tmpl)
	if err != nil {
		return "", err
	}
	return t.render(msgs, tools, nil)
}

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
