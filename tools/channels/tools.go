package channels

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jarvis-workbench/jarvis/tools"
)

// Send is the channel_send tool. It sends the model's text off the machine,
// so it requires confirmation.
type Send struct{ set *set }

// List is the channel_list tool: names, types and whether each channel is
// configured completely, never a secret. It makes no network call.
type List struct{ set *set }

// Status is the channel_status tool. It does not require confirmation: it
// sends nothing the model wrote, only fixed read-only probes (Telegram
// getMe and getChat, Discord's webhook lookup, a HEAD to a webhook host's
// root, ntfy's health and account endpoints) to services the user
// configured, with the credentials the user configured for them.
type Status struct{ set *set }

// NewSend, NewList and NewStatus build the tools over cfg. Incomplete
// channels are kept (and reported) rather than failing the build.
func NewSend(cfg Config) *Send     { return &Send{set: newSet(cfg)} }
func NewList(cfg Config) *List     { return &List{set: newSet(cfg)} }
func NewStatus(cfg Config) *Status { return &Status{set: newSet(cfg)} }

// SendFactory, ListFactory and StatusFactory adapt the constructors to the
// registry.
func SendFactory(cfg Config) tools.Factory {
	return func(tools.Deps) (tools.Tool, error) { return NewSend(cfg), nil }
}

// ListFactory: see SendFactory.
func ListFactory(cfg Config) tools.Factory {
	return func(tools.Deps) (tools.Tool, error) { return NewList(cfg), nil }
}

// StatusFactory: see SendFactory.
func StatusFactory(cfg Config) tools.Factory {
	return func(tools.Deps) (tools.Tool, error) { return NewStatus(cfg), nil }
}

// channelParam declares the channel argument, listing the configured names
// so the model picks a real one and the executor rejects others.
func (s *set) channelParam(description string) tools.Param {
	if len(s.names) == 0 {
		return tools.StringParam("channel", description+" (no channels are configured)", true)
	}
	return tools.EnumParam("channel", description, true, s.names...)
}

// Spec returns channel_send's spec.
func (t *Send) Spec() tools.Spec {
	return tools.Spec{
		Name: "channel_send",
		Description: "Send a text message through a configured messaging channel (Slack, Discord, Telegram, a webhook, ntfy). " +
			"Messages over the service's size limit are split into numbered parts.",
		Parameters: tools.Params(
			t.set.channelParam("Name of the channel to send through"),
			tools.StringParam("message", "The message text", true),
		),
		Category:             "channel",
		RequiresConfirmation: true,
		TimeoutSeconds:       60,
	}
}

// GrantScope is the channel: a grant covers messages to it.
func (t *Send) GrantScope(args tools.Args) tools.Scope {
	name := strings.TrimSpace(args.String("channel"))
	return tools.Scope{Kind: tools.ScopeChannel, Value: name, Words: "messages to channel " + name}
}

// Execute sends args["message"] through args["channel"].
func (t *Send) Execute(ctx context.Context, args tools.Args) tools.Result {
	c, msg := t.set.lookup(args.String("channel"))
	if c == nil {
		return tools.Fail("%s", msg)
	}
	if !c.complete() {
		return tools.Fail("Channel %s is not configured completely: %s. Fix [channels.%s] in the config file.", c.label(), strings.Join(c.problems, "; "), c.name)
	}
	text := args.String("message")
	if strings.TrimSpace(text) == "" {
		return tools.Fail("No message provided.")
	}
	l := c.svc.limit()
	size := l.size(text)
	parts := []string{text}
	if l.max > 0 && size > l.max {
		if !c.split {
			return tools.Fail("The message is %d %s long; %s accepts at most %d per message, and splitting is turned off for channel %s (split = false). Shorten the message.",
				size, l.unit(), l.service, l.max, c.label())
		}
		if parts = splitMessage(text, l); parts == nil {
			return tools.Fail("The message is %d %s long; %s accepts at most %d per message, and channel_send splits into at most %d parts. Shorten the message.",
				size, l.unit(), l.service, l.max, MaxParts)
		}
	}
	for i, p := range parts {
		if err := c.svc.send(ctx, t.set.client, p); err != nil {
			return sendFailure(c, err, i, len(parts))
		}
	}
	out := fmt.Sprintf("Message sent to channel %s.", c.label())
	if len(parts) > 1 {
		out = fmt.Sprintf("Message sent to channel %s in %d parts (it was %d %s; %s accepts %d per message).",
			c.label(), len(parts), size, l.unit(), l.service, l.max)
	}
	return tools.OK(out).WithMeta("channel", c.name).WithMeta("type", c.kind).WithMeta("parts_sent", len(parts)).WithMeta("delivery", "sent")
}

