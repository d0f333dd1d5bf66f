package tui

import (
	"sort"
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textarea"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jarvis-workbench/jarvis/ui/tui/routed"
)

// historySize bounds the prompt history kept in memory.
const historySize = 500

// inputBox is the prompt: a multi-line textarea where enter sends and
// alt+enter (or ctrl+j) breaks the line, with history on up/down and
// completion of slash commands on tab.
type inputBox struct {
	ta      textarea.Model
	width   int // what the textarea was given, its prompt included
	history []string
	histPos int    // len(history) when not browsing
	draft   string // what was typed before browsing history
}

func newInputBox() *inputBox { return &inputBox{ta: newTextarea()} }

func newTextarea() textarea.Model {
	ta := textarea.New()
	ta.Placeholder = "Ask anything · / for commands · ? for keys"
	ta.ShowLineNumbers = false
	ta.SetPromptFunc(2, func(line int) string {
		if line == 0 {
			return "› "
		}
		return "  "
	})
	ta.CharLimit = 0
	ta.MaxHeight = 0
	ta.SetHeight(3)
	// No blinking: a blinking cursor redraws the screen twice a second,
	// and an idle jarvis should cost nothing.
	ta.Cursor.SetMode(cursor.CursorStatic)
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("alt+enter", "ctrl+j"))
	ta.FocusedStyle.CursorLine = ta.FocusedStyle.Base
	ta.Focus()
	return ta
}

func (in *inputBox) value() string { return in.ta.Value() }

func (in *inputBox) setWidth(w int) {
	in.width = w
	in.ta.SetWidth(w)
}

func (in *inputBox) set(s string) {
	in.ta.SetValue(s)
	in.ta.CursorEnd()
	in.settle()
}

// reset empties the prompt. It starts a new textarea rather than
// emptying this one: a textarea keeps the wrapping of every line it
// showed, every state of every prompt typed, up to 10,000 of them.
func (in *inputBox) reset() {
	h, focused := in.ta.Height(), in.ta.Focused()
	in.ta = newTextarea()
	in.ta.SetWidth(in.width)
	in.ta.SetHeight(h)
	if !focused {
		in.ta.Blur()
	}
	in.histPos = len(in.history)
}

// remember adds a sent prompt to the history (no immediate repeats).
func (in *inputBox) remember(s string) {
	if s == "" || len(in.history) > 0 && in.history[len(in.history)-1] == s {
		in.histPos = len(in.history)
		return
	}
	in.history = append(in.history, s)
	if len(in.history) > historySize {
		in.history = in.history[len(in.history)-historySize:]
	}
	in.histPos = len(in.history)
}

// historyUp shows the previous prompt; it only acts when the cursor is on
// the first line, so up still moves within a multi-line prompt.
func (in *inputBox) historyUp() bool {
	if in.ta.Line() > 0 || len(in.history) == 0 || in.histPos == 0 {
		return false
	}
	if in.histPos == len(in.history) {
		in.draft = in.ta.Value()
	}
	in.histPos--
	in.set(in.history[in.histPos])
	return true
}

func (in *inputBox) historyDown() bool {
	if in.ta.Line() < in.ta.LineCount()-1 || in.histPos >= len(in.history) {
		return false
	}
	in.histPos++
	if in.histPos == len(in.history) {
		in.set(in.draft)
	} else {
		in.set(in.history[in.histPos])
	}
	return true
}

func (in *inputBox) update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyMsg); ok && k.String() == "ctrl+v" {
		return forInput(readClipboard) // the model takes its result (clipboardMsg)
	}
	var cmd tea.Cmd
	before := in.shape()
	in.ta, cmd = in.ta.Update(msg)
	if in.shape() != before {
		in.settle()
	}
	return forInput(cmd)
}

// inputResult is what a command of the prompt's text area produced (the
// text of ctrl+v, read from the system clipboard), on its way back to the
// prompt: the text area's messages are of its own unexported types, and
// untagged the side pane got them.
type inputResult struct{ msg tea.Msg }

func forInput(cmd tea.Cmd) tea.Cmd {
	return routed.Tag(cmd, func(msg tea.Msg) tea.Msg { return inputResult{msg} })
}

// settle scrolls the prompt to its cursor. The textarea scrolls in
// Update, measured against the lines it drew last: after a paste of many
// lines, or a long prompt set at once, it stayed on the first lines with
// the cursor below them until the next key. Drawing it once gives it the
// new lines, and an empty update then scrolls to the cursor.
func (in *inputBox) settle() {
	in.ta.View()
	in.ta, _ = in.ta.Update(nil)
}

// shape is what the prompt's scrolling depends on: its lines, and the
// cursor's line and row. A key that changes none of them (a letter typed
// inside a row) needs no settle, which costs a drawing of the prompt.
func (in *inputBox) shape() [4]int {
	li := in.ta.LineInfo()
	return [4]int{in.ta.LineCount(), in.ta.Line(), li.Height, li.RowOffset}
}

// complete completes the slash command or its argument under the cursor,
// returning the candidates (for the suggestion line) after completing as
// far as they agree.
func (in *inputBox) complete(candidates func(cmd string, arg string) []string) []string {
	v := in.ta.Value()
	if !strings.HasPrefix(v, "/") || strings.Contains(v, "\n") {
		return nil
	}
	name, arg, hasArg := strings.Cut(v, " ")
	var opts []string
	prefix := name
	if !hasArg {
		for _, c := range commands {
			if strings.HasPrefix("/"+c.name, name) {
				opts = append(opts, "/"+c.name)
			}
		}
	} else {
		// Complete the last comma-separated part of the argument.
		done, last := "", arg
		if i := strings.LastIndex(arg, ","); i >= 0 {
			done, last = arg[:i+1], arg[i+1:]
		}
		for _, c := range candidates(strings.TrimPrefix(name, "/"), last) {
			if strings.HasPrefix(c, last) {
				opts = append(opts, c)
			}
		}
		prefix = last
		if len(opts) == 1 {
			in.set(name + " " + done + opts[0])
			return opts
		}
		if common := commonPrefix(opts); len(common) > len(prefix) {
			in.set(name + " " + done + common)
		}
		sort.Strings(opts)
		return opts
	}
	sort.Strings(opts)
	if len(opts) == 1 {
		in.set(opts[0] + " ")
	} else if common := commonPrefix(opts); len(common) > len(prefix) {
		in.set(common)
	}
	return opts
}

func commonPrefix(s []string) string {
	if len(s) == 0 {
		return ""
	}
	p := s[0]
	for _, x := range s[1:] {
		for !strings.HasPrefix(x, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}
