package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
)

// Compaction: the older turns of a conversation are summarised by the
// model into one message, which takes their place in what the model
// reads. It is one more model call, and its result replaces the old
// turns; the originals stay in the session and its export. The cut falls
// where a user's turn begins, so a tool call is never separated from its
// result.
//
// A compaction must pay for itself, so it is planned before the model is
// asked (planCompaction, arithmetic on the budget only):
//   - it runs only when the request, with a summary at its longest, comes
//     under the CompactAt mark (or, for a request that does not fit at
//     all, fits); when the system prompt, the tools and the reply's room
//     alone pass the mark, no summary can help and none is asked for;
//   - the summary's length is capped (its num_predict) so that it is
//     smaller than what it replaces and both the summary request and the
//     next request fit the window, which is checked before each is sent;
//   - a summary that comes back no smaller than the messages it stands
//     for, empty, or cut at its cap is discarded (SummaryDiscardedError);
//     a request that then does not fit leaves the older turns out
//     instead, and says which (LeaveOut).

// SummaryPrefix starts the message that stands for compacted turns.
const SummaryPrefix = "[Summary of the earlier conversation, written to fit the context window]\n"

// compactTarget is the share of the window the request should take after
// a compaction, so that the next turns do not compact again at once.
const compactTarget = 0.5

// The bounds of a summary's length, in tokens: below summaryMin a summary
// says too little to be worth a model call; it is capped at an eighth of
// the window, and summaryMax.
const (
	summaryMin = 64
	summaryMax = 1024
)

// compactionSystem asks for a summary of at most %d words.
const compactionSystem = `You summarise a conversation between a user and an assistant that can call tools, so that the conversation can go on with your summary in place of those messages. Keep every fact, number, name, file path, decision and tool result that may matter later, and what the user wants next. Leave out greetings and repetition. Write plain sentences or a short list, in the conversation's language, at most %d words. Write only the summary.`

// Compaction is what a compaction did.
type Compaction struct {
	// Replaced is how many messages (from the start of the conversation)
	// the summary stands for; Kept how many follow it unchanged.
	Replaced int `json:"replaced"`
	Kept     int `json:"kept"`
	Summary  string
	// Before and After are the prompt's tokens (calibrated estimate).
	Before int `json:"before"`
	After  int `json:"after"`
	// Usage is what the summarising call cost.
	Usage events.Usage `json:"usage"`
	// LeftOut is set when the Replaced messages were left out of what
	// the model reads without a summary (the summary was discarded and
	// the request did not fit): Summary is then the note that tells the
	// model so.
	LeftOut bool `json:"left_out,omitempty"`
	// Questions are the person's questions among the Replaced messages,
	// shortened, so that a notice can name what was left out.
	Questions []string `json:"-"`
	// summaryTokens is what the message that stands for them costs.
	summaryTokens int
}

// Saved is the tokens the compaction took out of the prompt.
func (c Compaction) Saved() int { return max(c.Before-c.After, 0) }

// ErrNothingToCompact means compacting cannot help: the conversation has
// no earlier turns to summarise, or a summary would not make the request
// smaller (the error's text says which).
var ErrNothingToCompact = errors.New("there is nothing to compact")

// nothingToCompact is ErrNothingToCompact with the reason.
type nothingToCompact struct{ why string }

func (e nothingToCompact) Error() string        { return "there is nothing to compact: " + e.why }
func (e nothingToCompact) Is(target error) bool { return target == ErrNothingToCompact }

// SummaryDiscardedError means the model wrote a summary that was not
// used: no smaller than what it would replace, empty, or cut at its
// length cap. The conversation is as it was; Usage is what the attempt
// cost.
type SummaryDiscardedError struct {
	Why   string
	Usage events.Usage
}

func (e *SummaryDiscardedError) Error() string {
	return "the summary of the earlier turns was discarded: " + e.Why
}

