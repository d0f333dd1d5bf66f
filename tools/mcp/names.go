package mcp

import (
	"fmt"
	"hash/fnv"
	"strings"
)

// MaxToolNameLen is the longest function name model APIs accept.
const MaxToolNameLen = 64

// Separator joins server and tool in a jarvis tool name.
const Separator = "__"

// ToolName returns the jarvis name of tool on server: SERVER__TOOL with every
// character outside [A-Za-z0-9_-] replaced by '_'. A name longer than
// MaxToolNameLen is cut and ends with a short hash of the original, so two
// long names that share a prefix stay distinct.
func ToolName(server, tool string) string {
	name := server + Separator + sanitize(tool)
	if len(name) <= MaxToolNameLen {
		return name
	}
	return withHash(name, server, tool)
}

// sanitize maps a tool name into the characters models accept.
func sanitize(s string) string {
	if s == "" {
		return "tool"
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// withHash cuts name so that "_" and a 6-digit hash of the original fit in
// MaxToolNameLen.
func withHash(name, server, tool string) string {
	h := fnv.New32a()
	h.Write([]byte(server + "\x00" + tool))
	suffix := fmt.Sprintf("_%06x", h.Sum32()&0xffffff)
	keep := MaxToolNameLen - len(suffix)
	if keep > len(name) {
		keep = len(name)
	}
	return name[:keep] + suffix
}

// nameTools assigns jarvis names to one server's tools (originals, in the
// server's order) and returns them in the same order. Two originals that
// sanitise to the same name (say "a.b" and "a_b") cannot share it: the one
// already valid keeps the plain name and the others get a hash suffix, so
// the result does not depend on the order the server lists them in.
func nameTools(server string, originals []string) []string {
	names := make([]string, len(originals))
	owners := make(map[string][]int, len(originals))
	for i, o := range originals {
		names[i] = ToolName(server, o)
		owners[names[i]] = append(owners[names[i]], i)
	}
	for name, idx := range owners {
		if len(idx) < 2 {
			continue
		}
		for _, i := range idx {
			if sanitize(originals[i]) == originals[i] && server+Separator+originals[i] == name {
				continue // the exact name keeps it
			}
			names[i] = withHash(name, server, originals[i])
		}
	}
	return names
}
