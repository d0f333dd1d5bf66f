package tools

import (
	"fmt"
	"strings"

	"github.com/jarvis-workbench/jarvis/internal/lazyregexp"
)

// toolName is what a tool that is not built in may be called: what models
// accept as a function name (OpenAI's rule is [A-Za-z0-9_-]{1,64}),
// starting with a letter so it reads as a name, and at most
// maxToolNameLen long. The length is checked apart: a counted repetition
// compiles to one copy of the class per count, 60 KB that every command
// built at start-up.
var toolName = lazyregexp.New(`^[A-Za-z][A-Za-z0-9_-]*$`)

const maxToolNameLen = 64

// mcpSeparator joins an MCP server's name and its tool's (tools/mcp); a
// name holding it would be taken for a server's tool.
const mcpSeparator = "__"

// CheckName reports whether name may name a tool a program registers or a
// command tool from the config: letters, digits, '_' and '-', starting
// with a letter, at most 64 characters, and without "__", which names the
// tools of MCP servers (SERVER__TOOL). Clashes with other tools are the
// caller's to check: only it knows which exist.
func CheckName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("a tool needs a name")
	case strings.Contains(name, mcpSeparator):
		return fmt.Errorf("%q contains %q, which names the tools of MCP servers (SERVER__TOOL); choose a name without it", name, mcpSeparator)
	case len(name) > maxToolNameLen || !toolName().MatchString(name):
		return fmt.Errorf("%q cannot name a tool: use letters, digits, '_' and '-', starting with a letter, at most 64 characters (models accept no other function names)", name)
	}
	return nil
}
