package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
)

// loop is the machinery the agents share: it streams one model turn with
// its events and keeps the run's accounting.
type loop struct {
	cfg  Config
	name string
}

// run is one Run in progress.
type run struct {
	*loop
	ctx     context.Context
	info    events.RunInfo
	conv    *Conversation
	result  *Result
	started time.Time
	view    *ModelView
	// incomplete is why the last turn's reply stopped early ("" when it
	// finished); the assistant message appended for it carries it.
	incomplete string
	// window is what the last turn's request took of the window; the
	// assistant message appended for it carries it.
	window *events.ContextPayload
	// hold keeps what the run appends before its first request reaches
	// the model (its input, a compaction) from OnMessage, in pending: a
	// request refused as too big takes it all back (withdraw), so a
	// refused message leaves the conversation and the session as they
	// were (before). The first streamed word, or any other outcome,
	// releases it.
	hold    bool
	pending []Appended
	before  []engine.Message
	// compacted is set once the run compacted: at most once a run.
	compacted bool
}

// begin starts a run and takes its input (see accept). appendInput is
// false when a run continues one whose user message is already in the
// conversation (a fallback to react). On error the run is begun but
// nothing was appended: the caller finishes it with the error.
func (l *loop) begin(ctx context.Context, conv *Conversation, in Input, appendInput bool) (*run, error) {
	info := events.RunFrom(ctx)
	if info.ID == "" {
		info.ID = newRunID()
	}
	info.Agent, info.Model = l.name, l.cfg.Model
	view := l.cfg.View
	if view == nil {
		view = NewModelView(l.cfg.Engine, l.cfg.Model, ViewOptions{NumCtx: l.cfg.Options.NumCtx, NumPredict: l.cfg.Options.NumPredict})
	} else if view.Model() != l.cfg.Model {
		view.SetModel(l.cfg.Model)
	}
	r := &run{
		loop: l, ctx: events.WithRun(ctx, info), info: info, conv: conv, view: view,
		result: &Result{Model: l.cfg.Model, Agent: l.name, ToolResults: []tools.Result{}}, started: time.Now(),
	}
	text := in.Text
	if in.Again && len(conv.Messages) > 0 {
		text = conv.Messages[len(conv.Messages)-1].Content
	}
	r.publish(events.Event{Type: events.RunStart, Text: text, Turn: &events.TurnPayload{Model: l.cfg.Model}})
	r.thinkNotice()
	return r, r.accept(in, appendInput)
}

// thinkNotice says, once per view, that the server gets another think
// setting than the one asked for (a level sent as true to a model that
// takes only on or off).
func (r *run) thinkNotice() {
	ta, ok := r.cfg.Engine.(engine.ThinkAdjuster)
	if !ok || r.cfg.Options.Think == "" {
		return
	}
	if _, note := ta.ThinkFor(r.ctx, r.cfg.Model, r.cfg.Options.Think); note != "" && r.view.once("think "+r.cfg.Model+" "+r.cfg.Options.Think) {
		r.notice(note)
	}
}

// accept checks the input against the model and the conversation and
// appends it: the model must be able to chat, answering again needs a
// question to answer, and images (new or earlier in the conversation)
// need a model that reads them, which is checked before anything is
// appended or sent.
func (r *run) accept(in Input, appendInput bool) error {
	// An embedding model cannot answer: refused before anything is sent,
	// whichever front end asks. A server that does not say what the
	// model can do lets the chat go; it then says what is wrong.
	if caps, err := r.cfg.Engine.Capabilities(r.ctx, r.cfg.Model); err == nil && engine.EmbeddingOnly(caps) {
		return &engine.NotAChatModelError{Model: r.cfg.Model}
	}
	msgs := r.conv.Messages
	if in.Again {
		if n := len(msgs); n == 0 || msgs[n-1].Role != engine.RoleUser || isResult(msgs[n-1]) || strings.HasPrefix(msgs[n-1].Content, SummaryPrefix) {
			return errors.New("there is no question to answer again: the conversation does not end with one")
		}
	}
	if !in.Again && len(in.Images) > 0 || hasImages(msgs) {
		if err := CheckVision(r.ctx, r.cfg.Engine, r.cfg.Model); err != nil {
			return err
		}
	}
	if appendInput && !in.Again {
		r.before, r.hold = r.conv.Messages, true
		r.append(engine.Message{Role: engine.RoleUser, Content: in.Text, Images: in.Images}, nil, nil)
	}
	return nil
}

