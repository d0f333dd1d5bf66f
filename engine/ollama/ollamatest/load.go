package ollamatest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
)

// Script is a set of models and rules loaded from a file; Use applies it to
// a server. The file is JSON:
//
//	{
//	  "version": "0.17.4",                       // optional: /api/version
//	  "default_context_length": 4096,            // optional: window without num_ctx
//	  "keep_alive": "5m",                        // optional: how long models stay loaded
//	  "no_render": false,                        // optional: true ignores _debug_render_only
//	  "models": [                                // what /api/tags and /api/show know
//	    {"name": "qwen3:8b", "capabilities": ["completion", "tools", "thinking"],
//	     "size": 5225388164, "family": "qwen3", "parameter_size": "8.2B",
//	     "quantization": "Q4_K_M", "context_length": 40960}
//	  ],
//	  "pullable": [                              // obtainable with /api/pull
//	    {"name": "llama3.2:1b", "layers": [1321082688, 7711], "interval": "20ms"}
//	  ],
//	  "rules": [                                 // tried in order; first match answers
//	    {"when": {"user_says": "% of"},
//	     "reply": [{"think": "A percentage."},
//	               {"tool_call": {"name": "calculator", "arguments": {"expression": "15/100*340"}}}]},
//	    {"when": {"tool_result": "calculator"},
//	     "reply": [{"text": "15% of 340 is 51."}], "chunk_delay": "40ms"}
//	  ],
//	  "default": {"reply": [{"text": "I only know the demo questions."}]}
//	}
//
// "when" keys (all given must match; none = every request): user_says,
// user_matches (regexp), question_contains, tool_result (tool name, "" for
// any), tool_result_contains, turn, model, offers_tool, no_tools,
// system_contains, endpoint ("/api/chat" or "/api/generate").
//
// Reply steps, one key each: {"text": S}, {"chunks": [S...]}, {"think": S},
// {"tool_call": {"name": N, "arguments": {...} or "JSON text", "id": S}}
// ("id" absent: generated; "": none), {"tool_calls": [call, ...]} (one
// chunk), {"error": {"status": 500, "message": S}} (or "body": S, sent
// as is instead of as {"error": S}), {"delay": "250ms"},
// {"disconnect": true}, {"hang": true}, {"flood": N}.
//
// Model keys besides those above: "embedding_length", "modified_at",
// "template" ("json", "names" or Go template text; see Render),
// "parameters" (an object; num_ctx and num_predict there are the model's
// defaults), "no_render", "load_time" (Go duration) and "prompt_rate"
// (tokens per second). A "pullable" entry takes the same keys plus
// "layers" (sizes in bytes), "steps", "interval" (Go duration) and
// "error" (see PullSpec).
//
// Rule options besides "when" and "reply": "times" (uses before the rule
// stops matching), "chunk_delay" (Go duration), "disconnect_after"
// (chunks), "done_reason", "metrics" (the final chunk's metrics as on the
// wire: total_duration, load_duration, prompt_eval_count,
// prompt_eval_duration, eval_count, eval_duration; durations in ns).
// Unknown keys are errors, so a typo does not silently change a demo.
type Script struct {
	Version string
	// DefaultContextLength, KeepAlive and NoRender are the server-wide
	// settings (see SetDefaultContextLength, SetKeepAlive and
	// SetRenderSupport); zero values leave the server's as they are.
	DefaultContextLength int
	KeepAlive            *time.Duration
	NoRender             bool
	Models               []ModelSpec
	Pullable             []PullableModel
	Rules                []*Rule
	Fallback             *Rule
}

// PullableModel is a model a script makes available to /api/pull.
type PullableModel struct {
	Model ModelSpec
	Pull  PullSpec
}

// Use adds a script's models and rules to the server (after any it has)
// and, when the script has them, sets the default reply, the version and
// the server-wide settings.
func (s *Server) Use(sc *Script) {
	for _, m := range sc.Models {
		s.AddModel(m)
	}
	for _, p := range sc.Pullable {
		s.Pullable(p.Model, p.Pull)
	}
	if sc.DefaultContextLength > 0 {
		s.SetDefaultContextLength(sc.DefaultContextLength)
	}
	if sc.KeepAlive != nil {
		s.SetKeepAlive(*sc.KeepAlive)
	}
	if sc.NoRender {
		s.SetRenderSupport(false)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sc.Version != "" {
		s.version = sc.Version
	}
	for _, r := range sc.Rules {
		s.rules = append(s.rules, r)
		r.mu.Lock()
		r.label = fmt.Sprintf("rule %d", len(s.rules))
		r.mu.Unlock()
	}
	if sc.Fallback != nil {
		s.fallback = sc.Fallback
	}
}

// ListenAndServe runs a server with script on addr until ctx ends, calling
// ready with its URL once it accepts connections (ready may be nil).
func ListenAndServe(ctx context.Context, addr string, script *Script, ready func(url string)) error {
	s, err := Listen(addr, script)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(s.URL)
	}
	<-ctx.Done()
	s.Close()
	return nil
}

