package chroma

import "sync"

// NewLazyLexer returns a Lexer that calls build the first time one of its
// methods is called, and forwards every call to the lexer build returns.
// The lexers a package defines in Go, some of them parsed from XML or
// remapping thousands of words, are built on first use this way rather
// than at package init, which every program that imports chroma paid for
// at start-up. Registering one in a lazy registry does not build it
// (see NewLazyLexerRegistry).
//
// This file is not in the upstream release: jarvis's copy adds it (see
// third_party/README.md).
//
// name is the Name in the Config of the lexer build returns: a lazy
// registry with an index (SetIndex) finds the lexer by it without
// building it.
func NewLazyLexer(name string, build func() Lexer) Lexer {
	return &lazyLexer{name: name, build: build}
}

type lazyLexer struct {
	name     string
	once     sync.Once
	build    func() Lexer
	lexer    Lexer
	mu       sync.Mutex     // guards registry, and lexer once built
	registry *LexerRegistry // kept for the build when set before it
}

func (l *lazyLexer) get() Lexer {
	l.once.Do(func() {
		lexer := l.build()
		if got := lexer.Config().Name; got != l.name {
			panic("chroma: NewLazyLexer(" + l.name + ") built a lexer named " + got)
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.registry != nil {
			lexer.SetRegistry(l.registry)
		}
		l.lexer = lexer
	})
	return l.lexer
}

func (l *lazyLexer) Config() *Config { return l.get().Config() }

func (l *lazyLexer) Tokenise(options *TokeniseOptions, text string) (Iterator, error) {
	return l.get().Tokenise(options, text)
}

// SetRegistry is kept for the build if the lexer is not built yet, so
// that registering it builds nothing.
func (l *lazyLexer) SetRegistry(registry *LexerRegistry) Lexer {
	l.mu.Lock()
	l.registry = registry
	lexer := l.lexer
	l.mu.Unlock()
	if lexer != nil {
		lexer.SetRegistry(registry)
	}
	return l
}

func (l *lazyLexer) SetAnalyser(analyser func(text string) float32) Lexer {
	l.get().SetAnalyser(analyser)
	return l
}

func (l *lazyLexer) AnalyseText(text string) float32 { return l.get().AnalyseText(text) }

// SetTracing forwards to the built lexer when it traces (TracingLexer).
func (l *lazyLexer) SetTracing(enable bool) {
	if t, ok := l.get().(TracingLexer); ok {
		t.SetTracing(enable)
	}
}
