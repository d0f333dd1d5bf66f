package enginetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"
)

// ScriptRules are the "rules" and "default" of a stand-in's script file;
// each stand-in's script embeds it beside its own keys (models, windows,
// flavour). In JSON:
//
//	"rules": [                                 // tried in order; first match answers
//	  {"when": {"user_says": "% of"},
//	   "reply": [{"think": "A percentage."},
//	             {"tool_call": {"name": "calculator", "arguments": {"expression": "15/100*340"}}}]},
//	  {"when": {"tool_result": "calculator"},
//	   "reply": [{"text": "15% of 340 is 51."}], "chunk_delay": "40ms"}
//	],
//	"default": {"reply": [{"text": "I only know the demo questions."}]}
//
// "when" keys (all given must match; none = every call): user_says,
// user_matches (regexp), question_contains, tool_result (tool name, ""
// for any), tool_result_contains, turn, model, offers_tool, no_tools,
// system_contains, endpoint, streaming.
//
// Reply steps, one key each: {"text": S}, {"chunks": [S...]}, {"think":
// S}, {"raw": S} and {"raw_chunks": [S...]} (the model's own text, see
// Raw), {"tool_call": {"name": N, "arguments": {...} or "JSON text", "id":
// S, "pieces": N}} ("id" absent: generated; "": none), {"tool_calls":
// [call, ...]}, {"error": {"status": 500, "message": S}} (or "body": S,
// sent as is), {"delay": "250ms"}, {"disconnect": true}, {"hang": true},
// {"flood": N}.
//
// Rule options besides "when" and "reply": "times", "chunk_delay" (a Go
// duration), "disconnect_after" (chunks), "finish_reason", "usage"
// ({"prompt_tokens", "completion_tokens", "reasoning_tokens",
// "total_duration", "load_duration", "prompt_duration", "eval_duration"};
// durations as Go durations), "no_usage", "reasoning_field".
type ScriptRules struct {
	Rules   []RuleFile `json:"rules"`
	Default *RuleFile  `json:"default"`
}

// Build makes the rules and the default (nil when the script has none).
func (sr ScriptRules) Build() (rules []*Rule, fallback *Rule, err error) {
	for i, rf := range sr.Rules {
		r, err := rf.build()
		if err != nil {
			return nil, nil, fmt.Errorf("rule %d: %w", i+1, err)
		}
		rules = append(rules, r)
	}
	if sr.Default != nil {
		if fallback, err = sr.Default.build(); err != nil {
			return nil, nil, fmt.Errorf("default: %w", err)
		}
	}
	return rules, fallback, nil
}

// RuleFile is one rule of a script.
type RuleFile struct {
	When            whenFile   `json:"when"`
	Reply           []stepFile `json:"reply"`
	Times           int        `json:"times"`
	ChunkDelay      Duration   `json:"chunk_delay"`
	DisconnectAfter int        `json:"disconnect_after"`
	FinishReason    string     `json:"finish_reason"`
	Usage           *usageFile `json:"usage"`
	NoUsage         bool       `json:"no_usage"`
	ReasoningField  string     `json:"reasoning_field"`
}

type whenFile struct {
	UserSays           string  `json:"user_says"`
	UserMatches        string  `json:"user_matches"`
	QuestionContains   string  `json:"question_contains"`
	ToolResult         *string `json:"tool_result"`
	ToolResultContains string  `json:"tool_result_contains"`
	Turn               int     `json:"turn"`
	Model              string  `json:"model"`
	OffersTool         string  `json:"offers_tool"`
	NoTools            bool    `json:"no_tools"`
	SystemContains     string  `json:"system_contains"`
	Endpoint           string  `json:"endpoint"`
	Streaming          *bool   `json:"streaming"`
}

type stepFile struct {
	Text       *string    `json:"text"`
	Chunks     []string   `json:"chunks"`
	Think      *string    `json:"think"`
	Raw        *string    `json:"raw"`
	RawChunks  []string   `json:"raw_chunks"`
	ToolCall   *callFile  `json:"tool_call"`
	ToolCalls  []callFile `json:"tool_calls"`
	Error      *errorFile `json:"error"`
	Delay      *Duration  `json:"delay"`
	Disconnect bool       `json:"disconnect"`
	Hang       bool       `json:"hang"`
	Flood      int        `json:"flood"`
}

type callFile struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	ID        *string         `json:"id"`
	Pieces    int             `json:"pieces"`
}

