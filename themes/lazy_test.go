package themes

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// The code highlighter's lexers and styles load when the first code block
// is highlighted, not at package init, which every command pays before
// main runs (go.mod replaces chroma with the patched copy in
// third_party/chroma). Loaded eagerly, the two packages allocate about
// 4 MB at init; patched, under 300 KB.
func TestHighlighterDoesNotLoadAtInit(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("re-running the test binary: %v\n%s", err, out)
	}
	for _, pkg := range []string{"lexers", "styles"} {
		m := regexp.MustCompile(`init github.com/alecthomas/chroma/v2/` + pkg + ` @\S+ ms, \S+ ms clock, (\d+) bytes`).FindSubmatch(out)
		if m == nil {
			t.Fatalf("no init line for chroma's %s package in:\n%s", pkg, out)
		}
		if n, _ := strconv.Atoi(string(m[1])); n > 300<<10 {
			t.Errorf("chroma's %s package allocates %d bytes at init; its registry should load on first use (is the replace of chroma in go.mod gone?)", pkg, n)
		}
	}
}
