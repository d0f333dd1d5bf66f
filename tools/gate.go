package tools

import (
	"context"
	"fmt"

	"github.com/jarvis-workbench/jarvis/events"
)

// The gate is steps 1 to 3 of the executor: what a call must pass before
// it runs. prepare does what needs nobody (look the tool up, check the
// arguments, refuse what no one may approve, work out whether the call
// asks, why, and what a grant would cover); confirm asks the policy and
// keeps the grant a person gave. ExecuteAll prepares a turn's calls first
// so that it can ask about them in the model's order.

// pending is a call that passed prepare.
type pending struct {
	call     Call
	en       *entry
	args     Args
	run      events.RunInfo
	target   string
	check    Check
	parallel int
}

// prepare runs the checks that need nobody. done is true when the call
// ends here, with r its failed result.
func (e *Executor) prepare(ctx context.Context, call Call, parallel int) (p *pending, r Result, done bool) {
	run := events.RunFrom(ctx)
	e.mu.RLock()
	en, ok := e.tools[call.Name]
	e.mu.RUnlock()
	if !ok {
		return nil, e.reject(run, call, nil, fmt.Sprintf("%s%s (available: %s)", UnknownToolPrefix, call.Name, e.availableNames())), true
	}
	args, msg := ParseArguments(call.Arguments)
	if msg != "" {
		return nil, e.reject(run, call, nil, msg), true
	}
	if err := en.validator.validate(args); err != nil {
		return nil, e.reject(run, call, args, invalidArgs(err)), true
	}
	p = &pending{call: call, en: en, args: args, run: run, parallel: parallel}
	p.target = e.targetOf(en, call, args)
	p.check = e.check(e.withCall(ctx, p), en, args)
	if ref := p.check.Refusal; ref != nil {
		return nil, e.refuse(ctx, p, args, ref, ""), true
	}
	if p.check.Invalid != "" {
		return nil, e.reject(run, call, args, p.check.Invalid), true
	}
	if p.target != call.Name && e.policy.turnedOff(p.target) {
		return nil, e.refuseOff(ctx, en, call, args, p.target, run), true
	}
	return p, Result{}, false
}

// check is what the gate makes of arguments: refused, or asked about (why),
// or neither; and what a grant would cover (an edit the person approved
// may no longer need asking, and their grant still covers what it does).
func (e *Executor) check(ctx context.Context, en *entry, args Args) Check {
	if en.refuser != nil {
		if ref := refusalFor(en.refuser, args); ref != nil {
			return Check{Refusal: ref}
		}
	}
	c := Check{Needed: en.spec.RequiresConfirmation}
	if en.rule != nil {
		if ruled, why := confirmationFor(en.rule, args); ruled {
			c.Needed, c.Reason = true, why
		}
	}
	if en.scoper != nil {
		c.Scope = scopeFor(en.scoper, args)
	}
	if en.previewer != nil {
		pv, err := previewFor(ctx, en.previewer, args)
		if err != nil {
			c.Invalid = printable(err.Error())
		}
		c.Preview = pv
	}
	return c
}

