package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
)

// Compaction: when the next request would pass CompactAt of the window,
// the older turns are summarised by the model into one message, which
// takes their place in what the model reads. It is one more model call,
// and its result replaces the old turns; the originals stay in the
// session and its export. The cut falls where a user's turn begins, so a
// tool call is never separated from its result.

// SummaryPrefix starts the message that stands for compacted turns.
const SummaryPrefix = "[Summary of the earlier conversation, written to fit the context window]\n"

// compactTarget is the share of the window the request should take after
// a compaction, so that the next turns do not compact again at once.
const compactTarget = 0.5

// summaryReserve is room kept for the summary itself when choosing what
// to summarise, in tokens.
const summaryReserve = 400

const compactionSystem = `You summarise a conversation between a user and an assistant that can call tools, so that the conversation can go on with your summary in place of those messages. Keep every fact, number, name, file path, decision and tool result that may matter later, and what the user wants next. Leave out greetings and repetition. Write plain sentences or a short list, in the conversation's language, at most 300 words. Write only the summary.`

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
}

// Saved is the tokens the compaction took out of the prompt.
func (c Compaction) Saved() int { return max(c.Before-c.After, 0) }

// ErrNothingToCompact means the conversation has no older turns to
// summarise.
var ErrNothingToCompact = errors.New("there is nothing to compact: the conversation has no earlier turns to summarise")

// Compact summarises the older turns of in.Messages with the model and
// returns the messages the model should see from now on: the summary,
// then the turns kept. force summarises every turn before the last one
// (/compact); otherwise just enough is summarised to bring the request
// to about half the window.
func (v *ModelView) Compact(ctx context.Context, in Request, force bool) (Compaction, []engine.Message, error) {
	_, before, err := v.Prepare(ctx, in)
	if err != nil {
		return Compaction{}, nil, err
	}
	split := v.compactSplit(before, in.Messages, force)
	if split <= 0 {
		return Compaction{}, nil, ErrNothingToCompact
	}
	summary, usage, err := v.summarise(ctx, before, in.Messages[:split])
	if err != nil {
		return Compaction{}, nil, fmt.Errorf("the conversation could not be compacted: %w", err)
	}
	msgs := make([]engine.Message, 0, len(in.Messages)-split+1)
	msgs = append(msgs, SummaryMessage(summary))
	msgs = append(msgs, in.Messages[split:]...)
	after := in
	after.Messages = msgs
	_, ab, err := v.Prepare(ctx, after)
	if err != nil {
		return Compaction{}, nil, err
	}
	return Compaction{Replaced: split, Kept: len(in.Messages) - split, Summary: summary, Before: before.Prompt, After: ab.Prompt, Usage: usage}, msgs, nil
}

// compactSplit chooses how many leading messages to summarise: a count
// that ends where a user's turn begins, never past the last user message
// (the question being answered stays as it is). 0 means none can be.
func (v *ModelView) compactSplit(b Budget, msgs []engine.Message, force bool) int {
	var starts []int // indexes where a user's turn begins
	for i, m := range msgs {
		if m.Role == engine.RoleUser && !isResult(m) && !strings.HasPrefix(m.Content, SummaryPrefix) {
			starts = append(starts, i)
		}
	}
	if len(starts) == 0 {
		return 0
	}
	last := starts[len(starts)-1]
	if force || last == 0 {
		return last
	}
	// The cost of the messages from each index on.
	tail := make([]int, len(msgs)+1)
	for _, p := range b.Parts {
		if p.Index >= 0 && p.Index < len(msgs) {
			tail[p.Index] = p.Tokens
		}
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		tail[i] += tail[i+1]
	}
	fixed := b.System + b.Tools + b.Reply + summaryReserve
	target := int(float64(b.Window.Tokens) * compactTarget)
	for _, s := range starts {
		if s > 0 && fixed+tail[s] <= target {
			return s
		}
	}
	return last
}

// summarise asks the model for a summary of msgs. A transcript too long
// for one request is summarised in pieces, each with the summary so far.
func (v *ModelView) summarise(ctx context.Context, b Budget, msgs []engine.Message) (string, events.Usage, error) {
	w := b.Window.Tokens
	reply := min(defaultReply, w/4)
	ratio := b.Ratio
	if ratio <= 0 {
		ratio = 1
	}
	// What one request may carry of the transcript, in raw estimate.
	room := int(float64(w-reply-EstimateTokens(compactionSystem)-2*messageOverhead-summaryReserve) / ratio * 0.9)
	if room < 200 {
		return "", events.Usage{}, fmt.Errorf("the %s-token window is too small to summarise in", groupDigits(w))
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
			text = "Here is a summary of the conversation's beginning:\n\n" + summary +
				"\n\nSummarise the whole conversation: that beginning and what follows.\n\n" + piece
		}
		req := engine.ChatRequest{
			Model: v.Model(),
			Messages: []engine.Message{
				{Role: engine.RoleSystem, Content: compactionSystem},
				{Role: engine.RoleUser, Content: text},
			},
			Options: engine.Options{NumCtx: w, NumPredict: reply},
		}
		resp, err := v.eng.Chat(ctx, req, nil)
		usage.Add(resp.Usage)
		if err != nil {
			return "", usage, err
		}
		summary = strings.TrimSpace(resp.Message.Content)
		if summary == "" {
			return "", usage, errors.New("the model returned an empty summary")
		}
	}
	return summary, usage, nil
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
		content = cutResult(m, int(float64(resultLimit)*ratio), ratio)
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