// LoadScript reads a script file.
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read script: %w", err)
	}
	sc, err := ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("script %s: %w", path, err)
	}
	return sc, nil
}

type scriptFile struct {
	Version              string         `json:"version"`
	DefaultContextLength int            `json:"default_context_length"`
	KeepAlive            *string        `json:"keep_alive"`
	NoRender             bool           `json:"no_render"`
	Models               []modelFile    `json:"models"`
	Pullable             []pullableFile `json:"pullable"`
	Rules                []ruleFile     `json:"rules"`
	Default              *ruleFile      `json:"default"`
}

// modelFile is a ModelSpec with its durations written as Go durations.
type modelFile struct {
	ModelSpec
	LoadTime *duration `json:"load_time"`
}

func (mf modelFile) spec() (ModelSpec, error) {
	m := mf.ModelSpec
	if strings.TrimSpace(m.Name) == "" {
		return m, errors.New("a name is required")
	}
	if m.ContextLength < 0 {
		return m, fmt.Errorf("context_length must be a positive number of tokens, not %d", m.ContextLength)
	}
	if m.PromptRate < 0 {
		return m, fmt.Errorf("prompt_rate must be a positive number of tokens per second, not %g", m.PromptRate)
	}
	if mf.LoadTime != nil {
		m.LoadTime = time.Duration(*mf.LoadTime)
	}
	// Parse the template now, so a broken one is an error of the file.
	if _, err := completeSpec(m, time.Time{}); err != nil {
		return m, err
	}
	return m, nil
}

type pullableFile struct {
	modelFile
	PullSpec
	Interval *duration `json:"interval"`
}

type ruleFile struct {
	When            whenFile     `json:"when"`
	Reply           []stepFile   `json:"reply"`
	Times           int          `json:"times"`
	ChunkDelay      duration     `json:"chunk_delay"`
	DisconnectAfter int          `json:"disconnect_after"`
	DoneReason      string       `json:"done_reason"`
	Metrics         *api.Metrics `json:"metrics"`
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
}

type stepFile struct {
	Text       *string    `json:"text"`
	Chunks     []string   `json:"chunks"`
	Think      *string    `json:"think"`
	ToolCall   *callFile  `json:"tool_call"`
	ToolCalls  []callFile `json:"tool_calls"`
	Error      *errorFile `json:"error"`
	Delay      *duration  `json:"delay"`
	Disconnect bool       `json:"disconnect"`
	Hang       bool       `json:"hang"`
	Flood      int        `json:"flood"`
}

type callFile struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	ID        *string         `json:"id"`
}

type errorFile struct {
	Status  int     `json:"status"`
	Message string  `json:"message"`
	Body    *string `json:"body"`
}

// duration is a Go duration string ("40ms") in JSON.
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration must be a string such as \"250ms\", got %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("invalid duration %q (use a form such as \"250ms\" or \"1.5s\")", s)
	}
	*d = duration(v)
	return nil
}

// entryName names the i-th entry of a list in an error: `model 2 ("qwen3")`.
func entryName(kind string, i int, name string) string {
	if strings.TrimSpace(name) == "" {
		return fmt.Sprintf("%s %d", kind, i+1)
	}
	return fmt.Sprintf("%s %d (%s)", kind, i+1, name)
}

// parseKeepAlive reads keep_alive as the real server's environment
// variable: a Go duration, or a number of seconds; negative is forever.
func parseKeepAlive(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	return 0, fmt.Errorf("keep_alive %q is not a duration (use a form such as \"5m\" or \"-1\" for forever)", s)
}

// ParseScript reads a script from JSON; errors carry line numbers.
func ParseScript(data []byte) (*Script, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f scriptFile
	if err := dec.Decode(&f); err != nil {
		return nil, locate(data, dec, err)
	}
	sc := &Script{Version: f.Version, DefaultContextLength: f.DefaultContextLength, NoRender: f.NoRender}
	if f.DefaultContextLength < 0 {
		return nil, fmt.Errorf("default_context_length must be a positive number of tokens, not %d", f.DefaultContextLength)
	}
	if f.KeepAlive != nil {
		d, err := parseKeepAlive(*f.KeepAlive)
		if err != nil {
			return nil, err
		}
		sc.KeepAlive = &d
	}
	for i, mf := range f.Models {
		m, err := mf.spec()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", entryName("model", i, mf.Name), err)
		}
		sc.Models = append(sc.Models, m)
	}
	for i, pf := range f.Pullable {
		m, err := pf.spec()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", entryName("pullable model", i, pf.Name), err)
		}
		p := pf.PullSpec
		if pf.Interval != nil {
			p.Interval = time.Duration(*pf.Interval)
		}
		for _, l := range p.Layers {
			if l <= 0 {
				return nil, fmt.Errorf("%s: layer sizes must be positive numbers of bytes, not %d", entryName("pullable model", i, pf.Name), l)
			}
		}
		if p.Steps < 0 {
			return nil, fmt.Errorf("%s: steps must be positive, not %d", entryName("pullable model", i, pf.Name), p.Steps)
		}
		sc.Pullable = append(sc.Pullable, PullableModel{Model: m, Pull: p})
	}
	for i, rf := range f.Rules {
		r, err := rf.build()
		if err != nil {
			return nil, fmt.Errorf("rule %d: %w", i+1, err)
		}
		sc.Rules = append(sc.Rules, r)
	}
	if f.Default != nil {
		r, err := f.Default.build()
		if err != nil {
			return nil, fmt.Errorf("default: %w", err)
		}
		r.label = "default"
		sc.Fallback = r
	}
	return sc, nil
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
	msg := strings.TrimPrefix(err.Error(), "json: ")
	return fmt.Errorf("line %d: %s", line, msg)
}