// sendFailure reports that part i of n failed with err. A part that was
// sent but got no answer may have been posted: the result says so, and
// that the channel should be checked before sending again, rather than
// calling it a failure the model would answer by posting twice.
func sendFailure(c *channel, err error, i, n int) tools.Result {
	reason := c.red.redact(err.Error())
	var se *sendError
	if errors.As(err, &se) && !se.sent {
		reason += "; the message was not sent"
	}
	var r tools.Result
	delivery := "failed"
	switch {
	case maybeDelivered(err) && n == 1:
		delivery = "unknown"
		r = tools.Fail("The message to channel %s may have been delivered: %s. Check the channel before sending it again, so that it is not posted twice.", c.label(), reason)
	case maybeDelivered(err):
		delivery = "unknown"
		r = tools.Fail("Sent %d of %d parts to channel %s; part %d may have been delivered too: %s. Check the channel before sending the rest, so that nothing is posted twice.", i, n, c.label(), i+1, reason)
	case i > 0:
		r = tools.Fail("Sent %d of %d parts to channel %s, then part %d failed: %s", i, n, c.label(), i+1, reason)
	default:
		r = tools.Fail("Sending to channel %s failed: %s", c.label(), reason)
	}
	return r.WithMeta("channel", c.name).WithMeta("type", c.kind).WithMeta("parts_sent", i).WithMeta("delivery", delivery)
}

// Spec returns channel_list's spec.
func (t *List) Spec() tools.Spec {
	return tools.Spec{
		Name:        "channel_list",
		Description: "List the configured messaging channels with their type and whether each is configured completely.",
		Parameters:  tools.Params(),
		Category:    "channel",
	}
}

// Execute lists the channels.
func (t *List) Execute(context.Context, tools.Args) tools.Result {
	if len(t.set.names) == 0 {
		return tools.OK(noChannels).WithMeta("channels", []map[string]any{})
	}
	lines := make([]string, 0, len(t.set.names)+1)
	meta := make([]map[string]any, 0, len(t.set.names))
	noun := "channels"
	if len(t.set.names) == 1 {
		noun = "channel"
	}
	lines = append(lines, fmt.Sprintf("%d %s configured:", len(t.set.names), noun))
	for _, name := range t.set.names {
		c := t.set.byName[name]
		entry := map[string]any{"name": c.name, "type": c.kind, "configured": c.complete()}
		line := fmt.Sprintf("- %s (%s): ", c.name, orUnknown(c.kind))
		if c.complete() {
			line += "ready"
			if l := c.svc.limit(); l.max > 0 {
				then := "longer ones are split"
				if !c.split {
					then = "longer ones are refused"
				}
				line += fmt.Sprintf("; messages up to %d %s, %s", l.max, l.unit(), then)
				entry["max_length"] = l.max
			}
		} else {
			line += "incomplete: " + strings.Join(c.problems, "; ")
			entry["problems"] = c.problems
		}
		lines = append(lines, line)
		meta = append(meta, entry)
	}
	return tools.OK(strings.Join(lines, "\n")).WithMeta("channels", meta)
}

// Spec returns channel_status's spec.
func (t *Status) Spec() tools.Spec {
	return tools.Spec{
		Name: "channel_status",
		Description: "Check that a configured messaging channel works, without sending anything " +
			"(Telegram getMe/getChat, Discord webhook lookup, webhook host reachability, ntfy health), and say what was checked.",
		Parameters: tools.Params(t.set.channelParam("Name of the channel to check")),
		Category:   "channel",
		// The probes send nothing the model wrote; see the type's comment.
		RequiresConfirmation: false,
		TimeoutSeconds:       45,
	}
}

// Execute checks args["channel"].
func (t *Status) Execute(ctx context.Context, args tools.Args) tools.Result {
	c, msg := t.set.lookup(args.String("channel"))
	if c == nil {
		return tools.Fail("%s", msg)
	}
	if !c.complete() {
		return tools.Fail("Channel %s is not configured completely: %s. Nothing was checked; fix [channels.%s] in the config file.", c.label(), strings.Join(c.problems, "; "), c.name).
			WithMeta("channel", c.name).WithMeta("type", c.kind).WithMeta("ok", false)
	}
	steps, note := c.svc.check(ctx, t.set.client)
	ok := len(steps) > 0
	checks := make([]map[string]any, 0, len(steps))
	var b strings.Builder
	for _, s := range steps {
		ok = ok && s.ok
		state := "ok"
		if !s.ok {
			state = "FAILED"
		}
		fmt.Fprintf(&b, "\n- %s: %s, %s", s.what, state, s.detail)
		// Metadata reaches events and transcripts like the content does.
		checks = append(checks, map[string]any{"check": c.red.redact(s.what), "ok": s.ok})
	}
	verdict := "works"
	if !ok {
		verdict = "does not work"
	}
	out := fmt.Sprintf("Channel %s %s. Checked:%s", c.label(), verdict, b.String())
	if note != "" {
		out += "\n" + note
	}
	out += "\nNothing was sent to the channel."
	r := tools.OK(c.red.redact(out))
	if !ok {
		r = tools.Fail("%s", c.red.redact(out))
	}
	return r.WithMeta("channel", c.name).WithMeta("type", c.kind).WithMeta("ok", ok).WithMeta("checks", checks)
}
