package mcp

import (
	"regexp"
	"strings"
	"testing"
)

var validToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestToolName(t *testing.T) {
	cases := []struct{ server, tool, want string }{
		{"test", "echo", "test__echo"},
		{"gh", "create-issue", "gh__create-issue"},
		{"fs", "read.file", "fs__read_file"},
		{"fs", "ünïcode tool/x", "fs___n_code_tool_x"},
		{"fs", "", "fs__tool"},
	}
	for _, c := range cases {
		if got := ToolName(c.server, c.tool); got != c.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", c.server, c.tool, got, c.want)
		}
	}
}

func TestToolNameLong(t *testing.T) {
	long1 := strings.Repeat("x", 80) + "_one"
	long2 := strings.Repeat("x", 80) + "_two"
	a, b := ToolName("server", long1), ToolName("server", long2)
	if len(a) != MaxToolNameLen || len(b) != MaxToolNameLen || !validToolName.MatchString(a) {
		t.Fatalf("lengths %d %d: %q", len(a), len(b), a)
	}
	if a == b {
		t.Fatalf("two long names that share a prefix collide: %q", a)
	}
	if !strings.HasPrefix(a, "server__xxxx") || ToolName("server", long1) != a {
		t.Errorf("not stable or lost the prefix: %q", a)
	}
}

func TestNameToolsCollisions(t *testing.T) {
	// "a.b" and "a b" both sanitise to "a_b", which a tool also has exactly.
	for _, order := range [][]string{{"a.b", "a_b", "a b"}, {"a b", "a.b", "a_b"}} {
		names := nameTools("s", order)
		byOriginal := map[string]string{}
		seen := map[string]bool{}
		for i, n := range names {
			if seen[n] || !validToolName.MatchString(n) {
				t.Fatalf("names %v: duplicate or invalid %q", names, n)
			}
			seen[n] = true
			byOriginal[order[i]] = n
		}
		if byOriginal["a_b"] != "s__a_b" {
			t.Errorf("the exact name did not keep its name: %v", byOriginal)
		}
		if !strings.HasPrefix(byOriginal["a.b"], "s__a_b_") || !strings.HasPrefix(byOriginal["a b"], "s__a_b_") {
			t.Errorf("colliding names: %v", byOriginal)
		}
	}
	// The names do not depend on the order the server lists the tools in.
	x, y := nameTools("s", []string{"a.b", "a b"}), nameTools("s", []string{"a b", "a.b"})
	if x[0] != y[1] || x[1] != y[0] {
		t.Errorf("order-dependent names: %v vs %v", x, y)
	}
}