// Compact summarises the older turns of in.Messages with the model and
// returns the messages the model should see from now on: the summary,
// then the turns kept. force summarises every turn before the last one
// (/compact); otherwise just enough is summarised to bring the request
// to about half the window. It refuses (ErrNothingToCompact) before
// asking the model when the summary could not make the request smaller,
// or, without force, could not bring it under the mark.
func (v *ModelView) Compact(ctx context.Context, in Request, force bool) (Compaction, []engine.Message, error) {
	_, before, err := v.Prepare(ctx, in)
	if err != nil {
		return Compaction{}, nil, err
	}
	plan, err := v.planCompaction(before, in.Messages, force)
	if err != nil {
		return Compaction{}, nil, err
	}
	return v.compactWith(ctx, in, before, plan)
}

// compactPlan is how a compaction is to be done.
type compactPlan struct {
	// split is how many leading messages the summary stands for, and
	// replaced what they cost (calibrated tokens).
	split, replaced int
	// limit caps the summary (tokens, its num_predict).
	limit int
}

// messageCosts returns what each of msgs costs in b, and the cost of the
// messages from each index to the end (tail[len(msgs)] is 0).
func messageCosts(b Budget, n int) (tail []int) {
	tail = make([]int, n+1)
	for _, p := range b.Parts {
		if p.Index >= 0 && p.Index < n {
			tail[p.Index] = p.Tokens
		}
	}
	for i := n - 1; i >= 0; i-- {
		tail[i] += tail[i+1]
	}
	return tail
}

// turnStarts returns the indexes where a user's turn begins: the person's
// questions, not tool results or a summary.
func turnStarts(msgs []engine.Message) []int {
	var starts []int
	for i, m := range msgs {
		if m.Role == engine.RoleUser && !isResult(m) && !strings.HasPrefix(m.Content, SummaryPrefix) {
			starts = append(starts, i)
		}
	}
	return starts
}

// summaryOverhead is what the summary message costs besides the summary.
func summaryOverhead(ratio float64) int {
	return scaled(EstimateTokens(SummaryPrefix)+messageOverhead, ratio)
}

// summaryCap is the longest summary a window gets.
func summaryCap(window int) int { return min(max(window/8, summaryMin), summaryMax) }

// planCompaction decides, from the budget alone, whether a compaction of
// msgs helps the request b and how: where to cut and how long the
// summary may be. It never asks the server, so it is cheap enough for
// every turn (see BenchmarkCompactionDecision).
func (v *ModelView) planCompaction(b Budget, msgs []engine.Message, force bool) (compactPlan, error) {
	starts := turnStarts(msgs)
	for len(starts) > 0 && starts[0] == 0 {
		starts = starts[1:]
	}
	if len(starts) == 0 {
		return compactPlan{}, nothingToCompact{"the conversation has no earlier turns to summarise"}
	}
	w := b.Window.Tokens
	tail := messageCosts(b, len(msgs))
	fixed := b.System + b.Tools + b.Reply
	over := summaryOverhead(b.Ratio)
	// limitFor is the longest summary that brings the request with the
	// messages from s on under target and is still clearly smaller than
	// what it replaces (at most three quarters of it).
	limitFor := func(s, target int) int {
		replaced := tail[0] - tail[s]
		room := target - fixed - over - tail[s]
		return min(summaryCap(w), room, (replaced-over)*3/4)
	}
	plan := func(s, limit int) compactPlan {
		return compactPlan{split: s, replaced: tail[0] - tail[s], limit: limit}
	}
	last := starts[len(starts)-1]
	if force {
		if limit := limitFor(last, w); limit >= summaryMin {
			return plan(last, limit), nil
		}
		return compactPlan{}, nothingToCompact{fmt.Sprintf("the earlier turns take about %s tokens, too little for a summary to make the request smaller", engine.GroupDigits(tail[0]-tail[last]))}
	}
	// The fewest turns that bring the request to half the window, else
	// every earlier turn if that brings it under the mark, else (for a
	// request that does not fit at all) if that makes it fit.
	for _, s := range starts {
		if limit := limitFor(s, int(float64(w)*compactTarget)); limit >= summaryMin {
			return plan(s, limit), nil
		}
	}
	if limit := limitFor(last, int(float64(w)*v.Options().CompactAt)); limit >= summaryMin {
		return plan(last, limit), nil
	}
	if !b.Fits() {
		if limit := limitFor(last, w); limit >= summaryMin {
			return plan(last, limit), nil
		}
	}
	return compactPlan{}, nothingToCompact{fmt.Sprintf("a summary of the earlier turns cannot bring the request under %.0f%% of the %s-token window", v.Options().CompactAt*100, engine.GroupDigits(w))}
}

