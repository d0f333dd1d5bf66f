//go:build !linux

package cli

import "io"

// flushInput discards typed-ahead terminal input on Linux; elsewhere the
// lines read before a question are still dropped (see promptConfirmer).
func flushInput(io.Reader) {}
