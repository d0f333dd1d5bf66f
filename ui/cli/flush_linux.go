package cli

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// flushInput discards what was typed on the terminal in and not yet read
// (a line typed ahead while the model worked), so it cannot answer the
// question about to be asked. Anything else than a terminal is left alone.
func flushInput(in io.Reader) {
	if f, ok := in.(*os.File); ok {
		_ = unix.IoctlSetInt(int(f.Fd()), unix.TCFLSH, unix.TCIFLUSH)
	}
}
