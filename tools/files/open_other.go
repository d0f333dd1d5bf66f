//go:build !unix

package files

import "os"

// openChecked opens real for reading and confirms it is still the regular
// file described by checked (ErrChanged otherwise). Without O_NOFOLLOW and
// O_NONBLOCK here, the regular-file check before and after opening is what
// keeps a swapped-in device or pipe out.
func openChecked(real string, checked os.FileInfo) (*os.File, error) {
	if info, err := os.Lstat(real); err != nil || !info.Mode().IsRegular() {
		return nil, ErrChanged
	}
	file, err := os.Open(real)
	if err != nil {
		return nil, err
	}
	now, err := file.Stat()
	if err != nil || !now.Mode().IsRegular() || !os.SameFile(now, checked) {
		file.Close()
		return nil, ErrChanged
	}
	return file, nil
}

// linked finds no hard links here: this system's file information has no
// link count to tell them by. The rules on names and content still apply.
func (s *Secrets) linked(os.FileInfo) string { return "" }
