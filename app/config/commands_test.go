package config

import (
	"errors"
	"strings"
	"testing"
)

const grepNotes = `model = "qwen3"

[[commands]]
name = "grep_notes"
description = "Search my notes for a word; prints matching lines."
argv = ["grep", "-rin", "{word}", "~/notes"]
success_codes = [0, 1]
[commands.parameters.word]
type = "string"
description = "The word to look for"
required = true

[[ commands ]]   # a second one
name = "today"
description = "Print the date."
argv = ["date", "+%F"]
confirm = false

[tool.grep_notes]
timeout = 10
`

func TestCommandsAreReadCheckedAndCompiled(t *testing.T) {
	clearEnv(t)
	c, err := Load(Flags{ConfigPath: writeConfig(t, grepNotes), ToolNames: []string{"calculator", "think"}})
	if err != nil {
		t.Fatal(err)
	}
	cmds := c.CommandTools()
	if len(cmds) != 2 || cmds[0].Spec().Name != "grep_notes" || cmds[1].Spec().Name != "today" {
		t.Fatalf("commands: %+v", c.Commands)
	}
	if p := c.Commands[0].Parameters["word"]; !p.Required || p.Description != "The word to look for" {
		t.Fatalf("parameter: %+v", p)
	}
	// [tool.NAME] may name a command.
	if *c.Tool["grep_notes"].TimeoutSeconds != 10 {
		t.Fatalf("tool settings: %+v", c.Tool)
	}
}

// Each bad entry is an error at the line to fix.
func TestBadCommandsAreFileErrorsAtTheirLine(t *testing.T) {
	clearEnv(t)
	cases := []struct {
		name, body, key, msg string
		line                 int
	}{
		{"unknown parameter in argv", `
[[commands]]
name = "grep_notes"
description = "Search."
argv = ["grep", "{wrod}", "~/notes"]
[commands.parameters.word]
description = "w"
`, "commands grep_notes.argv[1]", "did you mean {word}", 5},
		{"placeholder split across elements", `
[[commands]]
name = "grep_notes"
description = "Search."
argv = [
  "grep",
  "{wo", "rd}",
]
[commands.parameters.word]
description = "w"
`, "commands grep_notes.argv[1]", "does not close", 5},
		{"missing program", `
model = "m"

[[commands]]
name = "first"
description = "d"
argv = ["date"]

[[commands]]
name = "second"
description = "d"
argv = ["no-such-program-for-jarvis"]
`, "commands second.argv[0]", "not on PATH", 12},
		{"bad type", `
[[commands]]
name = "grep_notes"
description = "Search."
argv = ["grep", "{word}"]

[commands.parameters.word]
description = "w"
type = "text"   # not a type
`, "commands grep_notes.parameters.word.type", `unknown type "text"`, 9},
		{"name of a built-in tool", `
[[commands]]
name = "calculator"
description = "d"
argv = ["bc"]
`, "commands calculator.name", "already a tool's name", 3},
		{"MCP-style name", `
[[commands]]
description = "d"
name = "notes__grep"
argv = ["grep"]
`, "commands notes__grep.name", "MCP", 4},
		{"two commands with one name", `
[[commands]]
name = "today"
description = "d"
argv = ["date"]

[[commands]]
name = "today"
description = "d"
argv = ["date"]
`, "commands today.name", "already used by the command at line 2", 8},
		{"unknown key", `
[[commands]]
name = "today"
description = "d"
argv = ["date"]
shell = true
`, "commands[0].shell", "unknown setting", 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeConfig(t, c.body)
			_, err := Load(Flags{ConfigPath: path, ToolNames: []string{"calculator", "think"}})
			var ps Problems
			if !errors.As(err, &ps) || len(ps) != 1 {
				t.Fatalf("err = %v, want one problem", err)
			}
			fe := ps[0]
			if fe.Path != path || fe.Line != c.line || fe.Key != c.key || !strings.Contains(fe.Msg, c.msg) {
				t.Fatalf("got %s:%d key %q %q\nwant line %d key %q with %q", fe.Path, fe.Line, fe.Key, fe.Msg, c.line, c.key, c.msg)
			}
			if !strings.Contains(err.Error(), path+":") {
				t.Fatalf("the message does not name the file and line: %v", err)
			}
		})
	}
}

func TestToolSettingsMustNameATool(t *testing.T) {
	clearEnv(t)
	_, err := Load(Flags{ConfigPath: writeConfig(t, grepNotes+"\n[tool.grep_note]\nconfirm = true\n"), ToolNames: []string{"calculator"}})
	if err == nil || !strings.Contains(err.Error(), "grep_notes") {
		t.Fatalf("err = %v: a setting for a misspelt command must be refused, listing the commands", err)
	}
}