type errorFile struct {
	Status  int     `json:"status"`
	Message string  `json:"message"`
	Body    *string `json:"body"`
}

type usageFile struct {
	PromptTokens     int      `json:"prompt_tokens"`
	CompletionTokens int      `json:"completion_tokens"`
	ReasoningTokens  int      `json:"reasoning_tokens"`
	TotalDuration    Duration `json:"total_duration"`
	LoadDuration     Duration `json:"load_duration"`
	PromptDuration   Duration `json:"prompt_duration"`
	EvalDuration     Duration `json:"eval_duration"`
}

// Duration is a Go duration string ("40ms") in a script.
type Duration time.Duration

// UnmarshalJSON reads "250ms", "1.5s" and the like; a negative duration is
// an error.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration must be a string such as \"250ms\", got %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("invalid duration %q (use a form such as \"250ms\" or \"1.5s\")", s)
	}
	*d = Duration(v)
	return nil
}

// ReadScript reads a script file and parses it with the stand-in's
// parser; errors name the file.
func ReadScript[S any](path string, parse func([]byte) (S, error)) (S, error) {
	var zero S
	data, err := os.ReadFile(path)
	if err != nil {
		return zero, fmt.Errorf("read script: %w", err)
	}
	sc, err := parse(data)
	if err != nil {
		return zero, fmt.Errorf("script %s: %w", path, err)
	}
	return sc, nil
}

// DecodeScript reads a script file's JSON into v strictly: unknown keys
// are errors (a typo must not silently change a demo), and every error
// says its line.
func DecodeScript(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return locate(data, dec, err)
	}
	return nil
}

// locate prefixes a decode error with its line.
func locate(data []byte, dec *json.Decoder, err error) error {
	off := dec.InputOffset()
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
	}
	off = min(max(off, 0), int64(len(data)))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	return fmt.Errorf("line %d: %s", line, strings.TrimPrefix(err.Error(), "json: "))
}

// EntryName names the i-th entry of a script's list in an error:
// `model 2 (qwen3)`.
func EntryName(kind string, i int, name string) string {
	if strings.TrimSpace(name) == "" {
		return fmt.Sprintf("%s %d", kind, i+1)
	}
	return fmt.Sprintf("%s %d (%s)", kind, i+1, name)
}

func (rf RuleFile) build() (*Rule, error) {
	when, err := rf.When.matchers()
	if err != nil {
		return nil, err
	}
	if len(rf.Reply) == 0 {
		return nil, errors.New(`"reply" needs at least one step`)
	}
	r := &Rule{
		when:            when,
		times:           rf.Times,
		chunkDelay:      time.Duration(rf.ChunkDelay),
		disconnectAfter: rf.DisconnectAfter,
		finishReason:    rf.FinishReason,
		noUsage:         rf.NoUsage,
		reasoningField:  rf.ReasoningField,
	}
	if u := rf.Usage; u != nil {
		r.usage = &Usage{
			PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, ReasoningTokens: u.ReasoningTokens,
			TotalDuration: time.Duration(u.TotalDuration), LoadDuration: time.Duration(u.LoadDuration),
			PromptDuration: time.Duration(u.PromptDuration), EvalDuration: time.Duration(u.EvalDuration),
		}
	}
	for i, sf := range rf.Reply {
		st, err := sf.build()
		if err != nil {
			return nil, fmt.Errorf("reply step %d: %w", i+1, err)
		}
		r.steps = append(r.steps, st)
	}
	return r, nil
}

func (w whenFile) matchers() ([]Matcher, error) {
	var ms []Matcher
	add := func(set bool, m func() Matcher) {
		if set {
			ms = append(ms, m())
		}
	}
	add(w.UserSays != "", func() Matcher { return UserSays(w.UserSays) })
	if w.UserMatches != "" {
		re, err := regexp.Compile(w.UserMatches)
		if err != nil {
			return nil, fmt.Errorf("user_matches: %w", err)
		}
		ms = append(ms, userMatches(re))
	}
	add(w.QuestionContains != "", func() Matcher { return QuestionContains(w.QuestionContains) })
	add(w.ToolResult != nil, func() Matcher { return ToolResult(*w.ToolResult) })
	add(w.ToolResultContains != "", func() Matcher { return ToolResultContains("", w.ToolResultContains) })
	add(w.Turn != 0, func() Matcher { return Turn(w.Turn) })
	add(w.Model != "", func() Matcher { return ModelIs(w.Model) })
	add(w.OffersTool != "", func() Matcher { return OffersTool(w.OffersTool) })
	add(w.NoTools, NoTools)
	add(w.SystemContains != "", func() Matcher { return SystemContains(w.SystemContains) })
	if w.Endpoint != "" {
		if !strings.HasPrefix(w.Endpoint, "/") {
			return nil, fmt.Errorf(`endpoint must be a path such as "/api/chat" or "/v1/chat/completions", not %q`, w.Endpoint)
		}
		ms = append(ms, Endpoint(w.Endpoint))
	}
	add(w.Streaming != nil, func() Matcher { return Streaming(*w.Streaming) })
	return ms, nil
}

