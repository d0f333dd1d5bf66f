package agent

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/tools"
)

// The model's view of a conversation is a first-class thing with one
// owner, ModelView. It knows the window in force, counts what each part
// of the next request costs, cuts tool results that would crowd the
// window (for the model only: the person and the session keep them
// whole), and says when older turns must be compacted. Every agent, the
// TUI, `ask`, the scheduler and evals read it from here; none computes
// its own.
//
// A model server left to itself cuts a conversation that outgrows the
// window silently, from the front; jarvis asks it not to (truncate and
// shift false, see engine/ollama) and never sends a request it knows does
// not fit. So the window must be known: the one the person set, else the
// one the server loaded the model with, else the smaller of the model's
// maximum and DefaultWindow. It is sent as num_ctx on every request, so
// the server never reloads the model with another one behind the person's
// back.

// DefaultWindow is the window used when neither the person nor the
// server says otherwise (and the most a model is given unasked: a larger
// window costs memory the machine may not have).
const DefaultWindow = 4096

// Defaults of ViewOptions.
const (
	DefaultResultShare = 0.25
	DefaultCompactAt   = 0.85
	// defaultReply is the reply reserve when num_predict is not set.
	defaultReply = 1024
)

// ViewOptions configure a ModelView. Zero values mean the defaults.
type ViewOptions struct {
	// NumCtx is the window the person set (config, --num-ctx, /ctx); 0
	// asks the server.
	NumCtx int
	// NumCtxSource says where NumCtx came from, for the Context tab.
	NumCtxSource string
	// ResultShare is the share of the window one tool result may take
	// in what the model reads (DefaultResultShare).
	ResultShare float64
	// CompactAt is the share of the window above which older turns are
	// compacted before a request (DefaultCompactAt).
	CompactAt float64
	// NumPredict is the reply limit the model runs with (options
	// num_predict); the budget keeps room for it.
	NumPredict int
}

// Window is the context window a conversation runs with.
type Window struct {
	Tokens int `json:"tokens"`
	// Source says how it was chosen, in words.
	Source string `json:"source"`
	// ModelMax is the model's own maximum (0 unknown).
	ModelMax int `json:"model_max,omitempty"`
}

// ModelView is the model's side of one conversation (or of a process's
// conversations with one server). It is safe for concurrent use.
type ModelView struct {
	eng  engine.InferenceEngine
	opts ViewOptions

	mu     sync.Mutex
	model  string
	window Window
	// ratio is, per model, server tokens per estimated token, learnt from
	// prompt_eval_count.
	ratio map[string]float64
	// toolTokens caches the estimate of each tool definition.
	toolTokens map[string]int
	// cuts remembers how each oversized result was cut (see cutFor).
	cuts map[cutKey]string
	// rendered holds tools' costs measured on the server's rendering (see
	// MeasureToolCosts).
	rendered map[renderedKey]int
	// families caches each model's family, which sets what an image
	// costs it (asked only once a request carries images).
	families map[string]string
	last     *Budget
}

// NewModelView returns a view for conversations with model on eng.
func NewModelView(eng engine.InferenceEngine, model string, opts ViewOptions) *ModelView {
	if opts.ResultShare <= 0 || opts.ResultShare > 1 {
		opts.ResultShare = DefaultResultShare
	}
	if opts.CompactAt <= 0 || opts.CompactAt > 1 {
		opts.CompactAt = DefaultCompactAt
	}
	return &ModelView{eng: eng, opts: opts, model: model, ratio: map[string]float64{}, toolTokens: map[string]int{}, families: map[string]string{}, cuts: map[cutKey]string{}, rendered: map[renderedKey]int{}}
}

// Options returns the view's options.
func (v *ModelView) Options() ViewOptions {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.opts
}

// SetModel switches the view to another model; its window is found again.
func (v *ModelView) SetModel(model string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if model != v.model {
		v.model, v.window, v.last = model, Window{}, nil
	}
}

// SetNumCtx sets the window the person asked for (0: ask the server
// again). It reports whether the window changes: the server then reloads
// the model with it, which takes a moment, and the person should be told.
func (v *ModelView) SetNumCtx(n int, source string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	changed := v.window.Tokens != 0 && n != 0 && n != v.window.Tokens
	v.opts.NumCtx, v.opts.NumCtxSource = n, source
	v.window = Window{}
	if n > 0 {
		v.window = Window{Tokens: n, Source: source}
	}
	return changed
}

// SetNumPredict changes the reply reserve.
func (v *ModelView) SetNumPredict(n int) {
	v.mu.Lock()
	v.opts.NumPredict = n
	v.mu.Unlock()
}

