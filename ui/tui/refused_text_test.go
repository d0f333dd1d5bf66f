package tui

import (
	"errors"
	"testing"
)

// A refusal's note reads as sentences, whatever punctuation its error
// ended with.
func TestRefusedTextIsSentences(t *testing.T) {
	for err, want := range map[error]string{
		errors.New("the run was cancelled"):        "The run was cancelled. Nothing was sent or saved: your message is back in the prompt.",
		errors.New("no message fits (/ctx 8192)."): "No message fits (/ctx 8192). Nothing was sent or saved: your message is back in the prompt.",
	} {
		if got := refusedText(err, 0); got != want {
			t.Errorf("refusedText(%q) = %q, want %q", err, got, want)
		}
	}
}
