package tools

import (
	"context"
	"strings"
	"sync"
	"unicode"

	"github.com/jarvis-workbench/jarvis/events"
)

// Decision is a person's answer to a confirmation request.
type Decision int

// Decisions. The zero value denies, so a confirmer that forgets to answer
// never lets a harmful call through.
const (
	Deny Decision = iota
	AllowOnce
	AllowSession
	// AllowAlways allows the tool from now on, in every session, until
	// the approval is revoked (`jarvis approvals revoke`).
	AllowAlways
)

func (d Decision) String() string {
	switch d {
	case AllowOnce:
		return "allow once"
	case AllowSession:
		return "allow for session"
	case AllowAlways:
		return "always allow"
	}
	return "deny"
}

// ConfirmRequest is what a Confirmer is asked: the call, the tool's spec (its
// description belongs in the dialog) and the parsed arguments to show in full.
type ConfirmRequest struct {
	Call      Call
	Spec      Spec
	Arguments Args
	Run       events.RunInfo
	// Reason says why this call needs approval when the tool decided so for
	// its arguments ("reads /etc/hosts, outside the working directory"); ""
	// when the spec requires confirmation for every call. It is plain text,
	// without control characters.
	Reason string
	// Target is the tool the call reaches and the name its approvals are
	// kept under: the tool itself, or for the MCP adapter the server's
	// tool it is about to call (SERVER__TOOL).
	Target string
	// Validate checks edited arguments against the tool's schema; nil
	// when the arguments cannot be edited.
	Validate func(Args) error
	// CanAlways says approvals can be remembered across sessions, so
	// "always allow" may be offered.
	CanAlways bool
}

// Answer is a confirmer's full answer: the decision, and what the person
// added to it.
type Answer struct {
	Decision Decision
	// Arguments, when not nil, are the arguments the person edited and
	// approved: they run instead of the model's.
	Arguments Args
	// Reason is why the person denied the call; the model reads it.
	Reason string
}

// Answerer is a Confirmer that can answer more than a decision (edited
// arguments, a reason for a denial). The policy asks through Answer when a
// confirmer has it.
type Answerer interface {
	Answer(ctx context.Context, req ConfirmRequest) (Answer, error)
}

// Name is the name approvals of this call are kept under (Target, or the
// tool's own name).
func (r ConfirmRequest) Name() string {
	switch {
	case r.Target != "":
		return r.Target
	case r.Call.Name != "":
		return r.Call.Name
	}
	return r.Spec.Name
}

// Because returns ": it REASON" when the tool gave a reason, "" otherwise,
// to end a sentence such as "Tool 'file_read' needs your approval".
func (r ConfirmRequest) Because() string {
	if r.Reason == "" {
		return ""
	}
	return ": it " + r.Reason
}

// ConfirmationRule is implemented by tools whose need for confirmation
// depends on the arguments: file_read asks before reading outside the
// working directory and nowhere else. The executor asks when the spec
// requires confirmation or the rule does for the call, so the confirm
// setting can add asking but never remove what the rule asks for. reason
// completes "it ..." and is shown to the person.
type ConfirmationRule interface {
	ConfirmationFor(args Args) (needed bool, reason string)
}

// confirmedKey marks the context of a call that passed confirmation.
type confirmedKey struct{}

// Confirmed reports whether ctx is that of a call the person approved
// (once, or for the session) because it needed confirmation. A tool with a
// ConfirmationRule checks it in Execute, so a call that reaches it some
// other way than through the executor's gate (or whose target changed
// since the rule looked) is still refused.
func Confirmed(ctx context.Context) bool {
	ok, _ := ctx.Value(confirmedKey{}).(bool)
	return ok
}

// DecidesPerCall reports whether t asks for confirmation depending on
// its arguments (file_read outside the working directory), so listings can
// say "per call" instead of a flat no that would be untrue.
func DecidesPerCall(t Tool) bool { return ruleOf(t) != nil }

