package styles

import (
	"embed"
	"io/fs"
	"sort"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

//go:embed *.xml
var embedded embed.FS

// Registry of Styles. The embedded styles are added the first time a
// style that is not registered is asked for (Get, Names), not at package
// init: parsing them costs every program that imports chroma about 5 ms
// at start-up. Reading the map directly before that sees only what has
// been registered; call Load first.
var Registry = map[string]*chroma.Style{}

// Fallback style. Reassign to change the default fallback style; until
// the embedded styles are loaded it is nil, and loading sets it to
// "swapoff" unless it has been assigned.
var Fallback *chroma.Style

var (
	loadOnce sync.Once
	// registryMu makes this package's own functions safe to call from
	// several goroutines, now that the first Get may load while others
	// read. Code that reads Registry directly has the guarantees it had.
	registryMu sync.RWMutex
)

// Load adds the embedded styles to Registry now if they are not there
// yet. A style registered earlier under the same name keeps its place,
// as if the embedded ones had been registered first.
func Load() {
	loadOnce.Do(func() {
		files, err := fs.ReadDir(embedded, ".")
		if err != nil {
			panic(err)
		}
		var loaded []*chroma.Style
		for _, file := range files {
			if file.IsDir() {
				continue
			}
			r, err := embedded.Open(file.Name())
			if err != nil {
				panic(err)
			}
			style, err := chroma.NewXMLStyle(r)
			if err != nil {
				panic(err)
			}
			_ = r.Close()
			loaded = append(loaded, style)
		}
		registryMu.Lock()
		defer registryMu.Unlock()
		for _, style := range loaded {
			if _, registered := Registry[style.Name]; !registered {
				Registry[style.Name] = style
			}
		}
		if Fallback == nil {
			Fallback = Registry["swapoff"]
		}
		setCompat()
	})
}

// Register a chroma.Style.
func Register(style *chroma.Style) *chroma.Style {
	registryMu.Lock()
	defer registryMu.Unlock()
	Registry[style.Name] = style
	return style
}

// Names of all available styles.
func Names() []string {
	Load()
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := []string{}
	for name := range Registry {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Get named style, or Fallback. A style registered by name is found
// without loading the embedded ones: a program that registers the styles
// it uses never parses the others.
func Get(name string) *chroma.Style {
	if style, ok := registered(name); ok {
		return style
	}
	Load()
	if style, ok := registered(name); ok {
		return style
	}
	registryMu.RLock()
	defer registryMu.RUnlock()
	return Fallback
}

func registered(name string) (*chroma.Style, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	style, ok := Registry[name]
	return style, ok
}
