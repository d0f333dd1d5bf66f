package ollamatest

import (
	"strings"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/model/parsers"
	"github.com/ollama/ollama/thinking"
	"github.com/ollama/ollama/tools"
)

// outputParser turns what the model writes (a Raw step) into what the
// server sends, with Ollama's own parsers, as the real ChatHandler and
// GenerateHandler do with each piece the runner streams: the model's
// built-in parser (PARSER) when it has one; otherwise the thinking parser
// whose tags thinking.InferTags finds in the template (when thinking is
// on), then, when the request offers tools, the tool-call parser
// tools.NewParser derives from the template. What those parsers keep,
// drop or hold back is what the client gets.
type outputParser struct {
	builtin  parsers.Parser
	thinking *thinking.Parser
	tools    *tools.Parser
	// generate: /api/generate, whose built-in parser's calls are sent
	// only with the final chunk.
	generate bool
}

// builtinParser is the model's PARSER, initialised as the handlers do
// before rendering, and the tools the template then renders (a parser may
// rename them); nil when the model has none.
func builtinParser(m ModelSpec, reqTools []api.Tool, last *api.Message, think *api.ThinkValue) (parsers.Parser, []api.Tool) {
	if m.Parser == "" {
		return nil, reqTools
	}
	p := parsers.ParserForName(m.Parser)
	if p == nil {
		return nil, reqTools
	}
	return p, p.Init(reqTools, last, think)
}

// newOutputParser sets up the parsers for one reply to a prompt.
func newOutputParser(builtin parsers.Parser, t *chatTemplate, reqTools []api.Tool, think *api.ThinkValue, prompt string, generate bool) *outputParser {
	o := &outputParser{builtin: builtin, generate: generate}
	if builtin == nil {
		open, closing := thinking.InferTags(t.tmpl.Template)
		if think != nil && think.Bool() && open != "" && closing != "" {
			o.thinking = &thinking.Parser{OpeningTag: open, ClosingTag: closing}
			if strings.HasSuffix(strings.TrimSpace(prompt), open) {
				o.thinking.AddContent(open)
			}
		}
	}
	if !generate && len(reqTools) > 0 && (builtin == nil || !builtin.HasToolSupport()) {
		o.tools = tools.NewParser(t.tmpl.Template, reqTools)
	}
	return o
}

// add takes one piece of the model's output (done: the runner's final
// response) and returns what the server sends for it; send is false when
// it sends nothing (a parser holds the text back).
func (o *outputParser) add(s string, done bool) (content, thought string, calls []api.ToolCall, send bool, err error) {
	if o.builtin != nil {
		content, thought, calls, err = o.builtin.Add(s, done)
		if err != nil {
			return "", "", nil, false, err
		}
		if o.generate && !done {
			calls = nil
		}
		return content, thought, calls, content != "" || thought != "" || len(calls) > 0 || done, nil
	}
	content = s
	if o.thinking != nil {
		t, rest := o.thinking.AddContent(s)
		if t == "" && rest == "" && !done {
			return "", "", nil, false, nil
		}
		thought, content = t, rest
	}
	if o.tools == nil {
		return content, thought, nil, true, nil
	}
	parsed, rest := o.tools.Add(content)
	switch {
	case len(rest) > 0:
		// Text and calls in one piece: the server sends the text.
		return rest, thought, nil, true, nil
	case len(parsed) > 0:
		return "", thought, parsed, true, nil
	case thought != "":
		// The real handler falls through with the piece's content as it
		// was before the tool parser took it.
		return content, thought, nil, true, nil
	case done:
		return o.tools.Content(), "", nil, true, nil
	}
	return "", "", nil, false, nil
}
