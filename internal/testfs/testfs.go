// Package testfs makes the special files tests need (a FIFO, which must
// never be opened by a tool: opening one can block forever) on the systems
// that have them; elsewhere the test is skipped, saying why.
package testfs

import "testing"

// TB is what the helpers need of a test.
type TB interface {
	Helper()
	Fatal(args ...any)
	Skip(args ...any)
}

var _ TB = testing.TB(nil)
