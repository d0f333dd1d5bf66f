// Package table lays out the headless commands' listings in aligned
// columns. It is text/tabwriter written out at once: tabwriter writes
// every cell and every run of padding with a Write of its own, which on an
// unbuffered standard output is a system call each (about 200 for `jarvis
// tools list`, a tenth of its run).
package table

import (
	"bufio"
	"io"
	"text/tabwriter"
)

// Writer is a tabwriter.Writer whose output reaches its destination only
// on Flush, in one write for a listing of up to 16 KB.
type Writer struct {
	*tabwriter.Writer
	buf *bufio.Writer
}

// New returns a table writing to w, with columns two spaces apart. Cells
// end with '\t' and rows with '\n', as for tabwriter.
func New(w io.Writer) *Writer {
	buf := bufio.NewWriterSize(w, 16<<10)
	return &Writer{Writer: tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0), buf: buf}
}

// Flush lays out the rows written since the last Flush and writes them.
func (t *Writer) Flush() error {
	if err := t.Writer.Flush(); err != nil {
		return err
	}
	return t.buf.Flush()
}
