//go:build unix

package testfs

import "syscall"

// Mkfifo makes a named pipe at path.
func Mkfifo(t TB, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}