// compactWith carries out plan on in, whose budget is before.
func (v *ModelView) compactWith(ctx context.Context, in Request, before Budget, plan compactPlan) (Compaction, []engine.Message, error) {
	summary, usage, err := v.summarise(ctx, before, in.Messages[:plan.split], plan.limit)
	if err != nil {
		var discarded *SummaryDiscardedError
		if errors.As(err, &discarded) {
			discarded.Usage = usage
			return Compaction{Usage: usage}, nil, err
		}
		return Compaction{Usage: usage}, nil, fmt.Errorf("the conversation could not be compacted: %w", err)
	}
	c, msgs, err := v.replaceHead(ctx, in, before, plan.split, summary)
	c.Usage = usage
	if err != nil {
		return c, nil, err
	}
	if sum := c.summaryTokens; sum >= plan.replaced {
		return c, nil, &SummaryDiscardedError{Usage: usage, Why: fmt.Sprintf("it came to about %s tokens, no fewer than the %s of the %s it would stand for",
			engine.GroupDigits(sum), engine.GroupDigits(plan.replaced), countOf(plan.split, "message"))}
	}
	return c, msgs, nil
}

// replaceHead returns the messages with the first split replaced by the
// message that stands for them, and the compaction that describes it.
func (v *ModelView) replaceHead(ctx context.Context, in Request, before Budget, split int, summary string) (Compaction, []engine.Message, error) {
	msgs := make([]engine.Message, 0, len(in.Messages)-split+1)
	msgs = append(msgs, SummaryMessage(summary))
	msgs = append(msgs, in.Messages[split:]...)
	after := in
	after.Messages = msgs
	_, ab, err := v.Prepare(ctx, after)
	if err != nil {
		return Compaction{}, nil, err
	}
	c := Compaction{Replaced: split, Kept: len(in.Messages) - split, Summary: summary, Before: before.Prompt, After: ab.Prompt,
		Questions: questionsOf(in.Messages[:split])}
	for _, p := range ab.Parts {
		if p.Index == 0 {
			c.summaryTokens = p.Tokens
		}
	}
	return c, msgs, nil
}

// LeaveOut is compaction's fallback when no summary can be had: the
// fewest older turns that bring the request under the mark (else that
// make it fit) are left out of what the model reads, and a short note in
// their place tells the model so. Nothing is asked of the server beyond
// the window. The originals stay in the session.
func (v *ModelView) LeaveOut(ctx context.Context, in Request) (Compaction, []engine.Message, error) {
	_, b, err := v.Prepare(ctx, in)
	if err != nil {
		return Compaction{}, nil, err
	}
	starts := turnStarts(in.Messages)
	for len(starts) > 0 && starts[0] == 0 {
		starts = starts[1:]
	}
	if len(starts) == 0 {
		return Compaction{}, nil, nothingToCompact{"the conversation has no earlier turns to leave out"}
	}
	tail := messageCosts(b, len(in.Messages))
	note := scaled(EstimateTokens(leftOutNote(in.Messages[:starts[len(starts)-1]]))+messageOverhead, b.Ratio) + summaryOverhead(b.Ratio)
	need := func(s int) int { return b.System + b.Tools + b.Reply + note + tail[s] }
	mark := int(float64(b.Window.Tokens) * v.Options().CompactAt)
	split := -1
	for _, s := range starts {
		if need(s) <= mark {
			split = s
			break
		}
	}
	if last := starts[len(starts)-1]; split < 0 && need(last) <= b.Window.Tokens {
		split = last
	}
	if split < 0 {
		return Compaction{}, nil, nothingToCompact{"leaving out the earlier turns would not make the request fit"}
	}
	c, msgs, err := v.replaceHead(ctx, in, b, split, leftOutNote(in.Messages[:split]))
	c.LeftOut = true
	return c, msgs, err
}