// Window returns the window in force, finding it on first use.
func (v *ModelView) Window(ctx context.Context) (Window, error) {
	v.mu.Lock()
	w, model, opts := v.window, v.model, v.opts
	v.mu.Unlock()
	if w.Tokens > 0 {
		return w, nil
	}
	w, err := resolveWindow(ctx, v.eng, model, opts)
	if err != nil {
		return Window{}, err
	}
	v.mu.Lock()
	if v.model == model && v.window.Tokens == 0 {
		v.window = w
	}
	w = v.window
	v.mu.Unlock()
	return w, nil
}

// resolveWindow finds the window: the person's, else the one the server
// loaded the model with, else min(the model's maximum, DefaultWindow).
func resolveWindow(ctx context.Context, eng engine.InferenceEngine, model string, opts ViewOptions) (Window, error) {
	var max int
	if d, ok := eng.(engine.Describer); ok {
		details, err := d.Show(ctx, model)
		switch {
		case err == nil:
			max = details.ContextLength
		case errors.Is(err, engine.ErrUnreachable), ctx.Err() != nil:
			if opts.NumCtx == 0 {
				return Window{}, err
			}
		}
	}
	if opts.NumCtx > 0 {
		src := opts.NumCtxSource
		if src == "" {
			src = "set in the configuration (num_ctx)"
		}
		if max > 0 && opts.NumCtx > max {
			// The server caps a window at the model's own maximum: count
			// with the window the model really gets.
			return Window{Tokens: max, ModelMax: max, Source: fmt.Sprintf("%s as %s tokens, capped at the model's maximum", src, groupDigits(opts.NumCtx))}, nil
		}
		return Window{Tokens: opts.NumCtx, Source: src, ModelMax: max}, nil
	}
	if l, ok := eng.(engine.LoadLister); ok {
		if loaded, err := l.Loaded(ctx); err == nil {
			for _, m := range loaded {
				if m.ContextLength > 0 && engine.SameModel(m.Name, model) {
					return Window{Tokens: m.ContextLength, Source: "the window the server loaded the model with", ModelMax: max}, nil
				}
			}
		} else if errors.Is(err, engine.ErrUnreachable) {
			return Window{}, err
		}
	}
	if max > 0 && max < DefaultWindow {
		return Window{Tokens: max, Source: "the model's own maximum", ModelMax: max}, nil
	}
	src := fmt.Sprintf("jarvis's default (%s tokens)", groupDigits(DefaultWindow))
	if max > 0 {
		src = fmt.Sprintf("jarvis's default: the model allows %s tokens, raise it with /ctx or num_ctx", groupDigits(max))
	}
	return Window{Tokens: DefaultWindow, Source: src, ModelMax: max}, nil
}

// Part is one item of a request, with what it costs.
type Part struct {
	// Kind is PartSystem, PartTool, PartMessage, PartResult or PartReply.
	Kind string `json:"kind"`
	// Name is the tool's name (tools, results) or the message's role.
	Name string `json:"name"`
	// Index is the message's position in the conversation (-1 for the
	// system prompt, tools and the reply).
	Index  int `json:"index"`
	Tokens int `json:"tokens"`
	// Cut is set when a tool result was shortened for the model.
	Cut bool `json:"cut,omitempty"`
	// Images counts the images the message carries (their cost is in
	// Tokens).
	Images int `json:"images,omitempty"`
}

// Kinds of Part.
const (
	PartSystem  = "system"
	PartTool    = "tool"
	PartMessage = "message"
	PartResult  = "result"
	PartReply   = "reply"
)

// Budget is what the next request costs, part by part, in calibrated
// tokens.
type Budget struct {
	Model  string `json:"model"`
	Window Window `json:"window"`
	Parts  []Part `json:"-"`
	// Totals by kind.
	System  int `json:"system"`
	Tools   int `json:"tools"`
	History int `json:"history"`
	Results int `json:"results"`
	Reply   int `json:"reply"`
	// ImageTokens is the part of History spent on images.
	ImageTokens int `json:"image_tokens,omitempty"`
	// Prompt is the whole request without the reply reserve.
	Prompt int `json:"prompt"`
	// Ratio is the calibration in use: server tokens per estimated token.
	Ratio      float64 `json:"ratio"`
	Calibrated bool    `json:"calibrated"`
	// CutResults counts the tool results shortened for the model.
	CutResults int `json:"cut_results"`
	raw        int // the prompt's uncalibrated estimate
}

// Used is the share of the window the prompt and the reply reserve take.
func (b Budget) Used() float64 {
	if b.Window.Tokens == 0 {
		return 0
	}
	return float64(b.Prompt+b.Reply) / float64(b.Window.Tokens)
}

// Fits reports whether the request and its reply reserve fit the window.
func (b Budget) Fits() bool { return b.Prompt+b.Reply <= b.Window.Tokens }

