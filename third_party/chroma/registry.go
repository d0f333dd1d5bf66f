package chroma

import (
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

var (
	ignoredSuffixes = [...]string{
		// Editor backups
		"~", ".bak", ".old", ".orig",
		// Debian and derivatives apt/dpkg/ucf backups
		".dpkg-dist", ".dpkg-old", ".ucf-dist", ".ucf-new", ".ucf-old",
		// Red Hat and derivatives rpm backups
		".rpmnew", ".rpmorig", ".rpmsave",
		// Build system input/template files
		".in",
	}
)

// LexerRegistry is a registry of Lexers.
type LexerRegistry struct {
	Lexers  Lexers
	byName  map[string]Lexer
	byAlias map[string]Lexer

	// load, when set, registers the registry's own lexers the first time
	// it is asked for one (see NewLazyLexerRegistry).
	load     func(*LexerRegistry)
	loadOnce sync.Once
	// early holds the lexers registered before load ran, in order: they
	// are registered after load's, and not looked at before, so that a
	// lexer built on first use (NewLazyLexer) is not built by Register.
	early  []Lexer
	loaded bool

	// index, when set, answers Get before load has run (see SetIndex);
	// indexMu orders those answers with the start of load.
	index   *LexerIndex
	indexMu sync.Mutex
}

// LexerIndex tells a lazy registry, before its load has run, which lexer
// Get finds by each name and alias, so that looking up one language
// builds that language's lexer alone: loading every embedded lexer to
// answer the first Get costs about 9 ms and 2.8 MB of allocations, and
// brings a page of each of their definitions into memory.
type LexerIndex struct {
	// Entries are sorted by Key, byte by byte.
	Entries []LexerIndexEntry
	// Early is how many lexers were registered before load when the index
	// was made. With any other number the index may not be what the
	// registry would answer (a program registered a lexer of its own,
	// which may take a name over), and Get loads everything instead.
	Early int
	// Build returns the lexer defined by an entry's XML: the same lexer
	// at every call, and the one load registers.
	Build func(xml string) Lexer
}

// LexerIndexEntry is what Get(Key) returns once the registry has loaded:
// the lexer defined by XML, or, when XML is "", the last lexer named
// Name registered before load.
type LexerIndexEntry struct {
	Key, Name, XML string
}

// SetIndex gives a lazy registry its index. Like Register, it must not
// run concurrently with the registry's other methods.
func (l *LexerRegistry) SetIndex(index *LexerIndex) { l.index = index }

// indexed is Get's answer from the index, nil when the index cannot tell
// (no index, already loaded, a different set of early lexers, or a name
// it does not hold): Get then loads and answers as it always has.
func (l *LexerRegistry) indexed(name string) Lexer {
	if l.index == nil {
		return nil
	}
	l.indexMu.Lock()
	defer l.indexMu.Unlock()
	if l.loaded || len(l.early) != l.index.Early {
		return nil
	}
	entries := l.index.Entries
	i, found := sort.Find(len(entries), func(i int) int { return strings.Compare(name, entries[i].Key) })
	if !found {
		return nil
	}
	e := entries[i]
	if e.XML != "" {
		lexer := l.index.Build(e.XML)
		lexer.SetRegistry(l)
		return lexer
	}
	// The last registered wins, as Register's maps keep it. A lexer built
	// on first use is known by the name it was made with, not built here.
	for i := len(l.early) - 1; i >= 0; i-- {
		lexer := l.early[i]
		if lazy, ok := lexer.(*lazyLexer); ok {
			if lazy.name == e.Name {
				return lexer
			}
		} else if lexer.Config().Name == e.Name {
			return lexer
		}
	}
	return nil
}

// NewLexerRegistry creates a new LexerRegistry of Lexers.
func NewLexerRegistry() *LexerRegistry {
	return &LexerRegistry{
		byName:  map[string]Lexer{},
		byAlias: map[string]Lexer{},
	}
}

// NewLazyLexerRegistry creates a LexerRegistry whose own lexers are
// registered by load the first time the registry is asked for a lexer
// (Get, Match, MatchMimeType, Analyse, Names, Aliases), not when it is
// created: building the embedded lexers costs every program that imports
// chroma 10-20 ms at start-up, whether or not it ever highlights code.
//
// Lexers registered before that point keep their place after the loaded
// ones, as if load had run first, so the registry answers exactly as an
// eagerly loaded one would. Until then Register only records them, without
// asking them for their Config: reading the Lexers field directly sees
// nothing before Load.
func NewLazyLexerRegistry(load func(*LexerRegistry)) *LexerRegistry {
	l := NewLexerRegistry()
	l.load = load
	return l
}

// Load registers a lazy registry's own lexers now if they are not yet
// registered; it does nothing for a registry made by NewLexerRegistry.
// Like Register, it must not run concurrently with Register.
func (l *LexerRegistry) Load() {
	if l.load == nil {
		return
	}
	l.loadOnce.Do(func() {
		l.indexMu.Lock()
		l.loaded = true
		early := l.early
		l.early = nil
		l.indexMu.Unlock()
		l.load(l)
		for _, lexer := range early {
			l.Register(lexer)
		}
	})
}

// Names of all lexers, optionally including aliases.
func (l *LexerRegistry) Names(withAliases bool) []string {
	l.Load()
	out := []string{}
	for _, lexer := range l.Lexers {
		config := lexer.Config()
		out = append(out, config.Name)
		if withAliases {
			out = append(out, config.Aliases...)
		}
	}
	sort.Strings(out)
	return out
}

// Aliases of all the lexers, and skip those lexers who do not have any aliases,
// or show their name instead
func (l *LexerRegistry) Aliases(skipWithoutAliases bool) []string {
	l.Load()
	out := []string{}
	for _, lexer := range l.Lexers {
		config := lexer.Config()
		if len(config.Aliases) == 0 {
			if skipWithoutAliases {
				continue
			}
			out = append(out, config.Name)
		}
		out = append(out, config.Aliases...)
	}
	sort.Strings(out)
	return out
}

// Get a Lexer by name, alias or file extension.
//
// A lazy registry with an index (SetIndex) answers a name or alias the
// index holds without loading its other lexers.
func (l *LexerRegistry) Get(name string) Lexer {
	if lexer := l.indexed(name); lexer != nil {
		return lexer
	}
	l.Load()
	if lexer := l.byName[name]; lexer != nil {
		return lexer
	}
	if lexer := l.byAlias[name]; lexer != nil {
		return lexer
	}
	if lexer := l.byName[strings.ToLower(name)]; lexer != nil {
		return lexer
	}
	if lexer := l.byAlias[strings.ToLower(name)]; lexer != nil {
		return lexer
	}

	candidates := PrioritisedLexers{}
	// Try file extension.
	if lexer := l.Match("filename." + name); lexer != nil {
		candidates = append(candidates, lexer)
	}
	// Try exact filename.
	if lexer := l.Match(name); lexer != nil {
		candidates = append(candidates, lexer)
	}
	if len(candidates) == 0 {
		return nil
	}
	sort.Sort(candidates)
	return candidates[0]
}

// MatchMimeType attempts to find a lexer for the given MIME type.
func (l *LexerRegistry) MatchMimeType(mimeType string) Lexer {
	l.Load()
	matched := PrioritisedLexers{}
	for _, l := range l.Lexers {
		for _, lmt := range l.Config().MimeTypes {
			if mimeType == lmt {
				matched = append(matched, l)
			}
		}
	}
	if len(matched) != 0 {
		sort.Sort(matched)
		return matched[0]
	}
	return nil
}

// Match returns the first lexer matching filename.
//
// Note that this iterates over all file patterns in all lexers, so is not fast.
func (l *LexerRegistry) Match(filename string) Lexer {
	l.Load()
	filename = filepath.Base(filename)
	matched := PrioritisedLexers{}
	// First, try primary filename matches.
	for _, lexer := range l.Lexers {
		config := lexer.Config()
		for _, glob := range config.Filenames {
			ok, err := filepath.Match(glob, filename)
			if err != nil { // nolint
				panic(err)
			} else if ok {
				matched = append(matched, lexer)
			} else {
				for _, suf := range &ignoredSuffixes {
					ok, err := filepath.Match(glob+suf, filename)
					if err != nil {
						panic(err)
					} else if ok {
						matched = append(matched, lexer)
						break
					}
				}
			}
		}
	}
	if len(matched) > 0 {
		sort.Sort(matched)
		return matched[0]
	}
	matched = nil
	// Next, try filename aliases.
	for _, lexer := range l.Lexers {
		config := lexer.Config()
		for _, glob := range config.AliasFilenames {
			ok, err := filepath.Match(glob, filename)
			if err != nil { // nolint
				panic(err)
			} else if ok {
				matched = append(matched, lexer)
			} else {
				for _, suf := range &ignoredSuffixes {
					ok, err := filepath.Match(glob+suf, filename)
					if err != nil {
						panic(err)
					} else if ok {
						matched = append(matched, lexer)
						break
					}
				}
			}
		}
	}
	if len(matched) > 0 {
		sort.Sort(matched)
		return matched[0]
	}
	return nil
}

// Analyse text content and return the "best" lexer..
func (l *LexerRegistry) Analyse(text string) Lexer {
	l.Load()
	var picked Lexer
	highest := float32(0.0)
	for _, lexer := range l.Lexers {
		if analyser, ok := lexer.(Analyser); ok {
			weight := analyser.AnalyseText(text)
			if weight > highest {
				picked = lexer
				highest = weight
			}
		}
	}
	return picked
}

// Register a Lexer with the LexerRegistry. If the lexer is already registered
// it will be replaced.
func (l *LexerRegistry) Register(lexer Lexer) Lexer {
	lexer.SetRegistry(l)
	if l.load != nil && !l.loaded {
		l.early = append(l.early, lexer)
		return lexer
	}
	config := lexer.Config()

	l.byName[config.Name] = lexer
	l.byName[strings.ToLower(config.Name)] = lexer

	for _, alias := range config.Aliases {
		l.byAlias[alias] = lexer
		l.byAlias[strings.ToLower(alias)] = lexer
	}

	l.Lexers = add(l.Lexers, lexer)

	return lexer
}

// add adds a lexer to a slice of lexers if it doesn't already exist, or if found will replace it.
func add(lexers Lexers, lexer Lexer) Lexers {
	for i, val := range lexers {
		if val == nil {
			continue
		}

		if val.Config().Name == lexer.Config().Name {
			lexers[i] = lexer
			return lexers
		}
	}

	return append(lexers, lexer)
}
