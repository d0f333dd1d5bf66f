package config

import (
	"testing"

	"github.com/BurntSushi/toml"
)

// The scanner steps over everything TOML 1.1 can put between keys:
// strings of every kind (with what looks like keys and tables inside),
// arrays over several lines with comments, inline tables over several
// lines, arrays of inline tables, dotted and quoted keys, arrays of
// tables inside arrays of tables.
const trickyTOML = `# a comment with key = "value"
model = "m" # trailing comment
system = """
not_a_key = 1
[not.a.table]
"""
quote = 'C:\path\'
literal = '''
also = "not a key"
'''
escaped = "a \"quoted\" = sign"
list = [
  "a", # a comment
  "b",
]
"quoted.key" = 1
dotted.part = 2
when = 1979-05-27 07:32:00Z

[tool.file_read]
allowed_dirs = ["~/a", "~/b"]

[[mcp.servers]]
name = "one"
headers = {
  Authorization = "Bearer x",
  Other = "y",
}

[[mcp.servers]]
name = "two"
env = { A = "1", B = { C = "2" } }

[[fruits]]
name = "apple"
[[fruits.varieties]]
name = "red"
[[fruits.varieties]]
name = "green"
[[fruits]]
name = "pear"
[[fruits.varieties]]
name = "conference"

[inline]
servers = [{ name = "a" }, { name = "b",
  command = "c" }]
`

func TestLocateKeys(t *testing.T) {
	// The decoder reads it: it is valid TOML 1.1.
	var v map[string]any
	if _, err := toml.Decode(trickyTOML, &v); err != nil {
		t.Fatalf("not valid TOML: %v", err)
	}
	lines := locateKeys(trickyTOML)
	for path, want := range map[string]int{
		"model":                        2,
		"system":                       3,
		"quote":                        7,
		"literal":                      8,
		"escaped":                      11,
		"list":                         12,
		"quoted.key":                   16,
		"dotted.part":                  17,
		"dotted":                       17,
		"when":                         18,
		"tool":                         20,
		"tool.file_read":               20,
		"tool.file_read.allowed_dirs":  21,
		"mcp.servers[0]":               23,
		"mcp.servers[0].name":          24,
		"mcp.servers[0].headers":       25,
		"mcp.servers[0].headers.Other": 27,
		"mcp.servers[1].name":          31,
		"mcp.servers[1].env.B.C":       32,
		"fruits[0].varieties[1].name":  39,
		"fruits[1].name":               41,
		"fruits[1].varieties[0]":       42,
		"fruits[1].varieties[0].name":  43,
		"inline.servers[1]":            46,
		"inline.servers[1].command":    47,
	} {
		if got := lines[path]; got != want {
			t.Errorf("%s: line %d, want %d", path, got, want)
		}
	}
	for _, notKey := range []string{"not_a_key", "not", "not.a.table", "also", "mcp.servers[2]"} {
		if l, ok := lines[notKey]; ok {
			t.Errorf("%s is inside a string, yet found at line %d", notKey, l)
		}
	}
	// A key not written is found at its nearest table.
	if got := lines.near("tool.file_read.timeout"); got != 20 {
		t.Errorf("near: %d", got)
	}
	if got := lines.near("nothing.here"); got != 0 {
		t.Errorf("near an absent table: %d", got)
	}
}

// A document the scanner cannot follow leaves keys without lines; it
// never fails or panics.
func TestLocateKeysStopsQuietly(t *testing.T) {
	for _, doc := range []string{`a = "unterminated`, "[unclosed", "= 1", "a = [1, 2", `a = """never`, "a = {b = 1", "[[a]", "a."} {
		lines := locateKeys(doc)
		if lines == nil {
			t.Errorf("%q: nil map", doc)
		}
	}
	lines := locateKeys("a = 1\nb = @\nc = 2\n")
	if lines["a"] != 1 {
		t.Errorf("lines before the point it stopped: %v", lines)
	}
}