func (rf ruleFile) build() (*Rule, error) {
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
		doneReason:      rf.DoneReason,
		metrics:         rf.Metrics,
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
	if w.UserSays != "" {
		ms = append(ms, UserSays(w.UserSays))
	}
	if w.UserMatches != "" {
		re, err := regexp.Compile(w.UserMatches)
		if err != nil {
			return nil, fmt.Errorf("user_matches: %w", err)
		}
		ms = append(ms, userMatches(re))
	}
	if w.QuestionContains != "" {
		ms = append(ms, QuestionContains(w.QuestionContains))
	}
	if w.ToolResult != nil {
		ms = append(ms, ToolResult(*w.ToolResult))
	}
	if w.ToolResultContains != "" {
		ms = append(ms, ToolResultContains("", w.ToolResultContains))
	}
	if w.Turn != 0 {
		ms = append(ms, Turn(w.Turn))
	}
	if w.Model != "" {
		ms = append(ms, ModelIs(w.Model))
	}
	if w.OffersTool != "" {
		ms = append(ms, OffersTool(w.OffersTool))
	}
	if w.NoTools {
		ms = append(ms, NoTools())
	}
	if w.SystemContains != "" {
		ms = append(ms, SystemContains(w.SystemContains))
	}
	if w.Endpoint != "" {
		if w.Endpoint != "/api/chat" && w.Endpoint != "/api/generate" {
			return nil, fmt.Errorf(`endpoint must be "/api/chat" or "/api/generate", not %q`, w.Endpoint)
		}
		ms = append(ms, Endpoint(w.Endpoint))
	}
	return ms, nil
}

const stepKeys = "text, chunks, think, tool_call, tool_calls, error, delay, disconnect, hang, flood"

func (sf stepFile) build() (Step, error) {
	var steps []Step
	if sf.Text != nil {
		steps = append(steps, Text(*sf.Text))
	}
	if sf.Chunks != nil {
		steps = append(steps, TextChunks(sf.Chunks...))
	}
	if sf.Think != nil {
		steps = append(steps, Think(*sf.Think))
	}
	if sf.ToolCall != nil {
		c, err := sf.ToolCall.build()
		if err != nil {
			return Step{}, fmt.Errorf("tool_call: %w", err)
		}
		steps = append(steps, Step{kind: stepToolCalls, calls: []callSpec{c}})
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
		if sf.Error.Status < 400 || sf.Error.Status > 599 {
			return Step{}, fmt.Errorf("error status must be from 400 to 599, not %d", sf.Error.Status)
		}
		if sf.Error.Body != nil {
			if sf.Error.Message != "" {
				return Step{}, errors.New(`error takes "message" (sent as {"error": message}) or "body" (sent as is), not both`)
			}
			steps = append(steps, ErrorBody(sf.Error.Status, *sf.Error.Body))
		} else {
			steps = append(steps, Error(sf.Error.Status, sf.Error.Message))
		}
	}
	if sf.Delay != nil {
		steps = append(steps, Delay(time.Duration(*sf.Delay)))
	}
	if sf.Disconnect {
		steps = append(steps, Disconnect())
	}
	if sf.Hang {
		steps = append(steps, Hang())
	}
	if sf.Flood < 0 {
		return Step{}, errors.New("flood must be a positive number of tokens")
	}
	if sf.Flood > 0 {
		steps = append(steps, Flood(sf.Flood))
	}
	if len(steps) != 1 {
		return Step{}, fmt.Errorf("a step has exactly one of %s (this one has %d)", stepKeys, len(steps))
	}
	return steps[0], nil
}

func (cf callFile) build() (callSpec, error) {
	if cf.Name == "" {
		return callSpec{}, errors.New(`"name" is required`)
	}
	raw := bytes.TrimSpace(cf.Arguments)
	// Arguments may also be given as a string holding the JSON object,
	// the way OpenAI-style APIs carry them.
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return callSpec{}, err
		}
		raw = []byte(s)
	}
	args := api.NewToolCallFunctionArguments()
	if len(raw) > 0 && string(raw) != "null" {
		if err := args.UnmarshalJSON(raw); err != nil {
			return callSpec{}, fmt.Errorf("arguments must be a JSON object: %w", err)
		}
	}
	c := callSpec{name: cf.Name, args: args}
	if cf.ID != nil {
		c.id, c.idSet = *cf.ID, true
	}
	return c, nil
}
