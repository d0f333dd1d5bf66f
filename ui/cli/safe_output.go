package cli

import (
	"github.com/spf13/cobra"

	"github.com/jarvis-workbench/jarvis/ui/safe"
)

// ownsTerminal is the annotation of the commands that draw the whole
// terminal themselves (the workbench): their output is not filtered.
const ownsTerminal = "owns-terminal"

// guardStdout makes what cmd prints on stdout safe when stdout is a
// terminal. The headless commands print text from models, tools, files,
// MCP servers and the database (answers, results, prompts, descriptions,
// error messages), and none of it may reach a terminal as an escape
// sequence; jarvis paints nothing on stdout, so everything written there
// goes through one safe.Writer, which also removes sequences split between
// writes (a streamed answer's tokens). Into a pipe or a file, output stays
// byte for byte what the command wrote.
func (a *cmdline) guardStdout(cmd *cobra.Command) {
	if cmd.Annotations[ownsTerminal] != "" || !isTerminal(a.io.Out) {
		return
	}
	a.io.Out = safe.NewWriter(a.io.Out)
}

// flushStdout writes what the guard holds back at the end: the bytes of a
// character the output stopped in the middle of.
func (a *cmdline) flushStdout() {
	if w, ok := a.io.Out.(*safe.Writer); ok {
		w.Flush()
	}
}
