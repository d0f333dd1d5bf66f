// Package enginetest is the scenario language of jarvis's stand-in model
// servers: what a scripted model says, and to which requests. Both
// stand-ins play it, each with its own wire format:
// engine/ollama/ollamatest speaks Ollama's API (and its /v1 through
// Ollama's own translation code), engine/openai/openaitest the
// OpenAI-compatible servers (llama.cpp, vLLM, LM Studio, OpenAI).
//
// A test registers rules on a stand-in; a rule is matchers (which requests
// it answers) and steps (what the model says):
//
//	srv := ollamatest.New(t)
//	srv.Model("qwen3", "completion", "tools")
//	srv.On(et.UserSays("15% of 340")).Reply(
//		et.Think("A percentage: the calculator is exact."),
//		et.ToolCall("calculator", `{"expression":"15/100*340"}`))
//	srv.On(et.ToolResult("calculator")).Reply(et.Text("15% of 340 is 51."))
//
// Rules are tried in the order they were added; the first whose matchers
// all match, and that is not used up, answers. Matchers read the request
// as a Call: the conversation, the tools offered, the model, whichever API
// carried it. Steps are played in order by the stand-in's wire encoder;
// Raw scripts what the model itself writes, which the Ollama stand-in
// turns into thinking and tool calls with Ollama's own parsers.
//
// The same rules load from JSON script files (see ScriptRules), which the
// stand-ins read as part of their own scripts.
//
// Nothing here is linked into jarvis: only tests and the stand-in command
// (cmd/jarvis-standin) import it.
package enginetest

import (
	"fmt"
	"strings"
)

// TB is the part of testing.TB the stand-ins need; *testing.T and
// *testing.B satisfy it. (An interface keeps package testing out of the
// stand-in command.)
type TB interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
}

// Call is a chat (or generate) request as a scenario reads it, whichever
// API carried it. Treat it as read-only.
type Call struct {
	// Seq is the request's place in the stand-in's record (1-based).
	Seq int
	// Path is the endpoint: "/api/chat", "/api/generate",
	// "/v1/chat/completions".
	Path  string
	Model string
	// Messages is the conversation; for /api/generate, the system prompt
	// and the prompt as a user message.
	Messages []Message
	// Tools are the names of the tools offered natively.
	Tools  []string
	Stream bool
	// Request is the stand-in's own record of the request
	// (*ollamatest.Request or *openaitest.Request), for a matcher or a
	// reply that needs what only one API carries.
	Request any
	// SameModel says whether a name the script wrote is this call's model
	// by the server's rules (Ollama: "qwen3" is "qwen3:latest"); nil
	// compares the names exactly.
	SameModel func(name string) bool
}

// Message is one message of a call's conversation.
type Message struct {
	Role     string
	Content  string
	Thinking string
	// ToolName is, for a tool result, the tool that was called: sent by
	// Ollama's clients, found from ToolCallID in OpenAI's conversations.
	ToolName   string
	ToolCallID string
	ToolCalls  []MessageCall
}

// MessageCall is a tool call in an assistant message of a conversation.
type MessageCall struct {
	ID, Name string
	// Arguments is the JSON text of the arguments.
	Arguments string
}

// Last is the conversation's last message (nil when it has none).
func (c *Call) Last() *Message {
	if len(c.Messages) == 0 {
		return nil
	}
	return &c.Messages[len(c.Messages)-1]
}

// Turn is the model turn the request asks for: 1 + the assistant
// messages already in the conversation.
func (c *Call) Turn() int {
	n := 1
	for _, m := range c.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// Offers reports whether the call offers the named tool.
func (c *Call) Offers(tool string) bool {
	for _, t := range c.Tools {
		if t == tool {
			return true
		}
	}
	return false
}

// IsModel reports whether name is the call's model.
func (c *Call) IsModel(name string) bool {
	if c.SameModel != nil {
		return c.SameModel(name)
	}
	return c.Model == name
}

// NoMatch is the stand-ins' answer when no rule matches: what was asked,
// and how to script it, so a test that forgot a rule fails saying so.
func NoMatch(server string, c *Call) string {
	return fmt.Sprintf("%s: no scripted reply matches this request (%s); add a rule with On or a reply with Default", server, c.describeLast())
}

func (c *Call) describeLast() string {
	m := c.Last()
	if m == nil {
		return "no messages"
	}
	text := m.Content
	if len(text) > 80 {
		text = text[:80] + "..."
	}
	if m.Role == "tool" {
		from := m.ToolName
		if from == "" {
			from = m.ToolCallID
		}
		return fmt.Sprintf("last message: tool result from %s: %q", from, text)
	}
	return fmt.Sprintf("last message: %s: %q", m.Role, text)
}

// containsFold reports whether s contains the lower-cased substr low.
func containsFold(s, low string) bool { return strings.Contains(strings.ToLower(s), low) }
