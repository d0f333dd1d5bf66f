package enginetest

import (
	"fmt"
	"regexp"
	"strings"
)

// Matcher decides whether a rule answers a call. Matchers look at the
// conversation the request carries, so a script reacts to what was sent,
// not to the order requests happen to arrive in.
type Matcher struct {
	desc  string
	match func(*Call) bool
}

// String describes the matcher, for logs and the "no rule matched" error.
func (m Matcher) String() string { return m.desc }

// Match builds a matcher from a function; desc appears in logs.
func Match(desc string, fn func(*Call) bool) Matcher {
	return Matcher{desc: desc, match: fn}
}

// UserSays matches when the call's last message is from the user and
// contains substr (case-insensitive): the user has just asked it. It does
// not match once tool results follow the question; see QuestionContains.
func UserSays(substr string) Matcher {
	low := strings.ToLower(substr)
	return Match(fmt.Sprintf("user says %q", substr), func(c *Call) bool {
		m := c.Last()
		return m != nil && m.Role == "user" && containsFold(m.Content, low)
	})
}

// UserMatches is UserSays with a regular expression (RE2 syntax, matched
// against the message as is). It panics on an invalid pattern, like
// regexp.MustCompile: a broken script should fail where it is written.
func UserMatches(pattern string) Matcher { return userMatches(regexp.MustCompile(pattern)) }

func userMatches(re *regexp.Regexp) Matcher {
	return Match(fmt.Sprintf("user matches /%s/", re), func(c *Call) bool {
		m := c.Last()
		return m != nil && m.Role == "user" && re.MatchString(m.Content)
	})
}

// QuestionContains matches when the latest user message anywhere in the
// conversation contains substr (case-insensitive), whatever followed it:
// combine it with ToolResult to answer one question's tool result and not
// another's.
func QuestionContains(substr string) Matcher {
	low := strings.ToLower(substr)
	return Match(fmt.Sprintf("question contains %q", substr), func(c *Call) bool {
		for i := len(c.Messages) - 1; i >= 0; i-- {
			if c.Messages[i].Role == "user" {
				return containsFold(c.Messages[i].Content, low)
			}
		}
		return false
	})
}

// ToolResult matches when the call's last message is a tool result from
// the named tool ("" = any tool).
func ToolResult(name string) Matcher {
	desc := "tool result"
	if name != "" {
		desc = "tool result from " + name
	}
	return Match(desc, func(c *Call) bool {
		m := c.Last()
		return m != nil && m.Role == "tool" && (name == "" || m.ToolName == name)
	})
}

// ToolResultContains is ToolResult that also requires the result to
// contain substr (case-insensitive), e.g. to answer a failed call
// differently.
func ToolResultContains(name, substr string) Matcher {
	low := strings.ToLower(substr)
	inner := ToolResult(name)
	return Match(fmt.Sprintf("%s containing %q", inner.desc, substr), func(c *Call) bool {
		return inner.match(c) && containsFold(c.Last().Content, low)
	})
}

// Turn matches the n-th model turn of a conversation (1 = no assistant
// message yet, 2 = after one assistant message, ...).
func Turn(n int) Matcher {
	return Match(fmt.Sprintf("turn %d", n), func(c *Call) bool { return c.Turn() == n })
}

// ModelIs matches calls for the named model, by the server's rules for
// names (Ollama's "qwen3" is "qwen3:latest").
func ModelIs(name string) Matcher {
	return Match("model "+name, func(c *Call) bool { return c.IsModel(name) })
}

// OffersTool matches calls that offer the named tool natively.
func OffersTool(name string) Matcher {
	return Match("offers tool "+name, func(c *Call) bool { return c.Offers(name) })
}

// NoTools matches calls that offer no native tools (a text-protocol
// agent, a plain chat, or /api/generate).
func NoTools() Matcher {
	return Match("no tools offered", func(c *Call) bool { return len(c.Tools) == 0 })
}

// SystemContains matches when a system message (or generate's system
// prompt) contains substr (case-insensitive).
func SystemContains(substr string) Matcher {
	low := strings.ToLower(substr)
	return Match(fmt.Sprintf("system prompt contains %q", substr), func(c *Call) bool {
		for _, m := range c.Messages {
			if m.Role == "system" && containsFold(m.Content, low) {
				return true
			}
		}
		return false
	})
}

// Endpoint matches calls to one endpoint: "/api/chat", "/api/generate",
// "/v1/chat/completions".
func Endpoint(path string) Matcher {
	return Match("endpoint "+path, func(c *Call) bool { return c.Path == path })
}

// Streaming matches streamed calls (true) or whole ones (false).
func Streaming(on bool) Matcher {
	return Match(fmt.Sprintf("stream %v", on), func(c *Call) bool { return c.Stream == on })
}

// Not inverts a matcher.
func Not(m Matcher) Matcher {
	return Match("not ("+m.desc+")", func(c *Call) bool { return !m.match(c) })
}

// AnyOf matches when one of ms does (the matchers given to On must all
// match).
func AnyOf(ms ...Matcher) Matcher {
	descs := make([]string, len(ms))
	for i, m := range ms {
		descs[i] = m.desc
	}
	return Match("("+strings.Join(descs, " or ")+")", func(c *Call) bool {
		for _, m := range ms {
			if m.match(c) {
				return true
			}
		}
		return false
	})
}