// record reports an appended message (or a compaction) to OnMessage, or
// keeps it while the run holds what it appended (see run.hold).
func (r *run) record(a Appended) {
	if r.hold {
		r.pending = append(r.pending, a)
		return
	}
	if r.cfg.OnMessage != nil {
		r.cfg.OnMessage(a)
	}
}

// release reports what the run held: its request reached the model.
func (r *run) release() {
	if !r.hold {
		return
	}
	r.hold = false
	for _, a := range r.pending {
		r.record(a)
	}
	r.pending = nil
}

// withdraw takes back what the run appended before a request that was
// refused as too big: the model never read it, so the conversation and
// the session stay as they were, and the caller gives the input back to
// the person (Result.Refused).
func (r *run) withdraw() {
	if !r.hold {
		return
	}
	r.hold, r.pending = false, nil
	r.conv.Messages = r.before
	r.result.Refused = true
	r.result.Context.Compacted = false
}

// append adds a message to the conversation and reports it. An
// assistant message is the last turn's reply, and says whether it stopped
// early.
func (r *run) append(m engine.Message, usage *events.Usage, res *tools.Result) {
	r.conv.Messages = append(r.conv.Messages, m)
	var incomplete string
	var window *events.ContextPayload
	if m.Role == engine.RoleAssistant {
		incomplete, r.incomplete = r.incomplete, ""
		window, r.window = r.window, nil
	}
	r.record(Appended{Message: m, Usage: usage, Result: res, Incomplete: incomplete,
		Context: window, RunSeconds: time.Since(r.started).Seconds()})
}

func (r *run) publish(e events.Event) {
	e.Run = r.info
	r.cfg.Bus.Publish(e)
}

func (r *run) notice(msg string) {
	r.result.Notices = append(r.result.Notices, msg)
	r.publish(events.Event{Type: events.Notice, Text: msg})
}

// stop says the run ends without the model's whole answer: why (a Stop*
// value) and the notice that says it in words. A run stopped before the
// model answered (the turn limit, the loop guard) has no answer: its
// Content stays empty rather than holding the notice or the text that
// came with the last calls.
func (r *run) stop(why, notice string) {
	r.result.Stopped = why
	if why == StopMaxTurns || why == StopLoop {
		r.result.Content = ""
	}
	r.notice(notice)
}

// finish publishes run_end (or the error) and returns the result.
func (r *run) finish(err error) (*Result, error) {
	r.release()
	r.result.Usage.WallSeconds = time.Since(r.started).Seconds()
	if err != nil {
		if r.ctx.Err() != nil && r.result.Stopped == "" {
			r.result.Stopped = StopCancelled
		}
		r.publish(events.Event{Type: events.Error, Err: err, Text: err.Error()})
	}
	r.publish(events.Event{Type: events.RunEnd, Turn: &events.TurnPayload{
		Turn: r.result.Turns, Model: r.result.Model, Content: r.result.Content, Thinking: r.result.Thinking, Usage: r.result.Usage,
	}})
	return r.result, err
}

