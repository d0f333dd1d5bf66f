//go:build unix

package files

import (
	"os"
	"syscall"
)

// openChecked opens real for reading without blocking (O_NONBLOCK: a FIFO
// swapped in since the check cannot hang the caller) and without following
// a link in its last element, and confirms it is still the regular file
// described by checked (ErrChanged otherwise).
func openChecked(real string, checked os.FileInfo) (*os.File, error) {
	fd, err := syscall.Open(real, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0)
	if err != nil {
		if err == syscall.ELOOP { // the last element became a link
			return nil, ErrChanged
		}
		return nil, &os.PathError{Op: "open", Path: real, Err: err}
	}
	file := os.NewFile(uintptr(fd), real)
	now, err := file.Stat()
	if err != nil || !now.Mode().IsRegular() || !os.SameFile(now, checked) {
		file.Close()
		return nil, ErrChanged
	}
	return file, nil
}

// linked says why info, a file with more than one name, must not be read:
// it is a hard link to a sensitive file ("" otherwise). Only files with
// several links are compared, against the sensitive files in the home
// directories and the system's.
func (s *Secrets) linked(info os.FileInfo) string {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || st.Nlink < 2 {
		return ""
	}
	return s.sameAsSensitive(func(other os.FileInfo) bool { return os.SameFile(info, other) })
}
