package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Param declares one parameter for Params.
type Param struct {
	Name     string
	Schema   *jsonschema.Schema
	Required bool
}

// Params builds an object schema whose properties keep the given order, the
// order in which BuildToolDescriptions lists them.
func Params(params ...Param) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "object", Properties: make(map[string]*jsonschema.Schema, len(params))}
	for _, p := range params {
		s.Properties[p.Name] = p.Schema
		s.PropertyOrder = append(s.PropertyOrder, p.Name)
		if p.Required {
			s.Required = append(s.Required, p.Name)
		}
	}
	return s
}

// StringParam declares a string parameter.
func StringParam(name, description string, required bool) Param {
	return Param{Name: name, Required: required, Schema: &jsonschema.Schema{Type: "string", Description: description}}
}

// IntegerParam declares an integer parameter.
func IntegerParam(name, description string, required bool) Param {
	return Param{Name: name, Required: required, Schema: &jsonschema.Schema{Type: "integer", Description: description}}
}

// NumberParam declares a number parameter.
func NumberParam(name, description string, required bool) Param {
	return Param{Name: name, Required: required, Schema: &jsonschema.Schema{Type: "number", Description: description}}
}

// BoolParam declares a boolean parameter.
func BoolParam(name, description string, required bool) Param {
	return Param{Name: name, Required: required, Schema: &jsonschema.Schema{Type: "boolean", Description: description}}
}

// StringListParam declares a parameter that is a list of strings.
func StringListParam(name, description string, required bool) Param {
	return Param{Name: name, Required: required, Schema: &jsonschema.Schema{Type: "array", Description: description,
		Items: &jsonschema.Schema{Type: "string"}}}
}

// EnumParam declares a string parameter limited to values.
func EnumParam(name, description string, required bool, values ...string) Param {
	enum := make([]any, len(values))
	for i, v := range values {
		enum[i] = v
	}
	return Param{Name: name, Required: required, Schema: &jsonschema.Schema{Type: "string", Description: description, Enum: enum}}
}

// SchemaFromJSON parses a JSON Schema (from an MCP server, a config file...)
// and records the order of its properties as written, which a plain
// unmarshal into a map would lose.
func SchemaFromJSON(data []byte) (*jsonschema.Schema, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	recordOrder(&s, data)
	return &s, nil
}

// recordOrder sets PropertyOrder on s (and nested object schemas) from the
// key order of the raw JSON.
func recordOrder(s *jsonschema.Schema, raw []byte) {
	if s == nil || len(s.Properties) == 0 {
		return
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return
	}
	props, ok := top["properties"]
	if !ok {
		return
	}
	keys, values := objectKeys(props)
	s.PropertyOrder = keys
	for i, k := range keys {
		recordOrder(s.Properties[k], values[i])
	}
}

// objectKeys returns the keys of a JSON object in document order with their
// raw values.
func objectKeys(raw []byte) ([]string, []json.RawMessage) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil
	}
	var keys []string
	var values []json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys, values
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return keys, values
		}
		keys = append(keys, k)
		values = append(values, v)
	}
	return keys, values
}

// orderedProperties returns the property names of an object schema in
// declaration order: PropertyOrder first, then any others sorted, so the
// output is stable even for schemas built without an order.
func orderedProperties(s *jsonschema.Schema) []string {
	if s == nil || len(s.Properties) == 0 {
		return nil
	}
	if orderCoversAll(s) {
		return s.PropertyOrder
	}
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

// orderCoversAll reports whether PropertyOrder names every property exactly
// once: the usual case, served without allocating.
func orderCoversAll(s *jsonschema.Schema) bool {
	if len(s.PropertyOrder) != len(s.Properties) {
		return false
	}
	for i, n := range s.PropertyOrder {
		if _, ok := s.Properties[n]; !ok || slices.Contains(s.PropertyOrder[:i], n) {
			return false
		}
	}
	return true
}

// typeName is the type shown in descriptions: "any" when the schema has none.
func typeName(s *jsonschema.Schema) string {
	switch {
	case s == nil:
		return "any"
	case s.Type != "":
		return s.Type
	case len(s.Types) > 0:
		return strings.Join(s.Types, "|")
	}
	return "any"
}

// validator checks arguments against a tool's schema. The common cases
// (missing required, wrong type, value outside an enum, unknown parameter)
// get messages that name the parameter, which is what a model needs to fix
// its call; anything deeper goes to the full JSON Schema validator.
type validator struct {
	schema   *jsonschema.Schema
	required []string
	// full is the resolved schema, set only when the schema uses keywords
	// the quick checks do not cover.
	full *jsonschema.Resolved
}

// quickKeywords are the keywords the quick checks fully cover; a schema
// using only these needs no second pass.
var quickKeywords = map[string]bool{
	"type": true, "description": true, "enum": true, "default": true,
	"title": true, "properties": true, "required": true, "additionalProperties": true,
	"examples": true, "$schema": true,
}

func newValidator(s *jsonschema.Schema) (*validator, error) {
	v := &validator{schema: s}
	if s == nil {
		return v, nil
	}
	if err := checkTypes(s); err != nil {
		// A schema no call can satisfy would fail every call: the tool
		// is refused instead (an MCP server's is then left out).
		return nil, fmt.Errorf("invalid parameter schema: %w", err)
	}
	v.required = s.Required
	if needsFullValidation(s) {
		resolved, err := s.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("invalid parameter schema: %w", err)
		}
		v.full = resolved
	}
	return v, nil
}

