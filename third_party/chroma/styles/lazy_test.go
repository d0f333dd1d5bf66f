package styles_test

import (
	"sync"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/styles"
)

var ranOnce bool

// The package has one registry and loads it once, so the checks run in
// one test, in order: nothing loaded at first, then a load started by
// lookups from several goroutines at once (go test -race), then what the
// load leaves.
func TestStylesLoadOnFirstUse(t *testing.T) {
	if ranOnce {
		t.Skip("the registry loads once a process; the first run checked it")
	}
	ranOnce = true
	if len(styles.Registry) != 0 || styles.Fallback != nil || styles.Monokai != nil {
		t.Fatalf("before first use Registry holds %d styles, Fallback %v, Monokai %v; want nothing loaded", len(styles.Registry), styles.Fallback, styles.Monokai)
	}
	mine := chroma.MustNewStyle("monokai", chroma.StyleEntries{chroma.Text: "#ff0000"})
	styles.Register(mine)
	if len(styles.Registry) != 1 {
		t.Fatalf("Register loaded the embedded styles (%d in the registry); it should not", len(styles.Registry))
	}
	if got := styles.Get("monokai"); got != mine {
		t.Errorf("Get(monokai) = %v, want the style registered before loading", got)
	}
	if len(styles.Registry) != 1 {
		t.Fatalf("Get of a registered style loaded the embedded ones (%d in the registry)", len(styles.Registry))
	}

	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch i % 4 {
			case 0:
				styles.Get("monokai")
			case 1:
				styles.Get("vim") // not registered: loads
			case 2:
				styles.Register(chroma.MustNewStyle("mine-"+string(rune('a'+i)), chroma.StyleEntries{chroma.Text: "#00ff00"}))
			case 3:
				styles.Names() // loads
			}
		}()
	}
	wg.Wait()

	if got := styles.Get("monokai"); got != mine {
		t.Errorf("Get(monokai) = %v after loading, want the style registered before", got)
	}
	if styles.Get("mine-c") == nil || styles.Get("mine-c").Name != "mine-c" {
		t.Error("a style registered from a goroutine is not found")
	}
	if styles.Get("github") == nil || styles.Get("github").Name != "github" {
		t.Errorf("Get(github) = %v, want the embedded style", styles.Get("github"))
	}
	if styles.Fallback == nil || styles.Fallback.Name != "swapoff" {
		t.Errorf("Fallback = %v after loading, want swapoff", styles.Fallback)
	}
	if styles.Get("no such style") != styles.Fallback {
		t.Error("Get of an unknown style should give Fallback")
	}
	if styles.Dracula == nil || styles.Dracula.Name != "dracula" {
		t.Errorf("the compatibility variable Dracula = %v after loading, want the dracula style", styles.Dracula)
	}
	if n := len(styles.Names()); n < 60 {
		t.Errorf("Names lists %d styles, want the embedded ones (more than 60)", n)
	}
}
