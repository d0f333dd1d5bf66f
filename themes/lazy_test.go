package themes

import (
	"testing"

	"github.com/jarvis-workbench/jarvis/internal/inittrace"
)

// checkInit fails t for each of pkgs that allocates more than limit bytes
// at init; why names the likely cause.
func checkInit(t *testing.T, limit int, why string, pkgs ...string) {
	t.Helper()
	traced, err := inittrace.Packages()
	if err != nil {
		t.Fatalf("re-running the test binary with GODEBUG=inittrace=1: %v", err)
	}
	for _, pkg := range pkgs {
		p, ok := traced[pkg]
		if !ok {
			t.Errorf("no init line for %s: is it still linked?", pkg)
			continue
		}
		if p.Bytes > limit {
			t.Errorf("%s allocates %d bytes at init, over %d: %s", pkg, p.Bytes, limit, why)
		}
	}
}

// The code highlighter's lexers and styles load when the first code block
// is highlighted, not at package init (go.mod replaces chroma with the
// patched copy in third_party/chroma). Loaded eagerly, the two packages
// allocate about 4 MB at init; patched, under 20 KB.
func TestHighlighterDoesNotLoadAtInit(t *testing.T) {
	checkInit(t, 64<<10, "its registry should load on first use (is the replace of chroma in go.mod gone?)",
		"github.com/alecthomas/chroma/v2/lexers", "github.com/alecthomas/chroma/v2/styles")
}

// The markdown parser and the HTML sanitiser glamour uses, and glamour's
// own link shortener, compile their regular expressions on first use,
// not at package init (go.mod replaces goldmark, bluemonday, gorilla/css
// and glamour with the patched copies in third_party). Upstream, these
// packages allocate 110–500 KB each at init, 1.4 MB together, enough to
// set off a garbage collection before main; patched, under 20 KB each.
func TestMarkdownAndSanitiserDoNotCompileAtInit(t *testing.T) {
	checkInit(t, 64<<10, "its regular expressions should compile on first use (is its replace in go.mod gone?)",
		"github.com/microcosm-cc/bluemonday", "github.com/microcosm-cc/bluemonday/css",
		"github.com/gorilla/css/scanner", "github.com/yuin/goldmark/parser", "github.com/yuin/goldmark/extension",
		"github.com/charmbracelet/glamour/internal/autolink")
}