const stepKeys = "text, chunks, think, raw, raw_chunks, tool_call, tool_calls, error, delay, disconnect, hang, flood"

func (sf stepFile) build() (Step, error) {
	var steps []Step
	add := func(set bool, st func() Step) {
		if set {
			steps = append(steps, st())
		}
	}
	add(sf.Text != nil, func() Step { return Text(*sf.Text) })
	add(sf.Chunks != nil, func() Step { return TextChunks(sf.Chunks...) })
	add(sf.Think != nil, func() Step { return Think(*sf.Think) })
	add(sf.Raw != nil, func() Step { return Raw(*sf.Raw) })
	add(sf.RawChunks != nil, func() Step { return RawChunks(sf.RawChunks...) })
	if sf.ToolCall != nil {
		c, err := sf.ToolCall.build()
		if err != nil {
			return Step{}, fmt.Errorf("tool_call: %w", err)
		}
		steps = append(steps, Step{kind: stepToolCalls, calls: []ScriptedCall{c}})
	}
	if sf.ToolCalls != nil {
		if len(sf.ToolCalls) == 0 {
			return Step{}, errors.New("tool_calls needs at least one call")
		}
		st := Step{kind: stepToolCalls}
		for i, cf := range sf.ToolCalls {
			c, err := cf.build()
			if err != nil {
				return Step{}, fmt.Errorf("tool_calls[%d]: %w", i, err)
			}
			st.calls = append(st.calls, c)
		}
		steps = append(steps, st)
	}
	if sf.Error != nil {
		e := sf.Error
		if e.Status < 400 || e.Status > 599 {
			return Step{}, fmt.Errorf("error status must be from 400 to 599, not %d", e.Status)
		}
		switch {
		case e.Body != nil && e.Message != "":
			return Step{}, errors.New(`error takes "message" (sent in the server's error shape) or "body" (sent as is), not both`)
		case e.Body != nil:
			steps = append(steps, ErrorBody(e.Status, *e.Body))
		default:
			steps = append(steps, Error(e.Status, e.Message))
		}
	}
	add(sf.Delay != nil, func() Step { return Delay(time.Duration(*sf.Delay)) })
	add(sf.Disconnect, Disconnect)
	add(sf.Hang, Hang)
	if sf.Flood < 0 {
		return Step{}, errors.New("flood must be a positive number of tokens")
	}
	add(sf.Flood > 0, func() Step { return Flood(sf.Flood) })
	if len(steps) != 1 {
		return Step{}, fmt.Errorf("a step has exactly one of %s (this one has %d)", stepKeys, len(steps))
	}
	return steps[0], nil
}

func (cf callFile) build() (ScriptedCall, error) {
	if cf.Name == "" {
		return ScriptedCall{}, errors.New(`"name" is required`)
	}
	raw := bytes.TrimSpace(cf.Arguments)
	// Arguments may also be given as a string holding the JSON object,
	// the way OpenAI-style APIs carry them.
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return ScriptedCall{}, err
		}
		raw = bytes.TrimSpace([]byte(s))
	}
	if string(raw) == "null" {
		raw = nil
	}
	if len(raw) > 0 && !isObject(string(raw)) {
		return ScriptedCall{}, fmt.Errorf("arguments must be a JSON object, not %s", raw)
	}
	if cf.Pieces < 0 {
		return ScriptedCall{}, fmt.Errorf("pieces must be a positive number, not %d", cf.Pieces)
	}
	c := ScriptedCall{Name: cf.Name, Arguments: string(raw), Pieces: cf.Pieces}
	if cf.ID != nil {
		c.ID, c.HasID = *cf.ID, true
	}
	return c, nil
}
