package tools_test

import (
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

func utf8Valid(s string) bool { return utf8.ValidString(s) }

// falseSchema is JSON Schema's `false`, as additionalProperties: false.
func falseSchema() *jsonschema.Schema { return &jsonschema.Schema{Not: &jsonschema.Schema{}} }
