package tools

import (
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// NoToolsText is what BuildToolDescriptions returns for an empty list.
const NoToolsText = "No tools available."

// BuildToolDescriptions renders the Markdown tool section that text-protocol
// agents put in their system prompt and that the TUI's Tools pane shows: it
// is exactly what a model is told about its tools. The format is the
// reference's, line for line:
//
//	### NAME
//	DESCRIPTION
//	Category: CATEGORY            (includeCategory and a category)
//	Cost estimate: $0.0012        (includeCost and a non-zero estimate)
//	Latency estimate: 1.5s        (includeCost and a non-zero estimate)
//	Parameters:                   (when the schema has properties)
//	  - PNAME (TYPE, required): PDESC
//
// Blocks are separated by one blank line.
func BuildToolDescriptions(list []Tool, includeCategory, includeCost bool) string {
	specs := make([]Spec, len(list))
	for i, t := range list {
		specs[i] = t.Spec()
	}
	return DescribeSpecs(specs, includeCategory, includeCost)
}

// DescribeSpecs is BuildToolDescriptions for specs already in hand.
func DescribeSpecs(specs []Spec, includeCategory, includeCost bool) string {
	if len(specs) == 0 {
		return NoToolsText
	}
	var b strings.Builder
	size := 0
	for i := range specs {
		size += 64 + len(specs[i].Name) + len(specs[i].Description) + 96*propertyCount(specs[i].Parameters)
	}
	b.Grow(size)
	for i := range specs {
		if i > 0 {
			b.WriteString("\n\n")
		}
		describe(&b, &specs[i], includeCategory, includeCost)
	}
	return b.String()
}

func propertyCount(s *jsonschema.Schema) int {
	if s == nil {
		return 0
	}
	return len(s.Properties)
}

func describe(b *strings.Builder, s *Spec, includeCategory, includeCost bool) {
	var num [32]byte
	b.WriteString("### ")
	b.WriteString(s.Name)
	b.WriteByte('\n')
	b.WriteString(s.Description)
	if includeCategory && s.Category != "" {
		b.WriteString("\nCategory: ")
		b.WriteString(s.Category)
	}
	if includeCost && s.CostEstimate != 0 {
		b.WriteString("\nCost estimate: $")
		b.Write(strconv.AppendFloat(num[:0], s.CostEstimate, 'f', 4, 64))
	}
	if includeCost && s.LatencyEstimate != 0 {
		b.WriteString("\nLatency estimate: ")
		b.Write(strconv.AppendFloat(num[:0], s.LatencyEstimate, 'f', 1, 64))
		b.WriteByte('s')
	}
	params := s.Parameters
	if params == nil || len(params.Properties) == 0 {
		return
	}
	b.WriteString("\nParameters:")
	for _, name := range orderedProperties(params) {
		p := params.Properties[name]
		b.WriteString("\n  - ")
		b.WriteString(name)
		b.WriteString(" (")
		b.WriteString(typeName(p))
		if isRequired(params, name) {
			b.WriteString(", required")
		}
		b.WriteByte(')')
		if p != nil && p.Description != "" {
			b.WriteString(": ")
			b.WriteString(p.Description)
		}
		if p != nil && len(p.Enum) > 0 {
			// A model that reads only this text (react) learns the
			// allowed values here or nowhere.
			if p.Description != "" {
				b.WriteString(" (one of: ")
			} else {
				b.WriteString(": one of: ")
			}
			writeEnum(b, p.Enum)
			if p.Description != "" {
				b.WriteByte(')')
			}
		}
	}
}

// writeEnum writes allowed values as a person reads them: strings as they
// are, anything else as JSON.
func writeEnum(b *strings.Builder, enum []any) {
	for i, v := range enum {
		if i > 0 {
			b.WriteString(", ")
		}
		if s, ok := v.(string); ok {
			b.WriteString(s)
		} else {
			b.WriteString(formatValue(v))
		}
	}
}

func isRequired(s *jsonschema.Schema, name string) bool {
	for _, r := range s.Required {
		if r == name {
			return true
		}
	}
	return false
}

// OpenAITool is a tool in the OpenAI function-calling format.
type OpenAITool struct {
	Type     string         `json:"type"`
	Function OpenAIFunction `json:"function"`
}

// OpenAIFunction is the function part of OpenAITool.
type OpenAIFunction struct {
	Name        string             `json:"name"`
	Description string             `json:"description"`
	Parameters  *jsonschema.Schema `json:"parameters"`
}

// emptyObject is the parameters of a tool that takes none: providers reject
// a null schema.
var emptyObject = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}

// ToOpenAI converts a spec to the OpenAI function format (the spec's
// to_openai_function).
func ToOpenAI(s Spec) OpenAITool {
	params := s.Parameters
	if params == nil {
		params = emptyObject
	}
	return OpenAITool{Type: "function", Function: OpenAIFunction{Name: s.Name, Description: s.Description, Parameters: params}}
}

// OpenAITools converts every spec.
func OpenAITools(specs []Spec) []OpenAITool {
	out := make([]OpenAITool, len(specs))
	for i, s := range specs {
		out[i] = ToOpenAI(s)
	}
	return out
}