// leftOutNote tells the model that msgs were left out, and what the
// person asked there.
func leftOutNote(msgs []engine.Message) string {
	note := fmt.Sprintf("The first %s of this conversation were left out to fit the context window, without a summary.", countOf(len(msgs), "message"))
	if qs := questionsOf(msgs); len(qs) > 0 {
		note += " The user's questions there began: " + strings.Join(qs, "; ") + "."
	}
	return note
}

// questionsOf returns the start of each of the person's questions in
// msgs (at most five), for notes that name what was left out.
func questionsOf(msgs []engine.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role != engine.RoleUser || isResult(m) || strings.HasPrefix(m.Content, SummaryPrefix) {
			continue
		}
		if len(out) == 5 {
			out = append(out, "…")
			break
		}
		out = append(out, "“"+shorten(m.Content, 48)+"”")
	}
	return out
}

// shorten gives the first words of s on one line, at most n characters.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return strings.TrimSpace(string(r[:n-1])) + "…"
	}
	return s
}

// summarise asks the model for a summary of msgs of at most limit
// tokens. A transcript too long for one request is summarised in pieces,
// each with the summary so far; every request is checked to fit the
// window before it is sent.
func (v *ModelView) summarise(ctx context.Context, b Budget, msgs []engine.Message, limit int) (string, events.Usage, error) {
	w := b.Window.Tokens
	ratio := b.Ratio
	if ratio <= 0 {
		ratio = 1
	}
	system := fmt.Sprintf(compactionSystem, max(limit*3/5/10*10, 30))
	fixedRaw := estimateMessage(engine.Message{Content: system}) + messageOverhead + EstimateTokens(summarySoFar+summariseWhole)
	// What one request may carry of the transcript, in raw estimate: the
	// window less the reply's room, the summary so far (at most limit)
	// and the rest of the request, with a margin for the estimate.
	room := int(float64(w-2*limit)/ratio*0.9) - fixedRaw
	if room < 200 {
		return "", events.Usage{}, fmt.Errorf("the %s-token window is too small to summarise in", engine.GroupDigits(w))
	}
	resultLimit := max(room/4, 100)
	var pieces []string
	var cur strings.Builder
	curTokens := 0
	for _, m := range msgs {
		line := transcriptLine(m, resultLimit, ratio)
		t := EstimateTokens(line)
		if curTokens+t > room && cur.Len() > 0 {
			pieces = append(pieces, cur.String())
			cur.Reset()
			curTokens = 0
		}
		cur.WriteString(line)
		curTokens += t
	}
	if cur.Len() > 0 {
		pieces = append(pieces, cur.String())
	}
	var summary string
	var usage events.Usage
	for _, piece := range pieces {
		text := "Summarise this conversation:\n\n" + piece
		if summary != "" {
			text = summarySoFar + summary + summariseWhole + piece
		}
		req := engine.ChatRequest{
			Model: v.Model(),
			Messages: []engine.Message{
				{Role: engine.RoleSystem, Content: system},
				{Role: engine.RoleUser, Content: text},
			},
			Options: engine.Options{NumCtx: w, NumPredict: limit},
		}
		if need := scaled(estimateMessage(req.Messages[0])+estimateMessage(req.Messages[1]), ratio) + limit; need > w {
			// A piece longer than it should be (one message alone past the
			// room): not sent, as the server would cut or refuse it.
			return "", usage, fmt.Errorf("the summary request would take about %s tokens, more than the %s-token window", engine.GroupDigits(need), engine.GroupDigits(w))
		}
		resp, err := v.eng.Chat(ctx, req, nil)
		usage.Add(resp.Usage)
		if err != nil {
			return "", usage, err
		}
		summary = strings.TrimSpace(resp.Message.Content)
		switch {
		case summary == "":
			return "", usage, &SummaryDiscardedError{Why: "the model returned an empty summary"}
		case resp.DoneReason == "length":
			return "", usage, &SummaryDiscardedError{Why: fmt.Sprintf("it did not finish within its %s tokens", engine.GroupDigits(limit))}
		}
	}
	return summary, usage, nil
}

