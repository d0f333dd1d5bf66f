//go:build !unix

package testfs

// Mkfifo skips the test: this system has no named pipes in its file
// system.
func Mkfifo(t TB, _ string) {
	t.Helper()
	t.Skip("no named pipes (FIFOs) on this system")
}
