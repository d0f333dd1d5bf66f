package tui

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// externalEditor is the person's editor: $VISUAL, else $EDITOR. It is a
// command line, run through the shell as git does (EDITOR="code --wait"
// works; on Windows, which has no sh, its words are run as they are),
// with the files to edit as its last arguments. Both the question
// (/edit) and a call's arguments (e in the approval dialog) open in it.
type externalEditor struct {
	command string // as the variable holds it
	from    string // the variable: "VISUAL" or "EDITOR"
}

// findEditor returns the editor the environment names, if any.
func findEditor() (externalEditor, bool) {
	for _, v := range []string{"VISUAL", "EDITOR"} {
		if s := strings.TrimSpace(os.Getenv(v)); s != "" {
			return externalEditor{command: s, from: v}, true
		}
	}
	return externalEditor{}, false
}

// String names the editor in messages: its command and where it was set.
func (e externalEditor) String() string { return e.command + " ($" + e.from + ")" }

// missing says which command is not installed when the editor's program
// cannot be found: run anyway, the shell would print "not found" on the
// screen the workbench is about to draw over, and the person would see
// only a failure.
func (e externalEditor) missing() error {
	name := e.program()
	if name == "" {
		return nil
	}
	if _, err := exec.LookPath(name); err != nil {
		return fmt.Errorf("the editor in $%s is not installed: the command %q was not found (%s). Set $%s to an editor you have (nano, vim, code --wait), or unset $VISUAL and $EDITOR to edit here",
			e.from, name, lookFailure(name, err), e.from)
	}
	return nil
}

// program is the command's program when the shell would read the first
// word as it is written; "" when it would change it (quotes, variables,
// an assignment), and only running it can tell.
func (e externalEditor) program() string {
	f := strings.Fields(e.command)
	if len(f) == 0 || strings.ContainsAny(f[0], "'\"$`\\=(){};&|<>*?[]") {
		return ""
	}
	name := f[0]
	if rest, ok := strings.CutPrefix(name, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		name = filepath.Join(home, rest)
	}
	return name
}

// lookFailure says where a program was looked for.
func lookFailure(name string, err error) string {
	switch {
	case strings.Contains(name, "/") && errors.Is(err, os.ErrNotExist):
		return "no such file"
	case strings.Contains(name, "/"):
		return "it is not an executable file"
	}
	return "not in any directory of $PATH"
}

// cmd runs the editor on the files at paths.
func (e externalEditor) cmd(paths ...string) *exec.Cmd {
	if runtime.GOOS == "windows" {
		// No sh: the command's words as they are, then the files.
		f := strings.Fields(e.command)
		return exec.Command(f[0], append(f[1:], paths...)...)
	}
	return exec.Command("sh", append([]string{"-c", e.command + ` "$@"`, "editor"}, paths...)...)
}

// failed says how a run of the editor failed. The shell exits 127 for a
// command it did not find and 126 for one it could not run, having said
// so on a screen that is gone by now.
func (e externalEditor) failed(err error) string {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		switch exit.ExitCode() {
		case 127:
			return fmt.Sprintf("the editor in $%s could not be started: the shell found no command in %q", e.from, e.command)
		case 126:
			return fmt.Sprintf("the editor in $%s could not be started: the shell could not run %q (not executable)", e.from, e.command)
		}
	}
	return fmt.Sprintf("the editor %s failed: %v", e, err)
}
