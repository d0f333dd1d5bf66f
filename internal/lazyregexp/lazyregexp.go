// Package lazyregexp compiles a package's regular expressions on first use
// instead of at program start. Every jarvis command initialises every
// package the binary links, and a command uses few of their expressions:
// compiled at init, they cost each `jarvis version` a share of its start
// (docs/performance.md, "Headless start").
package lazyregexp

import (
	"regexp"
	"sync"
)

// all holds every expression given to New, so that one test can compile
// them all (Check): an expression that does not compile must fail a test,
// not panic in the hands of the person who first needs it.
var (
	mu  sync.Mutex
	all []string
)

// New returns a function that compiles expr on its first call and returns
// the same *regexp.Regexp from then on. Like regexp.MustCompile, it panics
// if expr is not a valid expression; Check finds that first.
func New(expr string) func() *regexp.Regexp {
	mu.Lock()
	all = append(all, expr)
	mu.Unlock()
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// Check compiles every expression given to New so far, in the packages the
// calling program links, and returns the first error.
func Check() error {
	mu.Lock()
	defer mu.Unlock()
	for _, expr := range all {
		if _, err := regexp.Compile(expr); err != nil {
			return err
		}
	}
	return nil
}

// Count is how many expressions New was given, so that a test of Check
// can tell it saw the program's expressions and not none.
func Count() int {
	mu.Lock()
	defer mu.Unlock()
	return len(all)
}