// turn streams one model reply. The reply's text is not appended to the
// conversation here: the caller decides what the assistant message holds.
// The request is built by the run's ModelView: it fits the window (older
// turns are compacted first when needed) or it is not sent at all.
func (r *run) turn(system string, toolDefs []engine.ToolDef) (engine.ChatResponse, error) {
	req, budget, err := r.prepare(system, toolDefs)
	var overflow *engine.ContextOverflowError
	if err != nil {
		if errors.As(err, &overflow) {
			r.withdraw()
		}
		return engine.ChatResponse{}, err
	}
	r.result.Turns++
	n := r.result.Turns
	r.publish(events.Event{Type: events.TurnStart, Turn: &events.TurnPayload{Turn: n, Model: r.cfg.Model,
		Context: &events.ContextPayload{Window: budget.Window.Tokens, PromptTokens: budget.Prompt, Estimated: true, CutResults: budget.CutResults}}})
	begin := time.Now()
	resp, err := r.cfg.Engine.Chat(r.ctx, req, r.onChunk)
	refused := func() bool {
		return errors.As(err, &overflow) && resp.Message.Content == "" && resp.Message.Thinking == ""
	}
	if refused() && r.learnt(overflow, budget) {
		// The server refused what the estimate fit: with the window it
		// holds the model to, or the estimate raised, the request is
		// built again (compacting if it must) and sent once more, or
		// refused with the sizes.
		if req, budget, err = r.prepare(system, toolDefs); err == nil {
			resp, err = r.cfg.Engine.Chat(r.ctx, req, r.onChunk)
		}
	}
	if errors.As(err, &overflow) && overflow.Window > 0 && overflow.Window < budget.Window.Tokens {
		// A server that cut the prompt to its window: the next request
		// counts with that window.
		r.view.ServerWindow(overflow.Window)
	}
	if refused() {
		// Refused as too big before the model wrote a word: nothing of
		// this run's input was read.
		r.withdraw()
	}
	var noTools *engine.ToolsUnsupportedError
	if !errors.As(err, &noTools) {
		// Refused for its tools, the input goes on to react unread, and
		// is held until react's request reaches the model.
		r.release()
	}
	usage := resp.Usage
	usage.WallSeconds = time.Since(begin).Seconds()
	if r.cfg.Price != nil {
		model := resp.Model
		if model == "" {
			model = r.cfg.Model
		}
		usage.CostUSD = r.cfg.Price(model, usage.PromptTokens, usage.OutputTokens)
	}
	if resp.Model != "" {
		r.result.Model = resp.Model
	}
	r.result.Usage.Add(usage)
	// The reply's usage as measured and priced here is what its message
	// carries: a session stores it, and a reopened session shows the cost.
	resp.Usage = usage
	r.incomplete = incompleteReason(r.ctx, resp, err)
	if resp.Message.Thinking != "" {
		if r.result.Thinking != "" {
			r.result.Thinking += "\n\n"
		}
		r.result.Thinking += resp.Message.Thinking
	}
	if errors.As(err, &overflow) && overflow.Window == 0 {
		// The server refused what the estimate fit even after a retry:
		// the sizes are the (raised) estimate's, the fixes those that
		// can work.
		overflow.Model, overflow.Window, overflow.PromptTokens = r.cfg.Model, budget.Window.Tokens, budget.Prompt
		fix := remedies{"shorten the message"}
		if compactionCanFit(budget, r.conv.Messages) {
			fix.add("/compact the conversation")
		}
		fix.add(r.growFix(budget, budget.Window.Tokens*2))
		overflow.Fix = fix.sentence()
	}
	prompt, estimated := usage.PromptTokens, false
	if err == nil && usage.PromptTokens > 0 {
		r.view.Observe(budget, usage.PromptTokens)
	} else if prompt == 0 {
		prompt, estimated = budget.Prompt, true
	}
	r.result.Context.Window, r.result.Context.PromptTokens = budget.Window.Tokens, prompt
	window := &events.ContextPayload{Window: budget.Window.Tokens, PromptTokens: prompt, Estimated: estimated, CutResults: budget.CutResults}
	r.window = nil
	if window.Window > 0 {
		r.window = &events.ContextPayload{Window: window.Window, PromptTokens: prompt, Estimated: estimated}
	}
	r.publish(events.Event{Type: events.TurnEnd, Turn: &events.TurnPayload{
		Turn: n, Model: r.result.Model, Content: resp.Message.Content, Thinking: resp.Message.Thinking,
		Usage: usage, ToolCalls: len(resp.Message.ToolCalls), Context: window,
	}})
	// What cut the reply short is said after the turn's end, which
	// carries the reply whole: a transcript draws the reply, then why it
	// stopped, once each.
	if r.result.Stopped == StopLength || r.result.Stopped == StopWindowFull {
		r.result.Stopped = "" // an earlier turn's: this one went on
	}
	switch {
	case err == nil && resp.DoneReason == "length":
		why, notice := r.lengthNotice(budget, usage, r.conv.Messages)
		r.stop(why, notice)
	case err == nil && resp.DoneReason == "content_filter":
		r.notice("The server stopped the reply (a content filter): it is incomplete.")
	}
	return resp, err
}

// learnt takes in what a server's refusal says about a request the
// estimate fit: the window the server holds the model to when that is
// smaller than the one counted with, else that the estimate was low. It
// reports whether a retry can fit.
func (r *run) learnt(overflow *engine.ContextOverflowError, b Budget) bool {
	if overflow.Window > 0 && overflow.Window < b.Window.Tokens {
		return r.view.ServerWindow(overflow.Window)
	}
	return r.view.Underestimated(b)
}

// incompleteReason says why a reply stopped before its end, "" when it
// finished.
func incompleteReason(ctx context.Context, resp engine.ChatResponse, err error) string {
	var lost *engine.StreamError
	switch {
	case err != nil && ctx.Err() != nil:
		return IncompleteCancelled
	case errors.As(err, &lost):
		return IncompleteLost
	case err != nil:
		return IncompleteError
	case resp.DoneReason == "length":
		return IncompleteLength
	case resp.DoneReason == "content_filter":
		return IncompleteRefused
	}
	return ""
}

