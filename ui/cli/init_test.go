package cli

import (
	"sort"
	"strings"
	"testing"

	"github.com/atotto/clipboard"

	"github.com/jarvis-workbench/jarvis/internal/inittrace"
	"github.com/jarvis-workbench/jarvis/internal/lazyregexp"
)

// TestEveryLazyExpressionCompiles compiles the expressions jarvis's
// packages leave to their first use: the command line links them all, and
// one that does not compile must fail here rather than panic when a person
// first meets it.
func TestEveryLazyExpressionCompiles(t *testing.T) {
	if n := lazyregexp.Count(); n < 20 {
		t.Fatalf("only %d expressions registered: the command line should link the packages that have them", n)
	}
	if err := lazyregexp.Check(); err != nil {
		t.Fatal(err)
	}
}

// jarvisInitLimit is the most any jarvis package may allocate at init. The
// biggest now are tool descriptions (tools/files, about 15 KB); an
// expression compiled at init (20–40 KB for the ones the engines match
// server errors with) or a program text joined at init (tools/code's
// driver, 40 KB) goes over.
const jarvisInitLimit = 24 << 10

// TestJarvisPackagesDoLittleAtInit keeps jarvis's own start-up work out of
// package init, where every command pays for it before main: regular
// expressions are compiled with lazyregexp, other tables with
// sync.OnceValue.
func TestJarvisPackagesDoLittleAtInit(t *testing.T) {
	traced, err := inittrace.Packages()
	if err != nil {
		t.Fatalf("re-running the test binary with GODEBUG=inittrace=1: %v", err)
	}
	var ours []string
	for pkg, p := range traced {
		// This package's line holds its tests' variables too.
		if !strings.HasPrefix(pkg, "github.com/jarvis-workbench/jarvis/") || pkg == "github.com/jarvis-workbench/jarvis/ui/cli" {
			continue
		}
		ours = append(ours, pkg)
		if p.Bytes > jarvisInitLimit {
			t.Errorf("%s allocates %d bytes at init (%d allocations), over %d: build what it needs on first use", pkg, p.Bytes, p.Allocs, jarvisInitLimit)
		}
	}
	sort.Strings(ours)
	if len(ours) < 10 {
		t.Fatalf("the trace shows only %d jarvis packages (%v): is inittrace still read right?", len(ours), ours)
	}
}

// TestClipboardIsNotLookedForAtInit: the clipboard package (linked through
// the workbench's text area) looked along $PATH for eight clipboard
// programs at init, some 50 failed file lookups at every start. The copy
// in third_party/clipboard looks at the first paste or copy.
func TestClipboardIsNotLookedForAtInit(t *testing.T) {
	traced, err := inittrace.Packages()
	if err != nil {
		t.Fatalf("re-running the test binary with GODEBUG=inittrace=1: %v", err)
	}
	_ = clipboard.Unsupported // linked, whatever the rest of the binary does
	if p, ok := traced["github.com/atotto/clipboard"]; ok {
		t.Errorf("github.com/atotto/clipboard does work at init (%d bytes, %d allocations): is its replace in go.mod gone?", p.Bytes, p.Allocs)
	}
}