// Biggest returns the n costliest messages and results.
func (b Budget) Biggest(n int) []Part {
	var items []Part
	for _, p := range b.Parts {
		if p.Kind == PartMessage || p.Kind == PartResult {
			items = append(items, p)
		}
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].Tokens > items[j].Tokens })
	return items[:min(n, len(items))]
}

// ToolCosts returns the cost of each tool definition, costliest first.
func (b Budget) ToolCosts() []Part {
	var out []Part
	for _, p := range b.Parts {
		if p.Kind == PartTool {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Tokens > out[j].Tokens })
	return out
}

// Request is what Prepare builds a request from.
type Request struct {
	System   string
	Tools    []engine.ToolDef
	Messages []engine.Message
	Options  engine.Options
}

// Prepare builds the chat request the model will receive for conv: the
// system prompt, the messages with oversized tool results cut for the
// model, and num_ctx set to the window. It returns the request's budget;
// it does not decide about compaction (see Budget.Used).
func (v *ModelView) Prepare(ctx context.Context, in Request) (engine.ChatRequest, Budget, error) {
	w, err := v.Window(ctx)
	if err != nil {
		return engine.ChatRequest{}, Budget{}, err
	}
	v.mu.Lock()
	model, opts := v.model, v.opts
	ratio, calibrated := v.ratio[model]
	v.mu.Unlock()
	if !calibrated {
		ratio = uncalibratedRatio
	}
	b := Budget{Model: model, Window: w, Ratio: ratio, Calibrated: calibrated}
	scale := func(raw int) int { return int(math.Ceil(float64(raw) * ratio)) }

	msgs := make([]engine.Message, 0, len(in.Messages)+1)
	if in.System != "" {
		msgs = append(msgs, engine.Message{Role: engine.RoleSystem, Content: in.System})
		raw := estimateMessage(msgs[0])
		b.raw += raw
		b.Parts = append(b.Parts, Part{Kind: PartSystem, Name: "system prompt", Index: -1, Tokens: scale(raw)})
	}
	for _, d := range in.Tools {
		raw := v.toolEstimate(d)
		b.raw += raw
		b.Parts = append(b.Parts, Part{Kind: PartTool, Name: d.Name, Index: -1, Tokens: scale(raw)})
	}
	limit := int(float64(w.Tokens) * opts.ResultShare)
	for i, m := range in.Messages {
		kind, name := PartMessage, m.Role
		if isResult(m) {
			kind, name = PartResult, m.ToolName
			if name == "" {
				name = "observation"
			}
		}
		raw := estimateMessage(m)
		cut := false
		if kind == PartResult && scale(raw) > limit {
			m.Content = v.cutFor(m, limit, ratio, w.Tokens)
			raw, cut = estimateMessage(m), true
			b.CutResults++
		}
		if images := v.imagesEstimate(ctx, model, m); images > 0 {
			raw += images
			b.ImageTokens += scale(images)
		}
		msgs = append(msgs, m)
		b.raw += raw
		b.Parts = append(b.Parts, Part{Kind: kind, Name: name, Index: i, Tokens: scale(raw), Cut: cut, Images: len(m.Images)})
	}
	b.Reply = opts.NumPredict
	if b.Reply <= 0 {
		b.Reply = min(defaultReply, w.Tokens/4)
	}
	for _, p := range b.Parts {
		switch p.Kind {
		case PartSystem:
			b.System += p.Tokens
		case PartTool:
			b.Tools += p.Tokens
		case PartMessage:
			b.History += p.Tokens
		case PartResult:
			b.Results += p.Tokens
		}
	}
	b.Prompt = scale(b.raw)
	o := in.Options
	o.NumCtx = w.Tokens
	req := engine.ChatRequest{Model: model, Messages: msgs, Tools: in.Tools, Options: o}
	v.mu.Lock()
	last := b
	v.last = &last
	v.mu.Unlock()
	return req, b, nil
}

// cutFor returns m's content cut for the model. A result is cut once and
// the same way from then on (until the window changes): the calibration
// moves after the first reply, and a cut that moved with it would change
// the prompt's prefix and void the server's cache every turn.
func (v *ModelView) cutFor(m engine.Message, limit int, ratio float64, window int) string {
	key := cutKey{window: window, id: m.ToolCallID, size: len(m.Content), sum: crc32.ChecksumIEEE([]byte(m.Content))}
	v.mu.Lock()
	cut, ok := v.cuts[key]
	v.mu.Unlock()
	if ok {
		return cut
	}
	cut = cutResult(m, limit, ratio)
	v.mu.Lock()
	if len(v.cuts) >= maxCuts {
		clear(v.cuts)
	}
	v.cuts[key] = cut
	v.mu.Unlock()
	return cut
}

