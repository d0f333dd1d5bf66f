package tui

import (
	"errors"
	"os/exec"
	"strings"

	"github.com/atotto/clipboard"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/ui/format"
	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// clipboardMsg is the system clipboard's text, read for ctrl+v.
type clipboardMsg struct {
	text string
	err  error
}

// readClipboard reads the clipboard for ctrl+v. The prompt and the
// dialog's boxes could read it themselves, but they keep only the text
// of a failure, and a clipboard program's failure is an exit status: what
// it printed, which says why, is in the error jarvis gets here.
func readClipboard() tea.Msg {
	text, err := clipboard.ReadAll()
	return clipboardMsg{text: text, err: err}
}

// key is the clipboard's text as the key a terminal's paste arrives in,
// which a text box inserts whole, sanitised as any paste.
func (c clipboardMsg) key() tea.KeyMsg {
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(c.text), Paste: true}
}

// nothingPasted says why ctrl+v pasted nothing. A clipboard program that
// fails (xclip with no display to read from, or an empty clipboard) gives
// only its exit status; the first line it printed says why.
func nothingPasted(err error) string {
	msg := err.Error()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		msg = "the clipboard program failed (" + msg + ")"
		if line, _, _ := strings.Cut(strings.TrimSpace(string(exit.Stderr)), "\n"); line != "" {
			msg = "the clipboard program said: " + strings.TrimSpace(line)
		}
	}
	return "Nothing pasted: " + safe.Text(format.OneLine(msg, 200))
}
