package tui

// command is a slash command.
type command struct {
	name, args, help string
}

// commands are the slash commands, in the order /help lists them.
var commands = []command{
	{"model", "[NAME]", "switch the model; alone, list every server's models"},
	{"pull", "NAME", "download a model (Ollama), showing its progress"},
	{"unload", "[NAME]", "free the model's memory on the server"},
	{"agent", "NAME", "switch the agent (simple, orchestrator, react)"},
	{"tools", "a,b", "set the tools the model may call (none: no tools; +a,-b: add and take away; fs__*: an MCP server's)"},
	{"new", "", "start a new session"},
	{"sessions", "[ID]", "list earlier sessions, or open one (with its model, agent and tools)"},
	{"retry", "", "ask again for the last answer (the old one stays: [ and ] flip)"},
	{"edit", "[TEXT]", "edit the last question in $EDITOR or the prompt, and ask again from it"},
	{"fork", "", "start a new session with the conversation so far (or up to the selected message)"},
	{"image", "PATH|clear", "attach an image to the next message (tab completes; ctrl+x takes off)"},
	{"clear", "", "clear the screen (the conversation goes on)"},
	{"export", "[PATH]", "write the session as markdown (no PATH: the exports directory; a file is never replaced)"},
	{"changes", "", "list the files the tools changed in this session, turn by turn, with their diffs"},
	{"undo", "[N]", "put back the files of the last change (or of turn N); refused for a file changed since"},
	{"eval", "[FILE]", "measure how well the model calls tools (built-in suite, or a suite file); esc stops"},
	{"theme", "NAME", "switch the colour theme"},
	{"copy", "", "copy the last answer to the clipboard (OSC 52)"},
	{"mouse", "", "turn mouse capture on or off (off lets you select text)"},
	{"help", "", "show keys and commands"},
	{"quit", "", "leave jarvis"},
}

// paneKeys stands in keyHelp for the side pane's tabs, which the help
// lists from the pane: each tab's F-key, name and keys.
const paneKeys = "F3…"

// keyHelp lists the keys, grouped as the help overlay shows them.
var keyHelp = [][2]string{
	{"enter", "send"},
	{"alt+enter, ctrl+j", "new line"},
	{"↑ / ↓", "prompt history (on the first / last line)"},
	{"tab", "complete a /command; on an empty prompt, focus the side pane"},
	{"esc, ctrl+c", "cancel the running turn (stream and tools stop)"},
	{"ctrl+c", "clear the prompt (no turn running)"},
	{"ctrl+p / esc", "download the model offered / stop a download"},
	{"ctrl+c twice", "quit (when idle, the prompt empty)"},
	{"pgup / pgdn", "scroll the transcript a page (the side pane when it has focus)"},
	{"ctrl+u / ctrl+d", "scroll half a page"},
	{"home / end", "top / bottom of the transcript (prompt empty)"},
	{"mouse wheel", "scroll"},
	{"F2", "mouse capture on/off (off: select text with the mouse)"},
	{"ctrl+y", "copy the last answer"},
	{"ctrl+v", "paste the system clipboard (through xclip, xsel or wl-paste)"},
	{"alt+↑ / alt+↓", "select a question or an answer: e edits, r asks again, f forks, esc ends"},
	{"[ / ]", "earlier / later attempt of the last (or selected) answer; versions of a selected question"},
	{"ctrl+x", "take off the last attached image"},
	{"ctrl+e", "expand / collapse tool panels"},
	{"ctrl+r", "show / hide thinking"},
	{"ctrl+t", "show / hide the side pane"},
	{paneKeys, ""}, // each tab of the side pane: its F-key and keys (paneHelp)
	{"?", "this help (prompt empty)"},
	{"dialog: a / s / A", "allow once / for the session / always (until revoked)"},
	{"dialog: e / r / d", "edit the arguments / deny with a reason / deny (esc denies)"},
}