// ruleOf returns t's confirmation rule, looking under settings wrappers.
func ruleOf(t Tool) ConfirmationRule {
	for {
		if r, ok := t.(ConfirmationRule); ok {
			return r
		}
		u, ok := t.(interface{ Unwrap() Tool })
		if !ok {
			return nil
		}
		t = u.Unwrap()
	}
}

// confirmationFor runs a tool's rule. A rule that panics asks: a check that
// could not be made must not let the call through unasked.
func confirmationFor(rule ConfirmationRule, args Args) (needed bool, reason string) {
	defer func() {
		if p := recover(); p != nil {
			needed, reason = true, "could not be checked before running"
		}
	}()
	needed, reason = rule.ConfirmationFor(args)
	return needed, printable(reason)
}

// printable drops control characters (escape sequences included) from a
// reason, which may quote what a model wrote.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
}

// Confirmer asks someone (a dialog, a terminal prompt, a policy) whether a
// call that needs confirmation may run. It blocks until answered or until
// ctx ends; an error counts as no answer and the call does not run.
type Confirmer interface {
	Confirm(ctx context.Context, req ConfirmRequest) (Decision, error)
}

// ConfirmFunc adapts a function to Confirmer.
type ConfirmFunc func(ctx context.Context, req ConfirmRequest) (Decision, error)

// Confirm calls f.
func (f ConfirmFunc) Confirm(ctx context.Context, req ConfirmRequest) (Decision, error) {
	return f(ctx, req)
}

// AllowAll approves every call: what `--yes` means, and only that.
var AllowAll Confirmer = ConfirmFunc(func(context.Context, ConfirmRequest) (Decision, error) {
	return AllowOnce, nil
})

// DenyAll refuses every call, for runs where nobody can answer and nothing
// was approved beforehand.
var DenyAll Confirmer = ConfirmFunc(func(context.Context, ConfirmRequest) (Decision, error) {
	return Deny, nil
})

// AllowOnly approves the named tools and denies the rest. For a call the
// MCP adapter makes, the name is the server's tool (SERVER__TOOL).
func AllowOnly(names ...string) Confirmer {
	allowed := make(map[string]bool, len(names))
	for _, n := range names {
		allowed[n] = true
	}
	return ConfirmFunc(func(_ context.Context, req ConfirmRequest) (Decision, error) {
		if allowed[req.Name()] {
			return AllowOnce, nil
		}
		return Deny, nil
	})
}

// Targeter is implemented by tools that call other tools (the MCP
// adapter): Target names the tool a call with these arguments reaches, so
// that it is that tool which is approved, audited and checked against the
// tools a person turned off. "" means the call reaches no other tool
// (listing a server's tools).
type Targeter interface {
	Target(args Args) string
}

// targeterOf returns t's Targeter, looking under settings wrappers.
func targeterOf(t Tool) Targeter {
	if tg, ok := unwrap(t).(Targeter); ok {
		return tg
	}
	if tg, ok := t.(Targeter); ok {
		return tg
	}
	return nil
}

// targetOf runs a Targeter; one that panics targets nothing it can name,
// and the call is approved under the tool's own name.
func targetOf(tg Targeter, args Args) (name string) {
	defer func() {
		if recover() != nil {
			name = ""
		}
	}()
	return tg.Target(args)
}

// Approvals remembers the tools a person allowed for the rest of a session.
// It is separate from the Executor so that a session keeps its approvals
// when its tool set changes and a new executor is built.
type Approvals struct {
	mu      sync.RWMutex
	allowed map[string]bool
}

// NewApprovals returns an empty set.
func NewApprovals() *Approvals { return &Approvals{allowed: map[string]bool{}} }

// Allow records name as allowed for the session.
func (a *Approvals) Allow(name string) {
	a.mu.Lock()
	a.allowed[name] = true
	a.mu.Unlock()
}

// Revoke forgets a session approval.
func (a *Approvals) Revoke(name string) {
	a.mu.Lock()
	delete(a.allowed, name)
	a.mu.Unlock()
}

// Allowed reports whether name was allowed for the session.
func (a *Approvals) Allowed(name string) bool {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.allowed[name]
}
