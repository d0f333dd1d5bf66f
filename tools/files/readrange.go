package files

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// A file larger than MaxFileSize is not refused for its size: the limit
// is on what file_read returns. A line range of it is read by streaming
// the file, keeping only the lines asked for, and counting the rest, so a
// model can page through a large log as through a small one.

// lineRange is what readRange found.
type lineRange struct {
	content string
	// first and last are the lines returned (from 1); total counts the
	// file's lines.
	first, last, total int
}

// rangeTooLargeError means the lines asked for hold more than the limit.
type rangeTooLargeError struct{ first, last int }

func (e *rangeTooLargeError) Error() string {
	return fmt.Sprintf("lines %d-%d hold more than %d bytes", e.first, e.last, MaxFileSize)
}

// errPastEnd means the range starts after the file's last line; the
// range's total says how many it has.
var errPastEnd = errors.New("start_line is past the end")

// readRange streams real (checked as info, see ReadRegular) and returns
// lines first to first+maxLines-1 (to the end when maxLines is 0), at most
// MaxFileSize bytes of them, with the file's line count. A line range past
// the limit is a *rangeTooLargeError, one past the end errPastEnd.
func readRange(ctx context.Context, real string, info os.FileInfo, first, maxLines int) (lineRange, error) {
	file, err := openChecked(real, info)
	if err != nil {
		return lineRange{}, err
	}
	defer file.Close()
	r := bufio.NewReaderSize(file, 64<<10)
	out := lineRange{first: first}
	var b strings.Builder
	n := 0
	for {
		line, err := r.ReadSlice('\n')
		if len(line) > 0 {
			n++
			if n%4096 == 0 && ctx.Err() != nil {
				return lineRange{}, ctx.Err()
			}
			if n >= first && (maxLines == 0 || n < first+maxLines) {
				if b.Len()+len(line) > MaxFileSize {
					return lineRange{}, &rangeTooLargeError{first: first, last: n}
				}
				b.Write(line)
				out.last = n
			}
		}
		switch {
		case err == nil:
		case errors.Is(err, bufio.ErrBufferFull):
			// A line longer than the buffer: its pieces are one line.
			n--
		case errors.Is(err, io.EOF):
			out.total = n
			if first > n {
				return out, errPastEnd
			}
			out.content = strings.TrimRight(b.String(), "\n")
			return out, nil
		default:
			return lineRange{}, err
		}
	}
}