// prepare builds the request through the view. Before the run's first
// request, or when a request does not fit at all, it compacts older
// turns once if that brings the request under the view's CompactAt mark
// (see planCompaction): never twice a run, never between a tool call and
// the turn that reads its result. A request that still does not fit is
// refused, with the sizes.
func (r *run) prepare(system string, toolDefs []engine.ToolDef) (engine.ChatRequest, Budget, error) {
	in := Request{Agent: r.name, System: system, Tools: toolDefs, Messages: r.conv.Messages, Options: r.cfg.Options}
	req, b, err := r.view.Prepare(r.ctx, in)
	if err != nil {
		return req, b, err
	}
	r.useWindow(b.Window.Tokens)
	r.result.Context.Window = b.Window.Tokens
	r.windowNotices(b)
	if b.Used() > r.view.Options().CompactAt && !r.compacted && (r.result.Turns == 0 || !b.Fits()) {
		done, err := r.compact(in, b)
		if err != nil {
			return req, b, err
		}
		if done {
			in.Messages = r.conv.Messages
			if req, b, err = r.view.Prepare(r.ctx, in); err != nil {
				return req, b, err
			}
		}
	}
	if !b.Fits() {
		return req, b, r.overflow(b, in.Messages)
	}
	if b.CutResults > r.result.Context.CutResults {
		r.result.Context.CutResults = b.CutResults
	}
	return req, b, nil
}

// windowNotices says, once per view, what the person should know about
// the window: a setting capped at the model's maximum, and fixed parts
// that leave compaction nothing to work with.
func (r *run) windowNotices(b Budget) {
	if n := r.view.CapNotice(b.Window); n != "" {
		r.notice(n)
	}
	fixed := b.System + b.Tools + b.Reply
	if float64(fixed) > float64(b.Window.Tokens)*r.view.Options().CompactAt &&
		r.view.once(fmt.Sprintf("fixed parts past the mark: %s %s %d %d", b.Model, b.Agent, b.Window.Tokens, len(b.ToolCosts()))) {
		r.notice(r.fixedNotice(b))
	}
}

// compact compacts the conversation for the request in, whose budget is
// b, when a plan says it helps; it reports whether the conversation
// changed. A summary that is discarded leaves the request as it was when
// it fits, else the older turns are left out (and that is said).
func (r *run) compact(in Request, b Budget) (bool, error) {
	plan, err := r.view.planCompaction(b, in.Messages, false)
	if err != nil {
		return false, nil // it cannot help: the request goes as it is, or is refused
	}
	r.compacted = true
	r.publish(events.Event{Type: events.ContextCompacting, Turn: &events.TurnPayload{Model: r.cfg.Model,
		Context: &events.ContextPayload{Window: b.Window.Tokens, Replaced: plan.split, Kept: len(in.Messages) - plan.split, Before: b.Prompt}}})
	c, msgs, err := r.view.compactWith(r.ctx, in, b, plan)
	var discarded *SummaryDiscardedError
	switch {
	case err == nil:
	case r.ctx.Err() != nil:
		return false, err
	case errors.As(err, &discarded):
		r.addUsage(discarded.Usage)
		if b.Fits() {
			r.notice(capital(discarded.Error()) + "; the request is sent whole, as it still fits the window.")
			return false, nil
		}
		if c, msgs, err = r.view.LeaveOut(r.ctx, in); err != nil {
			r.notice(capital(discarded.Error()) + ".")
			return false, nil // refused with the sizes
		}
		note := fmt.Sprintf("%s. To fit the window, jarvis left the first %s out of what the model reads, without a summary", capital(discarded.Error()), countOf(c.Replaced, "message"))
		if len(c.Questions) > 0 {
			note += " (" + countOf(len(c.Questions), "question") + ": " + strings.Join(c.Questions, ", ") + ")"
		}
		r.notice(note + "; they stay in the session and its export.")
	default:
		r.addUsage(c.Usage)
		if !b.Fits() {
			return false, err
		}
		r.notice(capital(err.Error()) + "; the request is sent as it is, since it still fits.")
		return false, nil
	}
	r.applyCompaction(c, msgs)
	return true, nil
}

// addUsage counts what a model call outside the turns (a summary) cost.
func (r *run) addUsage(u events.Usage) {
	u.WallSeconds = 0
	r.result.Usage.Add(u)
}

// useWindow stamps the run's window on its context, for the tools.
func (r *run) useWindow(n int) {
	if r.info.NumCtx != n {
		r.info.NumCtx = n
		r.ctx = events.WithRun(r.ctx, r.info)
	}
}

