package eval

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Matchers an expected value may be instead of a literal: an object with
// exactly one of these keys.
const (
	opOneOf    = "$one_of"
	opRegex    = "$regex"
	opContains = "$contains"
	opAny      = "$any"
)

// matcherOf returns the matcher an object stands for, if it is one.
func matcherOf(m map[string]any) (op string, arg any, ok bool) {
	if len(m) != 1 {
		return "", nil, false
	}
	for k, v := range m {
		switch k {
		case opOneOf, opRegex, opContains, opAny:
			return k, v, true
		}
	}
	return "", nil, false
}

// matchArgs checks that got holds every expected argument. It returns ""
// when it does, else why not, naming the first argument that differs.
func matchArgs(want map[string]any, got map[string]any) string {
	for _, k := range sortedKeys(want) {
		g, present := got[k]
		if !present {
			return fmt.Sprintf("argument %s: missing, expected %s", k, show(want[k]))
		}
		if why := matchValue(k, want[k], g); why != "" {
			return why
		}
	}
	return ""
}

// matchValue compares one value at path; "" means it matches.
func matchValue(path string, want, got any) string {
	switch w := want.(type) {
	case map[string]any:
		if op, arg, ok := matcherOf(w); ok {
			return matchWith(path, op, arg, got)
		}
		g, ok := got.(map[string]any)
		if !ok {
			return mismatch(path, want, got)
		}
		for _, k := range sortedKeys(w) {
			sub := path + "." + k
			gv, present := g[k]
			if !present {
				return fmt.Sprintf("argument %s: missing, expected %s", sub, show(w[k]))
			}
			if why := matchValue(sub, w[k], gv); why != "" {
				return why
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok {
			return mismatch(path, want, got)
		}
		if len(g) != len(w) {
			return fmt.Sprintf("argument %s: got %d items (%s), expected %d (%s)", path, len(g), show(got), len(w), show(want))
		}
		for i := range w {
			if why := matchValue(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); why != "" {
				return why
			}
		}
		return ""
	case float64:
		if g, ok := got.(float64); ok && g == w {
			return ""
		}
	case string:
		if g, ok := got.(string); ok && g == w {
			return ""
		}
	case bool:
		if g, ok := got.(bool); ok && g == w {
			return ""
		}
	case nil:
		if got == nil {
			return ""
		}
	}
	return mismatch(path, want, got)
}

// matchWith applies a matcher.
func matchWith(path, op string, arg, got any) string {
	switch op {
	case opAny:
		return ""
	case opOneOf:
		alts, _ := arg.([]any)
		for _, a := range alts {
			if matchValue(path, a, got) == "" {
				return ""
			}
		}
		shown := make([]string, len(alts))
		for i, a := range alts {
			shown[i] = show(a)
		}
		return fmt.Sprintf("argument %s: got %s, expected one of %s", path, show(got), strings.Join(shown, ", "))
	case opRegex:
		pattern, _ := arg.(string)
		s, ok := got.(string)
		if !ok {
			return fmt.Sprintf("argument %s: got %s (%s), expected a string matching /%s/", path, show(got), kindOf(got), pattern)
		}
		re, err := regexp.Compile(pattern)
		if err == nil && re.MatchString(s) {
			return ""
		}
		return fmt.Sprintf("argument %s: got %s, expected a match of /%s/", path, show(got), pattern)
	case opContains:
		needle, _ := arg.(string)
		s, ok := got.(string)
		if ok && strings.Contains(strings.ToLower(s), strings.ToLower(needle)) {
			return ""
		}
		return fmt.Sprintf("argument %s: got %s, expected it to contain %q", path, show(got), needle)
	}
	return fmt.Sprintf("argument %s: unknown matcher %s", path, op)
}

// mismatch says how two values differ, naming their kinds when those
// differ (the string "51" is not the number 51).
func mismatch(path string, want, got any) string {
	if kindOf(want) != kindOf(got) {
		return fmt.Sprintf("argument %s: got %s (%s), expected %s (%s)", path, show(got), kindOf(got), show(want), kindOf(want))
	}
	return fmt.Sprintf("argument %s: got %s, expected %s", path, show(got), show(want))
}

// showLimit bounds a value shown in a reason, which is one line.
const showLimit = 80

// show writes a value for a one-line reason: a string as it is (quoted
// only when it is empty or has spaces at its ends), anything else as
// compact JSON, cut to showLimit characters.
func show(v any) string {
	var s string
	switch x := v.(type) {
	case string:
		s = x
		if s == "" || strings.TrimSpace(s) != s {
			s = fmt.Sprintf("%q", s)
		}
	default:
		b, err := json.Marshal(v)
		if err != nil {
			s = fmt.Sprint(v)
		} else {
			s = string(b)
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > showLimit {
		// The middle goes: a path's end, an expression's end, tell
		// values apart as much as their starts.
		r := []rune(s)
		half := (showLimit - 1) / 2
		s = string(r[:half]) + "…" + string(r[len(r)-half:])
	}
	return s
}
