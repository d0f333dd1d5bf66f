package engine

import (
	"errors"
	"strconv"
	"strings"
)

// The layers below the front ends say what to do about a problem, never
// which key or flag does it: "use the react agent", not "--agent react",
// which would tell a program using the SDK to type a flag. Advice names a
// person's control with a placeholder, {{NAME}} or {{NAME ARG}}, and each
// front end renders it with its own Controls: the command line writes
// "--agent react", the workbench "/agent react", Plain (what Error
// returns, and what the SDK gives) says it in words.
//
// Each renders as the phrase its sentence expects:
//
//	use {{agent NAME}}                   the react agent (--agent react)
//	pick another with {{model}}          --model
//	see {{models}}                       'jarvis models'
//	raise the window ({{window N}})      --num-ctx N, or num_ctx in the config
//	turn tools off ({{tools}})           --tools
//	point jarvis at it with {{host}}     --host
//	download it ({{pull MODEL}})         jarvis models pull MODEL
//	compact it ({{compact}}), start a new one ({{new}}),
//	turn thinking off ({{think}}), allow more turns ({{turns}})

// Controls name a front end's controls for the placeholders. A nil field
// falls back to Plain's words.
type Controls struct {
	Agent  func(name string) string
	Model  func() string
	Models func() string
	Window func(n int) string
	Tools  func() string
	Host   func() string
	Pull   func(model string) string
	// Compact, New and Think: compacting the conversation, starting a
	// new one, turning thinking off; Turns: allowing a run more turns.
	Compact, New, Think, Turns func() string
}

// Plain says every control in words, for whoever has no keys or flags of
// their own (a Go program through the SDK): the settings by their names in
// the configuration.
var Plain = Controls{
	Agent:   func(name string) string { return "the " + name + " agent" },
	Model:   func() string { return "the model setting" },
	Models:  func() string { return "the server's list of models" },
	Window:  func(int) string { return "the num_ctx setting" },
	Tools:   func() string { return "the tools setting" },
	Host:    func() string { return "the host setting" },
	Pull:    func(model string) string { return "ollama pull " + model },
	Compact: func() string { return "compaction in the workbench" },
	New:     func() string { return "a new conversation" },
	Think:   func() string { return "think = \"false\" in the configuration" },
	Turns:   func() string { return "the max_turns setting" },
}

// Say renders the placeholders of s with c.
func Say(s string, c Controls) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteString(c.control(s[i+2 : i+j]))
		s = s[i+j+2:]
	}
}

// control renders one placeholder's inside ("agent react").
func (c Controls) control(p string) string {
	name, arg, _ := strings.Cut(strings.TrimSpace(p), " ")
	pick := func(f, plain func() string) string {
		if f != nil {
			return f()
		}
		return plain()
	}
	switch name {
	case "agent":
		if c.Agent != nil {
			return c.Agent(arg)
		}
		return Plain.Agent(arg)
	case "window":
		n, _ := strconv.Atoi(arg)
		if c.Window != nil {
			return c.Window(n)
		}
		return Plain.Window(n)
	case "pull":
		if c.Pull != nil {
			return c.Pull(arg)
		}
		return Plain.Pull(arg)
	case "model":
		return pick(c.Model, Plain.Model)
	case "models":
		return pick(c.Models, Plain.Models)
	case "tools":
		return pick(c.Tools, Plain.Tools)
	case "host":
		return pick(c.Host, Plain.Host)
	case "compact":
		return pick(c.Compact, Plain.Compact)
	case "new":
		return pick(c.New, Plain.New)
	case "think":
		return pick(c.Think, Plain.Think)
	case "turns":
		return pick(c.Turns, Plain.Turns)
	}
	return "{{" + p + "}}"
}

// Advised is implemented by errors whose message holds placeholders:
// Advice is the message before rendering; Error renders it with Plain.
type Advised interface {
	error
	Advice() string
}

// Explain is err's message with its advice in c's words: the message of
// every Advised error in err's chain rendered with c instead of Plain.
func Explain(err error, c Controls) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	for e := err; e != nil; {
		if a, ok := e.(Advised); ok {
			msg = strings.Replace(msg, Say(a.Advice(), Plain), Say(a.Advice(), c), 1)
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			e = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, inner := range u.Unwrap() {
				if inner != nil && !errors.Is(inner, ErrUnreachable) {
					msg = explainInner(msg, inner, c)
				}
			}
			e = nil
		default:
			e = nil
		}
	}
	return msg
}

func explainInner(msg string, err error, c Controls) string {
	var a Advised
	if errors.As(err, &a) {
		return strings.Replace(msg, Say(a.Advice(), Plain), Say(a.Advice(), c), 1)
	}
	return msg
}
