package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Problem is one thing wrong with the configuration, located for the
// person who fixes it: the file and line, or the variable or flag the
// value came from, the key, what is wrong and what to do.
type Problem struct {
	// Path and Line locate a value from the config file (Line 0 when it
	// cannot be pointed at, Path "" when the value came from elsewhere).
	Path string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Source is where a value that is not from the file came from:
	// "env JARVIS_THEME", "flag --theme".
	Source string `json:"source,omitempty"`
	// Key is the setting, as its path in the file: "theme",
	// "tool.calculator.timeout", "mcp.servers[1].command".
	Key string `json:"key,omitempty"`
	// Msg says what is wrong; Fix, when the message does not already say
	// it, what to do.
	Msg string `json:"problem"`
	Fix string `json:"fix,omitempty"`
}

// Where is the problem's location: "config FILE:LINE", "config FILE",
// or the variable or flag.
func (p Problem) Where() string {
	switch {
	case p.Path == "":
		return p.Source
	case p.Line > 0:
		return "config " + p.Path + ":" + strconv.Itoa(p.Line)
	}
	return "config " + p.Path
}

// Detail is the problem without its location and fix.
func (p Problem) Detail() string {
	if p.Key == "" {
		return p.Msg
	}
	return fmt.Sprintf("key %q: %s", p.Key, p.Msg)
}

func (p Problem) Error() string {
	s := p.Detail()
	if w := p.Where(); w != "" {
		s = w + ": " + s
	}
	if p.Fix != "" {
		s += "; " + p.Fix
	}
	return s
}

// Problems is everything wrong with a configuration, sorted by line: what
// Load returns when there is anything to fix, so that one run shows it
// all instead of one mistake per attempt.
type Problems []Problem

func (ps Problems) Error() string {
	if len(ps) == 1 {
		return ps[0].Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the configuration has %d problems; fix them and run again:", len(ps))
	for _, p := range ps {
		b.WriteString("\n  ")
		b.WriteString(p.Error())
	}
	return b.String()
}

// sortProblems orders problems as a person reads the file: by line, then
// those the file cannot point at, then those from the environment and
// flags.
func sortProblems(ps Problems) {
	rank := func(p Problem) int {
		switch {
		case p.Path != "" && p.Line > 0:
			return 0
		case p.Path != "":
			return 1
		}
		return 2
	}
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra < rb
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Key < b.Key
	})
}

// report collects the problems of one configuration as its checks find
// them.
type report struct {
	c        *Config
	problems Problems
}

// at reports a problem with the value at path in the file (its line, or
// the line of the nearest enclosing table when the key is not written
// there).
func (r *report) at(path, msg, fix string) {
	r.problems = append(r.problems, Problem{Path: r.c.path, Line: r.c.lines.near(path), Key: path, Msg: msg, Fix: fix})
}

// value reports a problem with a setting that the environment or a flag
// may have set: it is located where the value came from.
func (r *report) value(key, msg, fix string) {
	src := r.c.Source(key)
	if strings.HasPrefix(src, "config ") || src == "default" {
		r.at(key, msg, fix)
		return
	}
	r.problems = append(r.problems, Problem{Source: src, Key: key, Msg: msg, Fix: fix})
}

// section returns the report function a package's own check calls: its
// keys are relative to the section (prefix "web" and key "http.timeout"
// make "web.http.timeout").
func (r *report) section(prefix string) func(key, msg, fix string) {
	return func(key, msg, fix string) {
		r.at(joinPath(prefix, key), msg, fix)
	}
}

func joinPath(base, key string) string {
	switch {
	case base == "":
		return key
	case key == "":
		return base
	case strings.HasPrefix(key, "["):
		return base + key
	}
	return base + "." + key
}