// cutKey identifies a result and the window it was cut for.
type cutKey struct {
	window int
	id     string
	size   int
	sum    uint32
}

// maxCuts bounds the remembered cuts (a long session's results).
const maxCuts = 4096

// isResult reports whether m carries a tool's result: a tool message, or
// the text protocol's Observation.
func isResult(m engine.Message) bool {
	return m.Role == engine.RoleTool || m.Role == engine.RoleUser && strings.HasPrefix(m.Content, observationPrefix)
}

// observationPrefix starts a react tool result.
const observationPrefix = "Observation: "

func (v *ModelView) toolEstimate(d engine.ToolDef) int {
	key := toolKey(d)
	v.mu.Lock()
	n, ok := v.rendered[renderedKey{model: v.model, tool: key}]
	if !ok {
		n, ok = v.toolTokens[key]
	}
	v.mu.Unlock()
	if ok {
		return n
	}
	n = EstimateTokens(toolJSON(d)) + messageOverhead
	v.mu.Lock()
	v.toolTokens[key] = n
	v.mu.Unlock()
	return n
}

// Observe calibrates the estimate for the model: promptTokens is what the
// server counted for the request whose budget is b. prompt_eval_count is
// the whole prompt every turn (also when the server reused its cache), so
// one turn calibrates.
func (v *ModelView) Observe(b Budget, promptTokens int) {
	if promptTokens <= 0 || b.raw <= 0 {
		return
	}
	r := float64(promptTokens) / float64(b.raw)
	if r < 0.2 || r > 5 {
		// Not the same request (a server that counts differently, or a
		// cut it made after all): do not learn from it.
		return
	}
	v.mu.Lock()
	v.ratio[b.Model] = r
	v.mu.Unlock()
}

// uncalibratedRatio pads the estimate until the model's first reply
// calibrates it: overestimating costs a compaction a little early,
// underestimating a refused request.
const uncalibratedRatio = 1.2

// Underestimated records that the server refused a request whose
// estimate fit the window: the real count is above the window, so the
// ratio is raised to at least window/estimate, with a margin. It reports
// whether the ratio changed (and a retry can fit).
func (v *ModelView) Underestimated(b Budget) bool {
	if b.raw <= 0 || b.Window.Tokens <= 0 {
		return false
	}
	floor := float64(b.Window.Tokens) / float64(b.raw) * 1.1
	v.mu.Lock()
	defer v.mu.Unlock()
	r, ok := v.ratio[b.Model]
	if !ok {
		r = uncalibratedRatio
	}
	next := max(r*1.25, floor)
	if next > 5 {
		return false
	}
	v.ratio[b.Model] = next
	return true
}

// Ratio returns the model's calibration and whether it was learnt.
func (v *ModelView) Ratio(model string) (float64, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r, ok := v.ratio[model]
	if !ok {
		return uncalibratedRatio, false
	}
	return r, true
}

// Last returns the budget of the last request prepared, if any.
func (v *ModelView) Last() (Budget, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.last == nil {
		return Budget{}, false
	}
	b := *v.last
	b.Parts = slices.Clone(b.Parts)
	return b, true
}

// Model returns the model the view is for.
func (v *ModelView) Model() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.model
}

// groupDigits writes n with thousands separators.
func groupDigits(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + groupDigits(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// NextRequest is what the named agent would send next for msgs: its
// system prompt and, for orchestrator, its tools as definitions (react
// describes them in its system prompt instead). The Context tab and
// /compact use it, so they count what the agent really sends.
func NextRequest(name string, cfg Config, msgs []engine.Message) Request {
	l := &loop{cfg: cfg, name: name}
	in := Request{System: l.systemPrompt(), Messages: msgs, Options: cfg.Options}
	switch name {
	case ReAct:
		in.System = ReActSystemPrompt(cfg.System, cfg.Executor)
	case Orchestrator:
		in.Tools = l.toolDefs()
	}
	return in
}

// ToolDefs returns the definitions of an executor's tools, as orchestrator
// offers them to the model.
func ToolDefs(exec *tools.Executor) []engine.ToolDef {
	return (&loop{cfg: Config{Executor: exec}}).toolDefs()
}

// ToolTokens estimates, in calibrated tokens, what each tool costs in the
// prompt when offered as a definition.
func (v *ModelView) ToolTokens(defs []engine.ToolDef) map[string]int {
	v.mu.Lock()
	ratio, ok := v.ratio[v.model]
	v.mu.Unlock()
	if !ok {
		ratio = uncalibratedRatio
	}
	out := make(map[string]int, len(defs))
	for _, d := range defs {
		out[d.Name] = int(math.Ceil(float64(v.toolEstimate(d)) * ratio))
	}
	return out
}
