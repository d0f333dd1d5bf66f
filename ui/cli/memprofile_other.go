//go:build !unix

package cli

// onProfileSignal does nothing where there is no SIGUSR1: the profile is
// written at exit only.
func onProfileSignal(func()) (stop func()) { return func() {} }
