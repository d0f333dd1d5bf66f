package tools

import (
	"context"
	"fmt"
	"strings"
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
	// AllowSession grants the call's scope (ConfirmRequest.Scope) for the
	// rest of the session.
	AllowSession
	// AllowAlways grants the call's always-scope (Scope.AlwaysScope) in
	// every session, until revoked (`jarvis approvals revoke`). For a
	// tool whose calls are scoped by their exact arguments that is the
	// whole tool, which a front end asks about a second time before
	// answering this.
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
	// Scope is what "for this session" grants (and, through
	// Scope.AlwaysScope, "always"): a front end names it in words before
	// the person answers.
	Scope Scope
	// Validate checks edited arguments against the tool's schema; nil
	// when the arguments cannot be edited.
	Validate func(Args) error
	// Recheck says what edited arguments would be asked about (their
	// reason and scope) or why they would be refused, so the last
	// approval of an edit shows the edited call and not the model's.
	Recheck func(Args) Check
	// CanAlways says approvals can be remembered across sessions, so
	// "always allow" may be offered.
	CanAlways bool
	// Position and Of place the request among the calls of one turn that
	// needed confirmation ("1 of 2"), asked in the order the model made
	// them; Of is 0 or 1 for a call made alone.
	Position, Of int
	// Preview is what the call would change (the files' content before
	// and after), for tools that change files; nil otherwise.
	Preview *Preview
}

// Check is what the executor's gate makes of a call's arguments before
// anyone is asked.
type Check struct {
	// Refusal, when set, means the call is refused whatever anyone says.
	Refusal *Refusal
	// Needed says the call needs confirmation, Reason why (for tools that
	// decide per call), Scope what a grant would cover.
	Needed bool
	Reason string
	Scope  Scope
	// Preview is the change the arguments would make (see Previewer);
	// Invalid, when set, says why they cannot work (the call fails
	// with it, nobody is asked).
	Preview *Preview
	Invalid string
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

// Refusal is a call a tool will not make, whoever approves it: a secret
// file, a path past a hard limit of the config.
type Refusal struct {
	// Message is the failed result the model reads ("Access denied: ...").
	Message string
	// By is who set the rule, for the audit log (ByProtected, ByConfig).
	By string
	// Rule names it for the audit log ("holds SSH keys", "outside
	// [tool.file_read] allowed_dirs").
	Rule string
}

// Refuser is implemented by tools that refuse some calls outright, before
// anyone is asked and whatever grants, --yes or approve lists say. The
// executor records every refusal in the audit log. A tool checks again in
// Execute (a file can change between the check and the read).
type Refuser interface {
	Refuse(args Args) *Refusal
}

// refusalFor runs a Refuser; one that panics refuses: a check that could
// not be made must not let the call through.
func refusalFor(r Refuser, args Args) (ref *Refusal) {
	defer func() {
		if p := recover(); p != nil {
			ref = &Refusal{Message: "The call was refused: its safety check failed.", By: ByProtected, Rule: fmt.Sprint("the check panicked: ", p)}
		}
	}()
	ref = r.Refuse(args)
	if ref != nil {
		ref.Rule = printable(ref.Rule)
	}
	return ref
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
func DecidesPerCall(t Tool) bool {
	_, ok := under[ConfirmationRule](t)
	return ok
}

// under returns the first of t and the tools it wraps (settings wrappers)
// that implements I: the wrappers change a spec, never what a tool does.
func under[I any](t Tool) (I, bool) {
	for {
		if x, ok := t.(I); ok {
			return x, true
		}
		u, ok := t.(interface{ Unwrap() Tool })
		if !ok {
			var none I
			return none, false
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