// The request for a piece after the first one: the summary so far goes
// between them, then the piece.
const (
	summarySoFar   = "Here is a summary of the conversation's beginning:\n\n"
	summariseWhole = "\n\nSummarise the whole conversation: that beginning and what follows.\n\n"
)

// countOf is "1 message", "3 messages".
func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return engine.GroupDigits(n) + " " + noun + "s"
}

// SummaryMessage is the message that stands for compacted turns.
func SummaryMessage(summary string) engine.Message {
	return engine.Message{Role: engine.RoleUser, Content: SummaryPrefix + summary}
}

// Compact puts a compaction in place: the summary, then the last kept
// messages. A conversation reloaded from a session replays its compactions
// this way, so the model sees what it saw before.
func (c *Conversation) Compact(summary string, kept int) {
	kept = min(max(kept, 0), len(c.Messages))
	msgs := make([]engine.Message, 0, kept+1)
	msgs = append(msgs, SummaryMessage(summary))
	c.Messages = append(msgs, c.Messages[len(c.Messages)-kept:]...)
}

// transcriptLine renders one message for the summariser, with long tool
// results cut to resultLimit (raw estimate).
func transcriptLine(m engine.Message, resultLimit int, ratio float64) string {
	content := m.Content
	if isResult(m) && EstimateTokens(content) > resultLimit {
		content = cutResult(m, int(float64(resultLimit)*ratio), ratio, 1)
	}
	switch {
	case m.Role == engine.RoleTool:
		return fmt.Sprintf("Result of %s: %s\n\n", m.ToolName, content)
	case isResult(m):
		return content + "\n\n"
	case m.Role == engine.RoleAssistant:
		var b strings.Builder
		if content != "" {
			b.WriteString("Assistant: " + content + "\n")
		}
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, "Assistant called %s with %s\n", c.Name, c.Arguments)
		}
		b.WriteString("\n")
		return b.String()
	case m.Role == engine.RoleUser && strings.HasPrefix(content, SummaryPrefix):
		return "Summary of what came before: " + strings.TrimPrefix(content, SummaryPrefix) + "\n\n"
	}
	// The summariser reads text only: images are named, so the summary
	// can say what was shown.
	for _, im := range m.Images {
		name := im.Name
		if name == "" {
			name = "an image"
		}
		content += fmt.Sprintf("\n[attached image: %s, %d×%d]", name, im.Width, im.Height)
	}
	return "User: " + content + "\n\n"
}

// compactionCanFit reports whether /compact could make the request b
// fit: a summary of every turn before the last, at its shortest, leaves
// it within the window.
func compactionCanFit(b Budget, msgs []engine.Message) bool {
	starts := turnStarts(msgs)
	if len(starts) == 0 || starts[len(starts)-1] == 0 {
		return false
	}
	last := starts[len(starts)-1]
	tail := messageCosts(b, len(msgs))
	over := summaryOverhead(b.Ratio)
	return tail[0]-tail[last] > over+summaryMin && b.System+b.Tools+b.Reply+over+summaryMin+tail[last] <= b.Window.Tokens
}

// lastTurnTokens is what the last user turn and all that follows it
// cost: what a new conversation would start with.
func lastTurnTokens(b Budget, msgs []engine.Message) int {
	starts := turnStarts(msgs)
	tail := messageCosts(b, len(msgs))
	if len(starts) == 0 {
		return tail[0]
	}
	return tail[starts[len(starts)-1]]
}
