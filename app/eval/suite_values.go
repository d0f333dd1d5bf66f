package eval

// The checks of expected values and the small helpers the suite parser
// shares: naming values and their kinds in messages, suggesting the name
// a typo meant.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// checkValue validates the matcher objects inside an expected value.
func (p *parser) checkValue(field string, v any) {
	switch x := v.(type) {
	case map[string]any:
		if op, arg, ok := matcherOf(x); ok {
			switch op {
			case opOneOf:
				list, isList := arg.([]any)
				if !isList || len(list) == 0 {
					p.fail(field, "%s must be a list of the values accepted, not %s", op, describe(arg))
					return
				}
				for i, e := range list {
					p.checkValue(fmt.Sprintf("%s.%s[%d]", field, op, i), e)
				}
			case opRegex:
				s, isStr := arg.(string)
				if !isStr {
					p.fail(field, "%s must be a regular expression as a string, not %s", op, describe(arg))
					return
				}
				if _, err := regexp.Compile(s); err != nil {
					p.fail(field, "%s: %v", op, err)
				}
			case opContains:
				if s, isStr := arg.(string); !isStr || s == "" {
					p.fail(field, "%s must be a non-empty string, not %s", op, describe(arg))
				}
			case opAny:
				if b, isBool := arg.(bool); !isBool || !b {
					p.fail(field, "%s must be true", op)
				}
			}
			return
		}
		for _, k := range sortedKeys(x) {
			if strings.HasPrefix(k, "$") {
				p.fail(join(field, k), "unknown matcher; the matchers are %s, %s, %s and %s, each alone in its object", opOneOf, opRegex, opContains, opAny)
				return
			}
			p.checkValue(join(field, k), x[k])
		}
	case []any:
		for i, e := range x {
			p.checkValue(fmt.Sprintf("%s[%d]", field, i), e)
		}
	}
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

func sortedKeys(v any) []string {
	m, _ := v.(map[string]any)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// kindOf names a decoded value's JSON type.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// describe shows a small value and its kind, for messages.
func describe(v any) string {
	switch v.(type) {
	case map[string]any, []any, nil:
		return kindOf(v)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