// jsonTypes are the types JSON Schema knows.
var jsonTypes = []string{"object", "array", "string", "number", "integer", "boolean", "null"}

// checkTypes checks the types the quick checks read: a tool's arguments
// are an object, so a schema of another type accepts no call, and a
// property's type must be one JSON Schema knows ("strnig" accepts no
// value). The full validator checks deeper schemas when it resolves them.
func checkTypes(s *jsonschema.Schema) error {
	top := s.Types
	if s.Type != "" {
		top = []string{s.Type}
	}
	if len(top) > 0 && !slices.Contains(top, "object") {
		return fmt.Errorf("the arguments are a JSON object, but the schema's type is %s", strings.Join(top, " or "))
	}
	for _, name := range orderedProperties(s) {
		p := s.Properties[name]
		if p == nil {
			continue
		}
		types := p.Types
		if p.Type != "" {
			types = []string{p.Type}
		}
		for _, t := range types {
			if !slices.Contains(jsonTypes, t) {
				return fmt.Errorf("parameter '%s' has type %q, which is not a JSON Schema type (%s)", name, t, strings.Join(jsonTypes, ", "))
			}
		}
	}
	return nil
}

// needsFullValidation reports whether s uses keywords beyond quickKeywords at
// the top level, or anything beyond type/description/enum/default in a
// property.
func needsFullValidation(s *jsonschema.Schema) bool {
	raw, err := json.Marshal(s)
	if err != nil {
		return true
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return true
	}
	for k, val := range top {
		if !quickKeywords[k] {
			return true
		}
		if k == "additionalProperties" && string(val) != "false" && string(val) != "true" {
			return true
		}
	}
	for _, p := range s.Properties {
		if p == nil {
			continue
		}
		praw, err := json.Marshal(p)
		if err != nil {
			return true
		}
		var pm map[string]json.RawMessage
		if json.Unmarshal(praw, &pm) != nil {
			return true
		}
		for k := range pm {
			switch k {
			case "type", "description", "enum", "default", "title", "examples":
			default:
				return true
			}
		}
	}
	return false
}

// validate returns nil or an error whose text completes
// "Invalid arguments: ...".
func (v *validator) validate(args map[string]any) error {
	if v.schema == nil {
		return nil
	}
	for _, name := range v.required {
		if _, ok := args[name]; !ok {
			return fmt.Errorf("missing required parameter '%s'", name)
		}
	}
	for name, val := range args {
		p, known := v.schema.Properties[name]
		if !known {
			if v.schema.AdditionalProperties != nil && isFalseSchema(v.schema.AdditionalProperties) {
				return fmt.Errorf("unknown parameter '%s' (accepted: %s)", name, strings.Join(orderedProperties(v.schema), ", "))
			}
			continue
		}
		if p == nil {
			continue
		}
		if err := checkType(name, p, val); err != nil {
			return err
		}
		if len(p.Enum) > 0 && !inEnum(p.Enum, val) {
			return fmt.Errorf("parameter '%s' must be one of %s; got %s", name, formatEnum(p.Enum), formatValue(val))
		}
	}
	if v.full != nil {
		if err := v.full.Validate(map[string]any(args)); err != nil {
			return err
		}
	}
	return nil
}

func isFalseSchema(s *jsonschema.Schema) bool {
	return s.Not != nil && s.Not.Type == "" && len(s.Not.Types) == 0 && s.Not.Not == nil && len(s.Not.Properties) == 0
}

func checkType(name string, p *jsonschema.Schema, val any) error {
	types := p.Types
	if p.Type != "" {
		types = []string{p.Type}
	}
	if len(types) == 0 {
		return nil
	}
	got := jsonType(val)
	for _, t := range types {
		switch {
		case t == got:
			return nil
		case t == "number" && got == "integer":
			return nil
		}
	}
	return fmt.Errorf("parameter '%s' must be %s, got %s", name, article(strings.Join(types, " or ")), got)
}

func article(t string) string {
	switch t[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an " + t
	}
	return "a " + t
}

func inEnum(enum []any, val any) bool {
	for _, e := range enum {
		if e == val {
			return true
		}
	}
	return false
}

func formatEnum(enum []any) string {
	parts := make([]string, len(enum))
	for i, e := range enum {
		parts[i] = formatValue(e)
	}
	return strings.Join(parts, ", ")
}

func formatValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
