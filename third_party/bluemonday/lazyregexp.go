// This file is not in the upstream release: jarvis's copy adds it (see
// third_party/README.md), so that the package's regular expressions are
// compiled the first time they are used rather than at package init,
// which every program linking the package paid for at start-up.

package bluemonday

import (
	"regexp"
	"sync"
)

// lazyRegexp returns a function that compiles expr the first time it is
// called and returns that one compiled expression on every call. Like
// regexp.MustCompile, it panics if expr does not compile.
func lazyRegexp(expr string) func() *regexp.Regexp {
	var (
		once sync.Once
		re   *regexp.Regexp
	)
	return func() *regexp.Regexp {
		once.Do(func() { re = regexp.MustCompile(expr) })
		return re
	}
}
