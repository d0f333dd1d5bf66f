package openai

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/jarvis-workbench/jarvis/engine"
)

// request is a chat request in the SDK's types, with the size of what it
// carries for estimating usage when the server reports none.
type request struct {
	params    oai.ChatCompletionNewParams
	sentChars int
}

// newRequest converts a chat request. Thinking of earlier assistant
// messages is not sent back: the API has no field for it, and servers drop
// it from the prompt anyway.
func newRequest(model string, msgs []engine.Message, tools []engine.ToolDef, opts engine.Options, maxCompletion bool) (request, error) {
	r := request{params: oai.ChatCompletionNewParams{Model: model}}
	if err := setOptions(&r.params, opts, maxCompletion); err != nil {
		return r, err
	}
	r.params.Messages = make([]oai.ChatCompletionMessageParamUnion, 0, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		p, err := toParam(m)
		if err != nil {
			return r, fmt.Errorf("message %d: %w", i, err)
		}
		r.params.Messages = append(r.params.Messages, p)
		r.sentChars += len(m.Content)
		for _, tc := range m.ToolCalls {
			r.sentChars += len(tc.Name) + len(tc.Arguments)
		}
	}
	if len(tools) > 0 {
		r.params.Tools = make([]oai.ChatCompletionToolUnionParam, len(tools))
		for i, d := range tools {
			t, size, err := toTool(d)
			if err != nil {
				return r, err
			}
			r.params.Tools[i] = t
			r.sentChars += size
		}
	}
	return r, nil
}

func toParam(m *engine.Message) (oai.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case engine.RoleSystem:
		return oai.SystemMessage(m.Content), nil
	case engine.RoleUser:
		if len(m.Images) == 0 {
			return oai.UserMessage(m.Content), nil
		}
		// With images the content is a list of parts: the text, then
		// each image as a data URL (the API's way to send a file inline).
		parts := make([]oai.ChatCompletionContentPartUnionParam, 0, len(m.Images)+1)
		if m.Content != "" {
			parts = append(parts, oai.TextContentPart(m.Content))
		}
		for _, im := range m.Images {
			parts = append(parts, oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{URL: im.DataURL()}))
		}
		return oai.UserMessage(parts), nil
	case engine.RoleTool:
		return oai.ToolMessage(m.Content, m.ToolCallID), nil
	case engine.RoleAssistant:
		a := &oai.ChatCompletionAssistantMessageParam{}
		// A message that only calls tools goes without content, which
		// every server accepts; an empty reply keeps its empty string.
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = oai.String(m.Content)
		}
		for _, tc := range m.ToolCalls {
			// Arguments travel as a string, as the model wrote them: a
			// call whose JSON was broken still goes back, so the model
			// sees its mistake next to the tool's error.
			args := strings.TrimSpace(tc.Arguments)
			if args == "" {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
					ID:       tc.ID,
					Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
				},
			})
		}
		return oai.ChatCompletionMessageParamUnion{OfAssistant: a}, nil
	}
	return oai.ChatCompletionMessageParamUnion{}, fmt.Errorf("role %q cannot be sent (use system, user, assistant or tool)", m.Role)
}

// toTool converts a tool definition. The parameter schema goes as JSON
// Schema whole, in its declared property order (jsonschema-go renders
// PropertyOrder), since servers render it into the prompt as they get it.
// An object schema without properties gets an empty "properties", which
// some chat templates read unconditionally. size is the length of the
// JSON, for usage estimates.
func toTool(d engine.ToolDef) (oai.ChatCompletionToolUnionParam, int, error) {
	params := shared.FunctionParameters{"type": "object", "properties": json.RawMessage("{}")}
	size := len(d.Name) + len(d.Description)
	if d.Parameters != nil {
		raw, err := json.Marshal(d.Parameters)
		if err != nil {
			return oai.ChatCompletionToolUnionParam{}, 0, fmt.Errorf("tool %s: its parameter schema cannot be encoded: %w", d.Name, err)
		}
		size += len(raw)
		// Each top-level keyword stays raw JSON so nested order survives
		// the SDK's map encoding (which sorts only the top-level keys). An
		// empty schema encodes as true and keeps the default.
		var top map[string]json.RawMessage
		if json.Unmarshal(raw, &top) == nil && len(top) > 0 {
			params = make(shared.FunctionParameters, len(top)+2)
			for k, v := range top {
				params[k] = v
			}
			typ, ok := top["type"]
			if !ok {
				typ = json.RawMessage(`"object"`)
				params["type"] = typ
			}
			if _, ok := top["properties"]; !ok && string(typ) == `"object"` {
				params["properties"] = json.RawMessage("{}")
			}
		}
	}
	fn := shared.FunctionDefinitionParam{Name: d.Name, Parameters: params}
	if d.Description != "" {
		fn.Description = oai.String(d.Description)
	}
	return oai.ChatCompletionToolUnionParam{OfFunction: &oai.ChatCompletionFunctionToolParam{Function: fn}}, size, nil
}

// setOptions maps the generation options. num_predict goes as max_tokens,
// which llama.cpp, vLLM, LM Studio and Ollama's /v1 all read (not every one
// reads max_completion_tokens), or as max_completion_tokens once the server
// asked for that name. num_ctx and keep_alive have no field: these servers
// fix the window and the model's residency when they load it.
func setOptions(p *oai.ChatCompletionNewParams, o engine.Options, maxCompletion bool) error {
	switch {
	case o.NumPredict > 0 && maxCompletion:
		p.MaxCompletionTokens = oai.Int(int64(o.NumPredict))
	case o.NumPredict > 0:
		p.MaxTokens = oai.Int(int64(o.NumPredict))
	}
	if o.Temperature != nil {
		p.Temperature = oai.Float(*o.Temperature)
	}
	if o.Seed != nil {
		p.Seed = oai.Int(int64(*o.Seed))
	}
	effort, err := reasoningEffort(o.Think)
	if err != nil {
		return err
	}
	p.ReasoningEffort = effort
	return nil
}

// reasoningEffort reads the think option. A level goes as reasoning_effort;
// true and false send nothing, since the API has no switch for thinking
// (whether a model thinks is the server's and the model's choice, e.g.
// llama-server --reasoning-budget 0). Unknown values are refused before
// anything is sent, with the same words as the Ollama engine.
func reasoningEffort(s string) (shared.ReasoningEffort, error) {
	switch s = strings.ToLower(strings.TrimSpace(s)); s {
	case "":
		return "", nil
	case "low", "medium", "high":
		return shared.ReasoningEffort(s), nil
	case "on", "off", "yes", "no":
		return "", nil
	}
	if _, err := strconv.ParseBool(s); err == nil {
		return "", nil
	}
	return "", fmt.Errorf("invalid think value %q: use true, false, low, medium or high", s)
}

// estimateTokens is about one token per four characters, as for English.
func estimateTokens(chars int) int { return (chars + 3) / 4 }
