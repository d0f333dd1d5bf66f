package lexers_test

import (
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
	lexer := chroma.NewLazyLexer(func() chroma.Lexer {
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
