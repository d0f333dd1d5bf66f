//go:build unix

package cli

import (
	"os"
	"os/signal"
	"syscall"
)

// onProfileSignal calls write whenever the process gets SIGUSR1, until
// stop is called.
func onProfileSignal(write func()) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR1)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ch:
				write()
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}
