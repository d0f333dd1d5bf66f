package ollama

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/ollama/ollama/api"

	"github.com/jarvis-workbench/jarvis/engine"
)

// toAPIMessages converts a conversation. Tool call arguments travel as JSON
// objects on the wire; they are parsed into the client's ordered map so the
// model sees its own key order back. Images travel as the file's bytes,
// which the client encodes as base64 in the message's "images".
func toAPIMessages(msgs []engine.Message) ([]api.Message, error) {
	out := make([]api.Message, len(msgs))
	for i, m := range msgs {
		out[i] = api.Message{
			Role:       m.Role,
			Content:    m.Content,
			Thinking:   m.Thinking,
			ToolName:   m.ToolName,
			ToolCallID: m.ToolCallID,
		}
		if len(m.Images) > 0 {
			out[i].Images = make([]api.ImageData, len(m.Images))
			for j, im := range m.Images {
				out[i].Images[j] = api.ImageData(im.Data)
			}
		}
		if len(m.ToolCalls) == 0 {
			continue
		}
		out[i].ToolCalls = make([]api.ToolCall, len(m.ToolCalls))
		for j, tc := range m.ToolCalls {
			args := api.NewToolCallFunctionArguments()
			if s := strings.TrimSpace(tc.Arguments); s != "" {
				if err := args.UnmarshalJSON([]byte(s)); err != nil {
					return nil, fmt.Errorf("message %d: tool call %s (%s) has arguments that are not a JSON object: %w", i, tc.ID, tc.Name, err)
				}
			}
			out[i].ToolCalls[j] = api.ToolCall{
				ID:       tc.ID,
				Function: api.ToolCallFunction{Index: tc.Index, Name: tc.Name, Arguments: args},
			}
		}
	}
	return out, nil
}

// toAPITools converts tool definitions. The client's tool types carry a
// subset of JSON Schema (type, description, enum, items, anyOf, nested
// properties); the server decodes into the same types, so nothing outside
// that subset could reach the model's prompt anyway.
func toAPITools(defs []engine.ToolDef) []api.Tool {
	if len(defs) == 0 {
		return nil
	}
	out := make([]api.Tool, len(defs))
	for i, d := range defs {
		params := api.ToolFunctionParameters{Type: "object", Properties: api.NewToolPropertiesMap()}
		if s := d.Parameters; s != nil {
			if s.Type != "" {
				params.Type = s.Type
			}
			params.Required = s.Required
			if len(s.Defs) > 0 {
				params.Defs = s.Defs
			}
			for _, name := range propertyOrder(s) {
				params.Properties.Set(name, toProperty(s.Properties[name]))
			}
		}
		out[i] = api.Tool{
			Type:     "function",
			Function: api.ToolFunction{Name: d.Name, Description: d.Description, Parameters: params},
		}
	}
	return out
}

func toProperty(s *jsonschema.Schema) api.ToolProperty {
	var p api.ToolProperty
	if s == nil {
		return p
	}
	switch {
	case s.Type != "":
		p.Type = api.PropertyType{s.Type}
	case len(s.Types) > 0:
		p.Type = api.PropertyType(slices.Clone(s.Types))
	}
	p.Description = s.Description
	p.Enum = s.Enum
	if s.Items != nil {
		p.Items = s.Items
	}
	for _, alt := range s.AnyOf {
		p.AnyOf = append(p.AnyOf, toProperty(alt))
	}
	if len(s.Properties) > 0 {
		p.Properties = api.NewToolPropertiesMap()
		for _, name := range propertyOrder(s) {
			p.Properties.Set(name, toProperty(s.Properties[name]))
		}
	}
	return p
}

// propertyOrder lists properties in declaration order (PropertyOrder, as
// tools.Params and tools.SchemaFromJSON record it), then any the order does
// not name, sorted so the wire bytes are stable.
func propertyOrder(s *jsonschema.Schema) []string {
	names := make([]string, 0, len(s.Properties))
	for _, n := range s.PropertyOrder {
		if _, ok := s.Properties[n]; ok && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) == len(s.Properties) {
		return names
	}
	var rest []string
	for n := range s.Properties {
		if !slices.Contains(names, n) {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(names, rest...)
}

// apiOptions maps the generation options; unset ones are left to the
// server (and to the model's Modelfile) by not sending them.
func apiOptions(o engine.Options) map[string]any {
	var m map[string]any
	set := func(k string, v any) {
		if m == nil {
			m = make(map[string]any, 4)
		}
		m[k] = v
	}
	if o.NumCtx != 0 {
		set("num_ctx", o.NumCtx)
	}
	if o.NumPredict != 0 {
		set("num_predict", o.NumPredict)
	}
	if o.Temperature != nil {
		set("temperature", *o.Temperature)
	}
	if o.Seed != nil {
		set("seed", *o.Seed)
	}
	return m
}

// keepAlive is nil (server default) for 0; a negative duration keeps the
// model loaded indefinitely, as Ollama's -1 does.
func keepAlive(o engine.Options) *api.Duration {
	if o.KeepAlive == 0 {
		return nil
	}
	return &api.Duration{Duration: o.KeepAlive}
}

// thinkValue parses the think option: "" leaves the server's default (a
// thinking model thinks), a boolean switches thinking on or off, and a level
// asks models that have levels (gpt-oss) for that much thinking.
func thinkValue(s string) (*api.ThinkValue, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "":
		return nil, nil
	case "low", "medium", "high":
		return &api.ThinkValue{Value: s}, nil
	case "on", "yes":
		return &api.ThinkValue{Value: true}, nil
	case "off", "no":
		return &api.ThinkValue{Value: false}, nil
	}
	if b, err := strconv.ParseBool(s); err == nil {
		return &api.ThinkValue{Value: b}, nil
	}
	return nil, fmt.Errorf("invalid think value %q: use true, false, low, medium or high", s)
}

// argumentsJSON renders arguments as the JSON object text the model wrote,
// keys in its order. HTML escaping is off so that "a < b" stays readable in
// tool lines and logs (the text is JSON either way).
func argumentsJSON(args api.ToolCallFunctionArguments) string {
	if args.Len() == 0 {
		return "{}"
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	b.WriteByte('{')
	for k, v := range args.All() {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		if enc.Encode(k) != nil {
			break
		}
		b.Truncate(b.Len() - 1) // Encode ends every value with a newline
		b.WriteByte(':')
		if enc.Encode(v) != nil {
			break
		}
		b.Truncate(b.Len() - 1)
	}
	b.WriteByte('}')
	if !json.Valid(b.Bytes()) {
		// Only values json.Unmarshal produced get here, which always
		// encode; fall back to the client's own rendering regardless.
		out, _ := json.Marshal(args)
		return string(out)
	}
	return b.String()
}
