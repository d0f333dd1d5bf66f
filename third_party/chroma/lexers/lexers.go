package lexers

import (
	"embed"
	"io/fs"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

//go:embed embedded
var embedded embed.FS

// GlobalLexerRegistry is the global LexerRegistry of Lexers. The lexers
// defined in embedded XML are registered the first time it is asked for a
// lexer, not at package init (see chroma.NewLazyLexerRegistry); until
// then Get finds a lexer by name or alias through the generated index
// (index.go), building only that one.
var GlobalLexerRegistry = newGlobalRegistry()

func newGlobalRegistry() *chroma.LexerRegistry {
	reg := chroma.NewLazyLexerRegistry(func(reg *chroma.LexerRegistry) {
		paths, err := fs.Glob(embedded, "embedded/*.xml")
		if err != nil {
			panic(err)
		}
		for _, path := range paths {
			reg.Register(embeddedLexer(path))
		}
	})
	reg.SetIndex(&chroma.LexerIndex{Entries: indexEntries, Early: indexEarly, Build: embeddedLexer})
	return reg
}

// embeddedLexers holds the lexers built from embedded XML, by path, so
// that a lexer the index built is the one the registry loads later.
var embeddedLexers struct {
	sync.Mutex
	byPath map[string]chroma.Lexer
}

// embeddedLexer returns the lexer defined by the embedded XML at path,
// building it on the first call.
func embeddedLexer(path string) chroma.Lexer {
	embeddedLexers.Lock()
	defer embeddedLexers.Unlock()
	if lexer := embeddedLexers.byPath[path]; lexer != nil {
		return lexer
	}
	lexer := chroma.MustNewXMLLexer(embedded, path)
	if analyser := embeddedAnalysers[lexer.Config().Name]; analyser != nil {
		lexer.SetAnalyser(analyser)
	}
	if embeddedLexers.byPath == nil {
		embeddedLexers.byPath = map[string]chroma.Lexer{}
	}
	embeddedLexers.byPath[path] = lexer
	return lexer
}

// embeddedAnalysers are content analysers written in Go for lexers defined
// in XML, by the lexer's name. They are set as the lexers load, since the
// lexers do not exist at package init.
var embeddedAnalysers = map[string]func(text string) float32{}

// Names of all lexers, optionally including aliases.
func Names(withAliases bool) []string {
	return GlobalLexerRegistry.Names(withAliases)
}

// Aliases of all the lexers, and skip those lexers who do not have any aliases,
// or show their name instead
func Aliases(skipWithoutAliases bool) []string {
	return GlobalLexerRegistry.Aliases(skipWithoutAliases)
}

// Get a Lexer by name, alias or file extension.
//
// Note that this if there isn't an exact match on name or alias, this will
// call Match(), so it is not efficient.
func Get(name string) chroma.Lexer {
	return GlobalLexerRegistry.Get(name)
}

// MatchMimeType attempts to find a lexer for the given MIME type.
func MatchMimeType(mimeType string) chroma.Lexer {
	return GlobalLexerRegistry.MatchMimeType(mimeType)
}

// Match returns the first lexer matching filename.
//
// Note that this iterates over all file patterns in all lexers, so it's not
// particularly efficient.
func Match(filename string) chroma.Lexer {
	return GlobalLexerRegistry.Match(filename)
}

// Register a Lexer with the global registry.
func Register(lexer chroma.Lexer) chroma.Lexer {
	registered++
	return GlobalLexerRegistry.Register(lexer)
}

// registered counts the calls to Register: right after package init, how
// many lexers the package itself registers before load, which its index
// is made for (indexEarly).
var registered int

// Analyse text content and return the "best" lexer..
func Analyse(text string) chroma.Lexer {
	return GlobalLexerRegistry.Analyse(text)
}

// PlaintextRules is used for the fallback lexer as well as the explicit
// plaintext lexer.
func PlaintextRules() chroma.Rules {
	return chroma.Rules{
		"root": []chroma.Rule{
			{`.+`, chroma.Text, nil},
			{`\n`, chroma.Text, nil},
		},
	}
}

// Fallback lexer if no other is found.
var Fallback chroma.Lexer = chroma.MustNewLexer(&chroma.Config{
	Name:      "fallback",
	Filenames: []string{"*"},
	Priority:  -1,
}, PlaintextRules)
