package themes

import (
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
)

// withProfile fixes lipgloss's colour profile for one test.
func withProfile(t *testing.T, p termenv.Profile) {
	old := lipgloss.ColorProfile()
	lipgloss.SetColorProfile(p)
	t.Cleanup(func() { lipgloss.SetColorProfile(old) })
}

func render(t *testing.T, theme string, width int, md string) string {
	t.Helper()
	th, err := Get(theme)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewMarkdownRenderer(th, width)
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Render(md)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

const goBlock = "```go\nfunc main() { fmt.Println(\"hi\") }\n```\n"

// Switching themes must switch the code colours too: glamour's own chroma
// registration would keep the first theme's for the whole process.
func TestCodeBlocksFollowTheTheme(t *testing.T) {
	withProfile(t, termenv.TrueColor)
	keyword := map[string]string{
		Dark:              "\x1b[38;2;0;170;255mfunc",  // #00AAFF
		Light:             "\x1b[38;2;39;158;252mfunc", // #279EFC
		HighContrastDark:  "\x1b[1m\x1b[38;2;0;255;255mfunc",
		HighContrastLight: "\x1b[1m\x1b[38;2;0;0;192mfunc",
	}
	for _, name := range []string{Dark, Light, HighContrastDark, HighContrastLight, Dark} {
		out := render(t, name, 60, goBlock)
		if !strings.Contains(out, keyword[name]) {
			t.Errorf("%s: keyword not highlighted with the theme's colour %q:\n%q", name, keyword[name], out)
		}
	}
}

func TestMarkdownLayout(t *testing.T) {
	withProfile(t, termenv.TrueColor)
	md := "A paragraph long enough to need wrapping at thirty columns, with `code` and **bold**.\n\n- one\n- two\n\n" + goBlock
	for _, name := range concrete {
		out := render(t, name, 30, md)
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		if plain := ansi.Strip(lines[0]); !strings.HasPrefix(plain, "A paragraph") {
			t.Errorf("%s: first line %q: the document has a margin or a blank line before it", name, plain)
		}
		for _, l := range lines {
			if w := ansi.StringWidth(l); w > 30 {
				t.Errorf("%s: line %q is %d cells wide, wrap is 30", name, ansi.Strip(l), w)
			}
		}
		if !strings.Contains(ansi.Strip(out), "Println") {
			t.Errorf("%s: code block lost", name)
		}
	}
}

// NO_COLOR (the Ascii profile) must give text without colour codes, code
// blocks included; a 16-colour terminal must get 16-colour codes only.
func TestMarkdownFollowsTheColourProfile(t *testing.T) {
	md := "# Title\n\nSome `code`.\n\n" + goBlock
	withProfile(t, termenv.Ascii)
	for _, name := range concrete {
		out := render(t, name, 60, md)
		if strings.Contains(out, "\x1b[38") || strings.Contains(out, "\x1b[48") || strings.Contains(out, ";38;") {
			t.Errorf("%s: colour codes without colour:\n%q", name, out)
		}
		if !strings.Contains(out, "fmt.Println") {
			t.Errorf("%s: code lost", name)
		}
	}
	lipgloss.SetColorProfile(termenv.ANSI)
	for _, name := range concrete {
		out := render(t, name, 60, md)
		if strings.Contains(out, "38;5;") || strings.Contains(out, "38;2;") || strings.Contains(out, "48;5;") {
			t.Errorf("%s: 256 or true colour codes for a 16-colour terminal:\n%q", name, out)
		}
	}
}

func TestStylesUseThePalette(t *testing.T) {
	th, _ := Get(Light)
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.TrueColor)
	s := th.StylesFor(r)
	if got := s.Error.Render("x"); !strings.Contains(got, "38;2;215;0;0") { // #D70000
		t.Errorf("error style renders %q", got)
	}
	if got := s.Selection.Render("x"); !strings.Contains(got, "48;2;175;215;255") { // #AFD7FF
		t.Errorf("selection style renders %q", got)
	}
}

func TestQuantizeConvertsEveryHexColourOnce(t *testing.T) {
	th, err := Get(Dark)
	if err != nil {
		t.Fatal(err)
	}
	before := *th.Markdown.Document.Color
	q := quantize(th.Markdown, termenv.ANSI256)
	got := *q.Document.Color
	if strings.HasPrefix(got, "#") || got == "" {
		t.Fatalf("document colour not converted: %q", got)
	}
	if *th.Markdown.Document.Color != before {
		t.Fatal("quantize changed the theme's own style config")
	}
	if q.H1.Color != nil && strings.HasPrefix(*q.H1.Color, "#") {
		t.Fatalf("heading colour not converted: %q", *q.H1.Color)
	}
}

// The patched goldmark, bluemonday and glamour compile their expressions
// on first use (third_party/README.md): what those expressions recognise must
// still render as it did, from the first reply on.
func TestMarkdownThatNeedsTheLazyExpressions(t *testing.T) {
	withProfile(t, termenv.Ascii)
	md := "| name | size |\n|:-----|-----:|\n| a.go | 12 |\n| https://github.com/o/r/issues/7 | 1 |\n\n" + // table delimiters, a GitHub link shortened
		"- [x] done\n- [ ] open\n\n" + // task list
		"see www.example.com and <b>bold</b> here\n\n" + // linkify, raw HTML
		"<div>\nblock html\n</div>\n" // HTML block
	out := ansi.Strip(render(t, Dark, 60, md))
	for _, want := range []string{"name", "a.go", "12", "o/r#7", "[✓] done", "[ ] open", "www.example.com", "bold"} {
		if !strings.Contains(out, want) {
			t.Errorf("rendered markdown lacks %q:\n%s", want, out)
		}
	}
	for _, gone := range []string{"<b>", "</b>", "<div>", ":-----", "[x]"} {
		if strings.Contains(out, gone) {
			t.Errorf("rendered markdown still shows %q:\n%s", gone, out)
		}
	}
}