// applyCompaction puts a compaction's messages in place and reports it.
func (r *run) applyCompaction(c Compaction, msgs []engine.Message) {
	r.conv.Messages = msgs
	r.result.Context.Compacted = true
	r.addUsage(c.Usage)
	r.record(Appended{Message: msgs[0], Compaction: &c})
	r.publish(events.Event{Type: events.ContextCompacted, Text: c.Summary, Turn: &events.TurnPayload{Model: r.cfg.Model, Usage: c.Usage,
		Context: &events.ContextPayload{Replaced: c.Replaced, Kept: c.Kept, Before: c.Before, After: c.After, LeftOut: c.LeftOut}}})
}

// onChunk forwards deltas as events. It runs once per streamed token, so it
// must stay allocation-free beyond the event itself.
func (r *run) onChunk(c engine.Chunk) {
	if r.hold {
		r.release() // the model is answering: it read the input
	}
	if c.Thinking != "" {
		r.cfg.Bus.Publish(events.Event{Type: events.Thinking, Run: r.info, Text: c.Thinking})
	}
	if c.Content != "" {
		r.cfg.Bus.Publish(events.Event{Type: events.Token, Run: r.info, Text: c.Content})
	}
}

// keepPartial appends what arrived of a reply that failed mid-stream, so the
// person keeps it. Tool calls of an unfinished reply are dropped: they never
// ran, and an assistant message with calls must be followed by results.
func (r *run) keepPartial(resp engine.ChatResponse) {
	if resp.Message.Content == "" && resp.Message.Thinking == "" {
		return
	}
	usage := resp.Usage
	r.append(engine.Message{Role: engine.RoleAssistant, Content: resp.Message.Content, Thinking: resp.Message.Thinking}, &usage, nil)
	r.result.Content = resp.Message.Content
}

// runCalls runs the tool calls of an assistant reply, then appends the
// reply and one tool message per call, in the calls' order. The reply is
// appended after its calls ran so that a call whose arguments a person
// edited before approving carries the arguments that ran: the model, the
// session and the transcript then all see what really happened.
// Cancellation still yields a result per call (the executor reports them
// cancelled), so the conversation stays valid.
func (r *run) runCalls(reply engine.Message, usage *events.Usage) []tools.Result {
	results := r.execute(reply.ToolCalls)
	reply.ToolCalls = slices.Clone(reply.ToolCalls)
	for i, res := range results {
		if args, ok := res.EditedArguments(); ok {
			if b, err := json.Marshal(args); err == nil {
				reply.ToolCalls[i].Arguments = string(b)
			}
		}
	}
	r.append(reply, usage, nil)
	r.appendResults(reply.ToolCalls, results, false)
	return results
}

// runTools executes calls written in the text protocol and appends their
// results as "Observation: ..." user messages. The model's text cannot be
// changed, so an edit is said in the observation.
func (r *run) runTools(calls []engine.ToolCall, asObservation bool) []tools.Result {
	results := r.execute(calls)
	r.appendResults(calls, results, asObservation)
	return results
}

func (r *run) execute(calls []engine.ToolCall) []tools.Result {
	tcalls := make([]tools.Call, len(calls))
	for i, c := range calls {
		tcalls[i] = tools.Call{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
	}
	if r.cfg.Executor != nil {
		return r.cfg.Executor.ExecuteAll(r.ctx, tcalls)
	}
	results := make([]tools.Result, len(calls))
	for i, c := range calls {
		results[i] = tools.Fail("%s%s (available: none)", tools.UnknownToolPrefix, c.Name)
		results[i].ToolName = c.Name
	}
	return results
}

func (r *run) appendResults(calls []engine.ToolCall, results []tools.Result, asObservation bool) {
	for i, res := range results {
		m := engine.Message{Role: engine.RoleTool, Content: res.Content, ToolName: calls[i].Name, ToolCallID: calls[i].ID}
		if asObservation {
			content := res.Content
			if args, ok := res.EditedArguments(); ok {
				if b, err := json.Marshal(args); err == nil {
					content = "(the user edited the arguments before approving; it ran with " + string(b) + ")\n" + content
				}
			}
			m = engine.Message{Role: engine.RoleUser, Content: "Observation: " + content}
		}
		r.append(m, nil, &results[i])
		r.result.ToolResults = append(r.result.ToolResults, res)
		r.result.Usage.ToolCostUSD += res.CostUSD
	}
}

// cancelled reports whether the run's context ended, as an error to return.
func (r *run) cancelled() error {
	if err := r.ctx.Err(); err != nil {
		r.result.Stopped = StopCancelled
		if errors.Is(err, context.DeadlineExceeded) {
			return errors.New("the run took too long and was stopped")
		}
		return errors.New("the run was cancelled")
	}
	return nil
}
