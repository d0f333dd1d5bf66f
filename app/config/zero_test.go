package config

import (
	"strings"
	"testing"
)

// A 0 where 0 means "not set" is a problem at its line, and config show
// attributes it to the file, never to "default".
func TestZeroThatMeansUnsetIsAProblemAtItsLine(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	body := "[options]\nnum_ctx = 0\ntemperature = 0\n[code]\nmemory_mb = 0\n[memory]\nchunk_size = 0\nchunk_overlap = 0\n" +
		"[[mcp.servers]]\nname = \"x\"\ncommand = \"true\"\ntimeout = 0\n"
	p := writeConfig(t, body)
	c, problems := Read(Flags{ConfigPath: p})
	want := map[string]int{"options.num_ctx": 2, "code.memory_mb": 5, "memory.chunk_size": 7, "mcp.servers[0].timeout": 12}
	if len(problems) != len(want) {
		t.Fatalf("problems: %v", problems)
	}
	for _, pr := range problems {
		line, ok := want[pr.Key]
		if !ok || pr.Line != line || !strings.Contains(pr.Msg, "is 0, which here means not set") {
			t.Errorf("problem %+v", pr)
		}
	}
	// temperature 0 and chunk_overlap 0 are values: no problem, and
	// shown as the file's.
	for _, s := range c.Settings() {
		switch s.Key {
		case "options.num_ctx", "options.temperature", "code.memory_mb", "memory.chunk_size", "memory.chunk_overlap", "mcp.servers.x.timeout":
			if s.Value != "0" || !strings.HasPrefix(s.Source, "config "+p+":") {
				t.Errorf("%s shown as %q from %q", s.Key, s.Value, s.Source)
			}
		}
	}
}