// confirm runs step 3 for a prepared call (position and of place it among
// the turn's calls that ask). It returns the arguments to run (the
// person's edit, with asked set to the model's), the context marked
// Confirmed when the call passed confirmation, and ok=false with the
// failed result when the call must not run.
func (e *Executor) confirm(ctx context.Context, p *pending, position, of int) (_, asked Args, _ context.Context, _ Result, ok bool) {
	pol, en, call, args, run, target := e.policy, p.en, p.call, p.args, p.run, p.target
	if !p.check.Needed {
		if en.spec.WaivedBy != "" {
			pol.record(AuditEntry{Tool: target, Via: via(call.Name, target), Args: args, Decision: Allowed, By: ByConfig,
				Reason: en.spec.WaivedBy, CallID: call.ID, Session: sessionFrom(ctx)}, run, e.bus)
		}
		return args, nil, withPreview(ctx, p.check.Preview), Result{}, true
	}
	req := ConfirmRequest{Call: call, Spec: en.spec, Arguments: args, Run: run, Reason: p.check.Reason, Target: target,
		Scope: p.check.Scope, Position: position, Of: of, Preview: p.check.Preview,
		Validate: func(a Args) error { return en.validator.validate(a) },
		Recheck:  func(a Args) Check { return e.check(e.withCall(ctx, p), en, a) }}
	v := pol.decide(ctx, req, e.bus)
	entry := AuditEntry{Tool: target, Via: via(call.Name, target), Args: args, By: v.by, Reason: v.reason, Grant: v.matched,
		CallID: call.ID, Session: sessionFrom(ctx)}
	if !v.allow {
		entry.Decision = Denied
		pol.record(entry, run, e.bus)
		return nil, nil, ctx, e.deny(call, args, v.msg, v.status, run), false
	}
	entry.Decision = Allowed
	scope, preview := p.check.Scope, p.check.Preview
	if v.args != nil {
		// The dialog checked the edit; it is checked again here, where
		// it counts: the schema, what no one may approve, and the tool
		// and scope it reaches now.
		if err := en.validator.validate(v.args); err != nil {
			entry.Decision, entry.Reason = Denied, "the edited arguments are invalid: "+err.Error()
			pol.record(entry, run, e.bus)
			return nil, nil, ctx, e.deny(call, args, invalidArgs(err), StatusError, run), false
		}
		asked, args = args, v.args
		entry.Args, entry.AskedArgs, entry.Decision = args, asked, Edited
		edited := e.check(e.withCall(ctx, p), en, args)
		if ref := edited.Refusal; ref != nil {
			return nil, nil, ctx, e.refuse(ctx, p, args, ref, "the edit: "), false
		}
		if edited.Invalid != "" {
			entry.Decision, entry.Reason = Denied, "the edit cannot work: "+edited.Invalid
			pol.record(entry, run, e.bus)
			return nil, nil, ctx, e.deny(call, args, edited.Invalid, StatusError, run), false
		}
		if t := e.targetOf(en, call, args); t != target {
			target, entry.Tool, entry.Via = t, t, via(call.Name, t)
			if t != call.Name && pol.turnedOff(t) {
				entry.Decision, entry.Reason = Denied, "the edit reaches "+t+", which is turned off"
				pol.record(entry, run, e.bus)
				return nil, nil, ctx, e.refuseOff(ctx, en, call, args, t, run), false
			}
		}
		scope, preview = edited.Scope, edited.Preview
	}
	if g, why := pol.keep(v.grant, target, scope, run, e.bus); g != "" {
		entry.Grant = g
		if why != "" {
			entry.Reason = why
		}
	}
	pol.record(entry, run, e.bus)
	return args, asked, withPreview(context.WithValue(ctx, confirmedKey{}, true), preview), Result{}, true
}

// withPreview hands the change that was shown (or worked out) to the
// tool, which writes it only if the files are still as they were.
func withPreview(ctx context.Context, p *Preview) context.Context {
	if p == nil {
		return ctx
	}
	return context.WithValue(ctx, previewKey{}, p)
}

// refuse ends a call no one may approve, recording it in the audit log.
// what prefixes the rule in the record ("the edit: ").
func (e *Executor) refuse(ctx context.Context, p *pending, args Args, ref *Refusal, what string) Result {
	by := ref.By
	if by == "" {
		by = ByProtected
	}
	e.policy.record(AuditEntry{Tool: p.target, Via: via(p.call.Name, p.target), Args: args, Decision: Denied, By: by,
		Reason: what + ref.Rule, CallID: p.call.ID, Session: sessionFrom(ctx)}, p.run, e.bus)
	return e.deny(p.call, args, ref.Message, StatusDenied, p.run)
}

// targetOf names the tool a call reaches (see Targeter).
func (e *Executor) targetOf(en *entry, call Call, args Args) string {
	if en.targeter != nil {
		if t := targetOf(en.targeter, args); t != "" {
			return t
		}
	}
	return call.Name
}

func via(called, target string) string {
	if called == target || called == "" {
		return ""
	}
	return called
}

// refuseOff ends a call the adapter would make to a tool the person
// turned off.
func (e *Executor) refuseOff(ctx context.Context, en *entry, call Call, args Args, target string, run events.RunInfo) Result {
	e.policy.record(AuditEntry{Tool: target, Via: via(call.Name, target), Args: args, Decision: Denied, By: ByToolsTab,
		Reason: "the tool is turned off", CallID: call.ID, Session: sessionFrom(ctx)}, run, e.bus)
	return e.deny(call, args, fmt.Sprintf("Tool '%s' is turned off, so %s may not call it. Ask the user to turn it on in the Tools tab.", target, en.spec.Name), StatusDenied, run)
}
