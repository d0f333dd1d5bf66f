package agent

import (
	"context"
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
	// imposed are the windows the person's settings made the server load
	// the model with, so that /ctx auto does not take one of them for
	// the server's own.
	imposed map[int]bool
	// said holds the notices given once per view (see once).
	said map[string]bool
	// reactFor holds the models the orchestrator found without native
	// tool calls: their requests are react's.
	reactFor map[string]bool
	// provisional is set while the window was chosen without the
	// server's word on the model (it was unreachable): it is looked for
	// again at the next request.
	provisional bool
}

// NewModelView returns a view for conversations with model on eng.
func NewModelView(eng engine.InferenceEngine, model string, opts ViewOptions) *ModelView {
	if opts.ResultShare <= 0 || opts.ResultShare > 1 {
		opts.ResultShare = DefaultResultShare
	}
	if opts.CompactAt <= 0 || opts.CompactAt > 1 {
		opts.CompactAt = DefaultCompactAt
	}
	return &ModelView{eng: eng, opts: opts, model: model, ratio: map[string]float64{}, toolTokens: map[string]int{}, families: map[string]string{},
		cuts: map[cutKey]string{}, rendered: map[renderedKey]int{}, imposed: map[int]bool{}, said: map[string]bool{}, reactFor: map[string]bool{}}
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
		clear(v.imposed)
	}
}

// SetNumPredict changes the reply reserve.
func (v *ModelView) SetNumPredict(n int) {
	v.mu.Lock()
	v.opts.NumPredict = n
	v.mu.Unlock()
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
	// Images counts the images the message carries, and ImageTokens
	// what they cost (it is part of Tokens).
	Images      int `json:"images,omitempty"`
	ImageTokens int `json:"image_tokens,omitempty"`
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
	Model string `json:"model"`
	// Agent is the agent whose request it is (react after orchestrator
	// fell back to it); "" when the request did not say.
	Agent  string `json:"agent,omitempty"`
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
	// Agent names the agent the request is for (see NextRequest).
	Agent    string
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
	b := Budget{Model: model, Agent: in.Agent, Window: w, Ratio: ratio, Calibrated: calibrated,
		Parts: make([]Part, 0, 1+len(in.Tools)+len(in.Messages))}
	scale := func(raw int) int { return scaled(raw, ratio) }

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
			m.Content = v.cutFor(m, limit, ratio, w.Tokens, callStartLine(in.Messages[:i], m))
			raw, cut = estimateMessage(m), true
			b.CutResults++
		}
		imageTokens := 0
		if images := v.imagesEstimate(ctx, model, m); images > 0 {
			raw += images
			imageTokens = scale(images)
			b.ImageTokens += imageTokens
		}
		msgs = append(msgs, m)
		b.raw += raw
		b.Parts = append(b.Parts, Part{Kind: kind, Name: name, Index: i, Tokens: scale(raw), Cut: cut, Images: len(m.Images), ImageTokens: imageTokens})
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
func (v *ModelView) cutFor(m engine.Message, limit int, ratio float64, window, startLine int) string {
	key := cutKey{window: window, id: m.ToolCallID, size: len(m.Content), sum: crc32.ChecksumIEEE([]byte(m.Content))}
	v.mu.Lock()
	cut, ok := v.cuts[key]
	v.mu.Unlock()
	if ok {
		return cut
	}
	cut = cutResult(m, limit, ratio, startLine)
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

// scaled is a raw estimate in calibrated tokens.
func scaled(raw int, ratio float64) int { return int(math.Ceil(float64(raw) * ratio)) }

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

// NextRequest is what the named agent would send next for msgs: its
// system prompt and, for orchestrator, its tools as definitions (react
// describes them in its system prompt instead). The Context tab and
// /compact use it, so they count what the agent really sends.
func NextRequest(name string, cfg Config, msgs []engine.Message) Request {
	l := &loop{cfg: cfg, name: name}
	in := Request{Agent: name, System: l.systemPrompt(), Messages: msgs, Options: cfg.Options}
	switch name {
	case ReAct:
		in.System = ReActSystemPrompt(cfg.System, cfg.Executor)
	case Orchestrator:
		in.Tools = l.toolDefs()
	}
	return in
}

// NextRequest is the package's NextRequest as this view's conversation
// would really send it: after orchestrator found that the model has no
// native tool calls and went on as react, its requests are react's, and
// so is what the Context tab counts and shows.
func (v *ModelView) NextRequest(name string, cfg Config, msgs []engine.Message) Request {
	if name == Orchestrator && v.FellBack(cfg.Model) {
		name = ReAct
	}
	return NextRequest(name, cfg, msgs)
}

// FellBack reports whether orchestrator went on as react for model in
// this view's conversation, because the model cannot call tools natively.
func (v *ModelView) FellBack(model string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.reactFor[model]
}

// fellBack records that orchestrator went on as react for model.
func (v *ModelView) fellBack(model string) {
	v.mu.Lock()
	v.reactFor[model] = true
	v.mu.Unlock()
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
