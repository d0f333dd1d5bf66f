package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/internal/lazyregexp"
	"github.com/jarvis-workbench/jarvis/tools"
)

// reactAgent drives tools through a text protocol, for models without native
// function calling.
type reactAgent struct{ loop }

func (a *reactAgent) Name() string { return ReAct }

// reactProtocol is the part of the system prompt that teaches the format;
// the tool section (BuildToolDescriptions) goes before it.
const reactProtocol = `To use a tool, answer in exactly this format:

Thought: what you need to do next and why
Action: the tool name, one of [%s]
Action Input: the tool's arguments as one JSON object

Then stop: the result comes back to you as "Observation: ...". Never write an Observation yourself. Repeat Thought / Action / Action Input as needed. When you know the answer, write:

Thought: I know the final answer
Final Answer: the answer for the user

If no tool is needed, go straight to Final Answer.`

// ReActSystemPrompt builds react's system prompt for the given tools; it is
// exported so the TUI can show exactly what the model is told.
func ReActSystemPrompt(system string, executor *tools.Executor) string {
	var b strings.Builder
	if system == "" {
		system = DefaultSystemPrompt
	}
	b.WriteString(system)
	b.WriteString("\n\n## Available Tools\n\n")
	var names []string
	if executor != nil {
		b.WriteString(executor.Describe(true, false))
		for _, s := range executor.AvailableTools() {
			names = append(names, s.Name)
		}
	} else {
		b.WriteString(tools.NoToolsText)
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, reactProtocol, strings.Join(names, ", "))
	return b.String()
}

var (
	finalRe  = lazyregexp.New(`(?is)Final Answer\s*:\s*(.*)$`)
	actionRe = lazyregexp.New(`(?im)^\s*Action\s*:\s*(.+?)\s*$`)
	inputRe  = lazyregexp.New(`(?is)Action Input\s*:\s*(.*)$`)
	obsRe    = lazyregexp.New(`(?im)^\s*Observation\s*:`)
)

func (a *reactAgent) Run(ctx context.Context, conv *Conversation, input string) (*Result, error) {
	return a.Answer(ctx, conv, Input{Text: input})
}

func (a *reactAgent) Answer(ctx context.Context, conv *Conversation, in Input) (*Result, error) {
	return a.run(ctx, conv, in, true)
}

func (a *reactAgent) run(ctx context.Context, conv *Conversation, in Input, appendInput bool) (*Result, error) {
	r, err := a.begin(ctx, conv, in, appendInput)
	if err != nil {
		return r.finish(err)
	}
	return a.steps(r)
}

// steps runs the protocol's turns on r, a run that is begun: a new one, or
// an orchestrator run that found out its model has no native tools.
func (a *reactAgent) steps(r *run) (*Result, error) {
	system := ReActSystemPrompt(a.cfg.System, a.cfg.Executor)
	var guard loopGuard
	calls := 0
	for r.result.Turns < a.cfg.MaxTurns {
		resp, err := r.turn(system, nil)
		if err != nil {
			r.keepPartial(resp)
			if cerr := r.cancelled(); cerr != nil {
				return r.finish(cerr)
			}
			return r.finish(err)
		}
		text := resp.Message.Content
		// A model that writes its own Observation is inventing a result:
		// keep only what comes before it.
		if loc := obsRe().FindStringIndex(text); loc != nil {
			text = strings.TrimRight(text[:loc[0]], " \n")
		}
		step := parseReAct(text)
		usage := resp.Usage
		r.append(engine.Message{Role: engine.RoleAssistant, Content: text, Thinking: resp.Message.Thinking}, &usage, nil)
		if step.final != "" || step.action == "" {
			r.result.Content = step.final
			if step.final == "" {
				r.result.Content = strings.TrimSpace(text)
			}
			return r.finish(nil)
		}
		calls++
		call := engine.ToolCall{ID: fmt.Sprintf("react_%d", calls), Name: step.action, Arguments: a.arguments(step)}
		if looping, hit := guard.repeated([]engine.ToolCall{call}); hit {
			r.stop(StopLoop, loopNotice(looping.Name))
			return r.finish(nil)
		}
		r.runTools([]engine.ToolCall{call}, true)
		if err := r.cancelled(); err != nil {
			return r.finish(err)
		}
	}
	r.stop(StopMaxTurns, maxTurnsNotice(a.cfg.MaxTurns))
	return r.finish(nil)
}

type reactStep struct {
	action, input, final string
}

// parseReAct reads one reply of the protocol. A Final Answer wins over an
// action written after it; an Action without input gets "{}".
func parseReAct(text string) reactStep {
	var s reactStep
	if m := finalRe().FindStringSubmatch(text); m != nil {
		if a := actionRe().FindStringIndex(text); a == nil || a[0] > strings.Index(strings.ToLower(text), "final answer") {
			s.final = strings.TrimSpace(m[1])
			return s
		}
	}
	if m := actionRe().FindStringSubmatch(text); m != nil {
		s.action = strings.Trim(strings.TrimSpace(m[1]), "`\"'[]")
		if in := inputRe().FindStringSubmatch(text); in != nil {
			s.input = strings.TrimSpace(in[1])
		}
	}
	return s
}

// arguments turns an Action Input into a JSON object: it strips code
// fences, keeps the first JSON object, and wraps a bare value for a tool
// whose only required parameter is a string (models often write
// `Action Input: 2+2` for the calculator).
func (a *reactAgent) arguments(s reactStep) string {
	in := strings.TrimSpace(s.input)
	in = strings.TrimPrefix(in, "```json")
	in = strings.TrimPrefix(in, "```")
	in = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(in), "```"))
	if in == "" {
		return "{}"
	}
	if start := strings.IndexByte(in, '{'); start >= 0 {
		dec := json.NewDecoder(strings.NewReader(in[start:]))
		var obj map[string]any
		if dec.Decode(&obj) == nil {
			b, _ := json.Marshal(obj)
			return string(b)
		}
	}
	if a.cfg.Executor != nil {
		if spec, ok := a.cfg.Executor.Spec(s.action); ok && spec.Parameters != nil && len(spec.Parameters.Required) == 1 {
			name := spec.Parameters.Required[0]
			if p := spec.Parameters.Properties[name]; p != nil && p.Type == "string" {
				b, _ := json.Marshal(map[string]string{name: strings.Trim(in, "\"'")})
				return string(b)
			}
		}
	}
	return in // not JSON: the executor explains that to the model
}
