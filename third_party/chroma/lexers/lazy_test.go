package lexers_test

import (
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

// The embedded lexers arrive on first use, and a lexer registered before
// that keeps the place and precedence it had when they loaded at init.
func TestLazyRegistryAnswersAsAnEagerOne(t *testing.T) {
	eager := chroma.NewLexerRegistry()
	lazy := chroma.NewLazyLexerRegistry(func(r *chroma.LexerRegistry) {
		r.Register(lexers.GlobalLexerRegistry.Get("go"))
		r.Register(lexers.GlobalLexerRegistry.Get("python"))
	})
	early := chroma.MustNewLexer(&chroma.Config{Name: "Python", Aliases: []string{"mine"}}, lexers.PlaintextRules)
	eager.Register(lexers.GlobalLexerRegistry.Get("go"))
	eager.Register(lexers.GlobalLexerRegistry.Get("python"))
	eager.Register(early)

	lazy.Register(early)
	if n := len(lazy.Lexers); n != 0 {
		t.Fatalf("before first use the lazy registry lists %d lexers, want none: Register only records them", n)
	}
	if got := lazy.Get("python"); got != early {
		t.Errorf("Get(python) = %v, want the lexer registered before loading, which replaces the loaded one", got)
	}
	if got, want := lazy.Names(true), eager.Names(true); len(got) != len(want) {
		t.Errorf("Names = %v, want %v", got, want)
	}
	for i := range eager.Lexers {
		if lazy.Lexers[i].Config().Name != eager.Lexers[i].Config().Name {
			t.Errorf("lexer %d is %s, want %s as in an eager registry", i, lazy.Lexers[i].Config().Name, eager.Lexers[i].Config().Name)
		}
	}
	if got := lazy.Get("go"); got == nil || got.Config().Name != "Go" {
		t.Errorf("Get(go) = %v, want the loaded Go lexer", got)
	}
}

func TestGlobalRegistryFindsEmbeddedLexers(t *testing.T) {
	for _, name := range []string{"go", "python", "rust", "bash", "json", "yaml"} {
		if lexers.Get(name) == nil {
			t.Errorf("lexers.Get(%q) = nil, want an embedded lexer", name)
		}
	}
	if lexers.Match("main.go") == nil || lexers.Match("main.go").Config().Name != "Go" {
		t.Errorf("Match(main.go) = %v, want Go", lexers.Match("main.go"))
	}
	if l := lexers.Get("raku"); l == nil {
		t.Error("Get(raku) = nil, want the lexer defined in Go")
	}
}

// dns, MySQL and Zed have their content analysers written in Go; they must
// survive the move from package init to first use.
func TestEmbeddedLexersKeepTheirGoAnalysers(t *testing.T) {
	if l := lexers.Analyse("@ IN SOA ns.example.com. admin.example.com. (1 2 3 4 5)\n"); l == nil || l.Config().Name != "dns" {
		t.Errorf("Analyse of a zone file = %v, want dns", l)
	}
	for _, name := range []string{"dns", "mysql", "zed"} {
		if _, ok := lexers.Get(name).(chroma.Analyser); !ok {
			t.Errorf("%s has no analyser", name)
		}
	}
}

// The lexers defined in Go that upstream builds from XML at init (HTML,
// the Go templates, Common Lisp, Emacs Lisp) are built on first use:
// registering one builds nothing, and once built it answers as upstream's.
func TestLazyLexerIsBuiltOnFirstUse(t *testing.T) {
	built := 0
	lexer := chroma.NewLazyLexer("Mine", func() chroma.Lexer {
		built++
		return chroma.MustNewLexer(&chroma.Config{Name: "Mine", Aliases: []string{"mine"}}, lexers.PlaintextRules)
	})
	reg := chroma.NewLazyLexerRegistry(func(*chroma.LexerRegistry) {})
	reg.Register(lexer)
	if built != 0 {
		t.Fatalf("registering a lazy lexer built it %d times, want 0", built)
	}
	if got := reg.Get("mine"); got != lexer {
		t.Fatalf("Get(mine) = %v, want the lazy lexer", got)
	}
	lexer.Config()
	if built != 1 {
		t.Errorf("built %d times, want once", built)
	}

	for name, want := range map[string]chroma.TokenType{
		"go-html-template": chroma.NameTag,        // HTML around the template
		"go-text-template": chroma.CommentPreproc, // {{ and }}
		"common-lisp":      chroma.Keyword,        // a special form, remapped
		"emacs-lisp":       chroma.NameBuiltin,    // a builtin, remapped
	} {
		text := map[string]string{
			"go-html-template": "<p>{{ .Name }}</p>",
			"go-text-template": "{{ .Name }}",
			"common-lisp":      "(let ((x 1)) x)",
			"emacs-lisp":       "(defun f () (car x))",
		}[name]
		l := lexers.Get(name)
		if l == nil {
			t.Errorf("Get(%s) = nil", name)
			continue
		}
		it, err := l.Tokenise(nil, text)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		found := false
		for _, tok := range it.Tokens() {
			found = found || tok.Type == want
		}
		if !found {
			t.Errorf("%s: no %v token in %q", name, want, text)
		}
	}
}

// With an index, a lazy registry finds a lexer by name or alias before
// loading, building that lexer alone; once a program registers a lexer of
// its own before load, the index no longer knows the answers and Get
// loads everything as before.
func TestIndexedRegistryBuildsOnlyWhatIsAskedFor(t *testing.T) {
	var built []string
	xmlLexer := map[string]chroma.Lexer{}
	build := func(xml string) chroma.Lexer {
		if xmlLexer[xml] == nil {
			built = append(built, xml)
			xmlLexer[xml] = chroma.MustNewLexer(&chroma.Config{Name: strings.ToUpper(xml), Aliases: []string{xml}}, lexers.PlaintextRules)
		}
		return xmlLexer[xml]
	}
	newRegistry := func(loads *int) *chroma.LexerRegistry {
		reg := chroma.NewLazyLexerRegistry(func(r *chroma.LexerRegistry) {
			*loads++
			r.Register(build("a"))
			r.Register(build("b"))
		})
		reg.SetIndex(&chroma.LexerIndex{
			Entries: []chroma.LexerIndexEntry{
				{Key: "A", Name: "A", XML: "a"},
				{Key: "a", Name: "A", XML: "a"},
				{Key: "lazy", Name: "Lazy"},
			},
			Early: 1,
			Build: build,
		})
		return reg
	}
	lazyBuilt := 0
	lazy := chroma.NewLazyLexer("Lazy", func() chroma.Lexer {
		lazyBuilt++
		return chroma.MustNewLexer(&chroma.Config{Name: "Lazy", Aliases: []string{"lazy"}}, lexers.PlaintextRules)
	})

	loads := 0
	reg := newRegistry(&loads)
	reg.Register(lazy)
	a := reg.Get("a")
	if a == nil || a.Config().Name != "A" || loads != 0 || len(built) != 1 {
		t.Fatalf("Get(a) = %v after %d loads, building %v: want A from the index, nothing loaded, one lexer built", a, loads, built)
	}
	if got := reg.Get("lazy"); got != lazy || lazyBuilt != 0 || loads != 0 {
		t.Fatalf("Get(lazy) = %v, built %d times, %d loads: want the lexer registered before load, found by its name without building it", got, lazyBuilt, loads)
	}
	if got := reg.Get("b"); got == nil || got.Config().Name != "B" || loads != 1 {
		t.Fatalf("Get(b), a name the index does not hold, = %v after %d loads: want B from loading", got, loads)
	}
	if got := reg.Get("a"); got != a {
		t.Errorf("after load Get(a) = %v, want the lexer the index handed out", got)
	}

	loads = 0
	reg = newRegistry(&loads)
	reg.Register(lazy)
	mine := chroma.MustNewLexer(&chroma.Config{Name: "A"}, lexers.PlaintextRules)
	reg.Register(mine)
	if got := reg.Get("a"); got != mine || loads != 1 {
		t.Errorf("with a lexer of the program's own replacing A, Get(a) = %v after %d loads: want that lexer, from loading", got, loads)
	}
}
