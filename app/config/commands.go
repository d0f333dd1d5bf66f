package config

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/jarvis-workbench/jarvis/tools/command"
)

// checkCommands checks the [[commands]] entries and keeps them compiled
// (CommandTools): each is a valid command whose name is no other tool's
// (built in, registered by the program, or another command's). A problem
// is reported at the line of the setting at fault.
func checkCommands(c *Config, r *report) {
	c.commands = nil
	seen := map[string]int{}
	for i, s := range c.Commands {
		at := c.commandLines(i)
		cmd, err := command.Compile(s)
		if err != nil {
			var se *command.SpecError
			if errors.As(err, &se) {
				c.commandProblem(r, s, at, se.Key, se.Msg)
			} else {
				c.commandProblem(r, s, at, "", err.Error())
			}
			continue
		}
		if slices.Contains(c.builtinTools, s.Name) {
			c.commandProblem(r, s, at, "name", fmt.Sprintf("%q is already a tool's name (built in, or registered by the program); choose another", s.Name))
			continue
		}
		if first, dup := seen[s.Name]; dup {
			c.commandProblem(r, s, at, "name", fmt.Sprintf("the name %q is already used by the command at line %d", s.Name, first))
			continue
		}
		seen[s.Name] = at.entry
		c.commands = append(c.commands, cmd)
	}
}

// CommandTools are the [[commands]] entries, checked and ready to
// register as tools, in the file's order.
func (c *Config) CommandTools() []*command.Command { return slices.Clip(c.commands) }

// commandNames are the names of the [[commands]] entries.
func (c *Config) commandNames() []string {
	out := make([]string, 0, len(c.Commands))
	for _, s := range c.Commands {
		if s.Name != "" {
			out = append(out, s.Name)
		}
	}
	return out
}

func (c *Config) commandProblem(r *report, s command.Spec, at commandLines, key, msg string) {
	k := "commands"
	if s.Name != "" {
		k = "commands " + s.Name
	}
	if key != "" {
		k += "." + key
	}
	r.problems = append(r.problems, Problem{Path: c.path, Line: at.of(key), Key: k, Msg: msg})
}

// commandLines finds an entry's settings in the file, so an error points
// at the line to fix: the entry's [[commands]] header, its keys, and its
// [commands.parameters.NAME] tables.
type commandLines struct {
	lines []string
	// entry is the header's line (1-based; 0: not found), end the line
	// after the entry's last.
	entry, end int
}

func (c *Config) commandLines(i int) commandLines {
	at := commandLines{lines: c.fileLines()}
	n := 0
	for no, line := range at.lines {
		name, array, ok := tableHeader(line)
		if !ok {
			continue
		}
		if at.entry > 0 {
			// The entry ends at the next [[commands]], or at a table
			// that is not one of its own.
			if array && name == "commands" || name != "commands" && !strings.HasPrefix(name, "commands.") {
				at.end = no
				return at
			}
			continue
		}
		if array && name == "commands" {
			if n == i {
				at.entry = no + 1
			}
			n++
		}
	}
	at.end = len(at.lines)
	return at
}

// of is the line of key ("argv[2]", "parameters.word.type") in the entry,
// else the entry's header.
func (at commandLines) of(key string) int {
	if at.entry == 0 || key == "" {
		return at.entry
	}
	key, _, _ = strings.Cut(key, "[") // argv[2]: the argv line
	table, field := "commands", key
	if rest, ok := strings.CutPrefix(key, "parameters."); ok {
		param, sub, _ := strings.Cut(rest, ".")
		table, field = "commands.parameters."+param, sub
		if line := at.keyIn(table, field); line > 0 {
			return line
		}
		// Written inline (parameters = { word = {...} }) or the table
		// itself is at fault.
		if line := at.keyIn(table, ""); line > 0 {
			return line
		}
		if line := at.keyIn("commands", "parameters"); line > 0 {
			return line
		}
		return at.entry
	}
	if line := at.keyIn(table, field); line > 0 {
		return line
	}
	return at.entry
}

// keyIn finds field in the entry's table named table (its header's line
// when field is "").
func (at commandLines) keyIn(table, field string) int {
	in := table == "commands"
	re := regexp.MustCompile(`^\s*"?` + regexp.QuoteMeta(field) + `"?\s*=`)
	for no := at.entry; no < at.end && no < len(at.lines); no++ {
		line := at.lines[no]
		if name, _, ok := tableHeader(line); ok {
			in = name == table
			if in && field == "" {
				return no + 1
			}
			continue
		}
		if in && field != "" && re.MatchString(line) {
			return no + 1
		}
	}
	return 0
}

// tableHeader reads a line that opens a table: its dotted name without
// quotes or spaces, and whether it is an array entry ([[...]]).
func tableHeader(line string) (name string, array, ok bool) {
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "[") {
		return "", false, false
	}
	array = strings.HasPrefix(t, "[[")
	closer := "]"
	if array {
		closer = "]]"
		t = t[2:]
	} else {
		t = t[1:]
	}
	end := strings.Index(t, closer)
	if end < 0 {
		return "", false, false
	}
	var b strings.Builder
	for _, part := range strings.Split(t[:end], ".") {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(strings.Trim(strings.TrimSpace(part), `"'`))
	}
	return b.String(), array, true
}

// fileLines are the config file's lines (none when no file was read).
func (c *Config) fileLines() []string {
	if c.path == "" {
		return nil
	}
	data, err := os.ReadFile(c.path)
	if err != nil {
		return nil
	}
	return strings.Split(string(data), "\n")
}
