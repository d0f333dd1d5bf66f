package tools

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jarvis-workbench/jarvis/events"
)

// One policy decides, for every way jarvis runs tools (the workbench, `ask`,
// `tools run`, scheduled tasks, evals), whether a call that needs
// confirmation may run. Its layers, first word first:
//
//  1. the config: `[tool.NAME] confirm = true` makes the tool ask even when
//     it is always-allowed (and `confirm = false` lets it run unasked,
//     which is recorded as allowed by config);
//  2. grants the person gave for this session ("allow for session");
//  3. always-grants, remembered in the database across sessions;
//  4. `--yes`;
//  5. a scheduled task's approve list;
//  6. a person, when one can be asked;
//  7. otherwise the call is denied.
//
// Grants are per real tool and cover one scope (see grant.go): a call the
// MCP adapter makes is approved under the server's tool it reaches
// (SERVER__TOOL), never under mcp_adapter, so allowing the adapter once
// does not silence every server; a read outside the working directory
// approved for the session covers that directory, not the disk. --yes and
// approve lists are tool-wide and explicit, yet an approve list never
// widens a directory to "anywhere": a file tool's read outside runs unasked
// only with a grant of its directory, allowed_dirs, or --yes. Before any layer, a
// tool's Refuser refuses what no one may approve (secrets, a hard limit of
// the config). Every decision is written to the audit log when the policy
// has one.

// Where a decision was made (AuditEntry.Source).
const (
	SourceTUI       = "tui"
	SourceAsk       = "ask"
	SourceToolsRun  = "tools run"
	SourceScheduler = "scheduler"
	SourceEval      = "eval"
	// SourceSDK: a Go program asking through package sdk.
	SourceSDK = "sdk"
)

// Who or what decided (AuditEntry.By).
const (
	ByPerson     = "person"
	BySession    = "session approval"
	ByAlways     = "always-approval"
	ByYes        = "yes to all"
	ByApprove    = "approved for the run"
	ByTask       = "task approve list"
	ByNoTerminal = "no terminal"
	ByNobody     = "nobody to ask"
	ByConfig     = "config"
	ByToolsTab   = "tools tab"
	// ByProtected: a rule no approval lifts (secrets, jarvis's own files).
	ByProtected = "protected files"
	// ByDanger: a command whose only use is to wreck the machine (wiping
	// / or the home directory, a fork bomb, raw disk writes).
	ByDanger = "destructive command rule"
)

// Outcome is what became of a call (AuditEntry.Decision).
type Outcome string

// Outcomes.
const (
	Allowed Outcome = "allowed"
	Denied  Outcome = "denied"
	// Edited: allowed with arguments the person changed.
	Edited Outcome = "edited"
)

// AuditEntry is one decision about one call.
type AuditEntry struct {
	Time time.Time `json:"time"`
	// Tool is the real tool (SERVER__TOOL for a call through the adapter).
	Tool string `json:"tool"`
	// Via is the tool the model called when it is not Tool (mcp_adapter).
	Via string `json:"via,omitempty"`
	// Args are the arguments as they ran (or would have), redacted.
	Args Args `json:"args"`
	// AskedArgs are the arguments as first asked, when the person edited
	// them; redacted.
	AskedArgs Args    `json:"asked_args,omitempty"`
	Decision  Outcome `json:"decision"`
	By        string  `json:"by"`
	Source    string  `json:"source"`
	Session   string  `json:"session,omitempty"`
	Task      string  `json:"task,omitempty"`
	// Reason says why: the person's words for a denial, the tool's own
	// reason for asking, the config setting.
	Reason string `json:"reason,omitempty"`
	// Grant is the grant that let the call run, or the one the person
	// gave with this answer, in words ("session: file_read: reads in
	// /etc").
	Grant  string `json:"grant,omitempty"`
	CallID string `json:"call_id,omitempty"`
}

// AuditLog receives every decision. Record must not block for long: the
// call waits for it (store/audit hands the write to the database's queue).
type AuditLog interface {
	Record(AuditEntry)
}

// AlwaysApprovals are the grants that hold in every session
// (store/approvals keeps them in the database).
type AlwaysApprovals interface {
	// AlwaysMatch returns the grant that covers a call of tool in scope.
	AlwaysMatch(tool string, scope Scope) (Grant, bool, error)
	AllowAlways(g Grant) error
}

// TaskApproval is what a scheduled task approved when it was created,
// or what an evaluation's suite approves.
type TaskApproval struct {
	ID       string
	Approved []string
	// Within is a directory whose files the approved tools may change
	// too (resolved; "" for none): an evaluation's scratch directory,
	// which nothing outside the run ever reads. A tool-wide approval
	// never covers a file tool's directory anywhere else.
	Within string
}

// covers reports whether the approve list lets a call of tool in scope
// run: a tool-wide scope of an approved tool, or a directory inside
// Within.
func (t *TaskApproval) covers(tool string, scope Scope) bool {
	if !slices.Contains(t.Approved, tool) {
		return false
	}
	if scope.WideGrantable() {
		return true
	}
	return t.Within != "" && scope.Kind == ScopeDir &&
		(scope.Value == t.Within || strings.HasPrefix(scope.Value, t.Within+string(filepath.Separator)))
}

// PolicyOptions configure NewPolicy. Every field is optional; the zero
// value asks nobody and so denies every call that needs confirmation.
type PolicyOptions struct {
	// Source says where calls are made (SourceTUI, SourceAsk, ...).
	Source string
	// Overrides are the config's `[tool.NAME] confirm` settings by tool
	// (see ConfigOverrides).
	Overrides map[string]bool
	// Always holds the always-approvals; nil: none.
	Always AlwaysApprovals
	// Yes approves every call (`--yes`).
	Yes bool
	// Approve lists the tools a command approves for its run (`ask
	// --approve`): tool-wide, as a task's approve list is, so never a
	// file tool's reach past the working directory (Scope.WideGrantable).
	Approve []string
	// Task, for a scheduled run: its approve list, and nobody is asked.
	Task *TaskApproval
	// Asker asks a person; nil when nobody can be asked.
	Asker Confirmer
	// Nobody is who denies when there is no Asker (ByNoTerminal for a
	// command without a terminal; ByNobody when empty).
	Nobody string
	// Audit receives every decision; nil records none.
	Audit AuditLog
	// Session returns the current session's id for the audit log.
	Session func() string
	// TurnedOff reports tools the person turned off: a call the adapter
	// would make to one of them is refused.
	TurnedOff func(name string) bool
	// Approvals are the session's approvals; nil starts an empty set.
	Approvals *Approvals
	// Bus receives a confirmation_answer event for each decision, so a
	// UI can show them as they happen. The executor's bus when nil.
	Bus events.Publisher
	// OnDecision, when set, is told every decision after it is recorded
	// (a scheduled run notes the tools it was denied).
	OnDecision func(AuditEntry)
}

// Policy decides confirmations for every executor of one place (a
// workbench, a command, a task run). It is safe for concurrent use.
type Policy struct {
	mu sync.RWMutex
	o  PolicyOptions
	// asking serialises requests to a person: parallel calls to one tool
	// ask one at a time, so "allow for the session" given to the first
	// answers the others.
	asking sync.Mutex
}

// NewPolicy returns the policy o describes.
func NewPolicy(o PolicyOptions) *Policy {
	if o.Approvals == nil {
		o.Approvals = NewApprovals()
	}
	return &Policy{o: o}
}

// EvalPolicy is the policy of an evaluation run: nobody is asked; the
// tools in approved run without asking (all of them with yes), the file
// tools among them in the case's scratch directory (scratch; "" for
// none) and nowhere else; the rest of the calls that need confirmation
// are denied; audit (nil: none) records it all under SourceEval.
func EvalPolicy(approved []string, scratch string, yes bool, overrides map[string]bool, audit AuditLog) *Policy {
	if scratch != "" {
		if real, err := filepath.EvalSymlinks(scratch); err == nil {
			scratch = real
		} else {
			scratch = "" // a directory that cannot be resolved covers nothing
		}
	}
	return NewPolicy(PolicyOptions{Source: SourceEval, Yes: yes, Overrides: overrides, Audit: audit,
		Task: &TaskApproval{Approved: slices.Clone(approved), Within: scratch}, Nobody: ByNobody})
}

type sessionKey struct{}

// WithSession tells the policy, through a run's context, which session
// its calls belong to; id is read when a decision is recorded (a session
// may be created while its first run goes on).
func WithSession(ctx context.Context, id func() string) context.Context {
	return context.WithValue(ctx, sessionKey{}, id)
}

func sessionFrom(ctx context.Context) string {
	if f, ok := ctx.Value(sessionKey{}).(func() string); ok && f != nil {
		return f()
	}
	return ""
}

// ConfigOverrides extracts the config's confirm settings from per-tool
// settings.
func ConfigOverrides(settings map[string]Settings) map[string]bool {
	out := map[string]bool{}
	for name, s := range settings {
		if s.RequiresConfirmation != nil {
			out[name] = *s.RequiresConfirmation
		}
	}
	return out
}

// Confirm lets a Policy stand where a Confirmer is expected: an executor
// given a Policy as its Confirmer uses it as its policy (with its audit
// log and every layer). Called directly, it runs the layers, records the
// decision, keeps a grant the person gave and answers it (edits and
// reasons are left out).
func (p *Policy) Confirm(ctx context.Context, req ConfirmRequest) (Decision, error) {
	v := p.decide(ctx, req, events.Discard)
	e := AuditEntry{Tool: req.Name(), Via: via(req.Call.Name, req.Name()), Args: req.Arguments, By: v.by,
		Reason: v.reason, Grant: v.matched, CallID: req.Call.ID, Session: sessionFrom(ctx), Decision: Denied}
	if v.allow {
		e.Decision = Allowed
		if g, why := p.keep(v.grant, req.Name(), req.Scope, req.Run, events.Discard); g != "" {
			e.Grant = g
			if why != "" {
				e.Reason = why
			}
		}
	}
	p.record(e, req.Run, events.Discard)
	if v.allow {
		return AllowOnce, nil
	}
	return Deny, nil
}

// SetAsker replaces who is asked (the workbench installs its dialog once
// the program runs).
func (p *Policy) SetAsker(c Confirmer) {
	p.mu.Lock()
	p.o.Asker = c
	p.mu.Unlock()
}

// Approvals returns the session approvals the policy consults.
func (p *Policy) Approvals() *Approvals { return p.o.Approvals }

// Source returns where the policy decides.
func (p *Policy) Source() string { return p.o.Source }

func (p *Policy) options() PolicyOptions {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.o
}

// turnedOff reports whether name is a tool the person turned off.
func (p *Policy) turnedOff(name string) bool {
	o := p.options()
	return o.TurnedOff != nil && o.TurnedOff(name)
}

// forced reports whether the config insists on asking for name.
func (p *Policy) forced(name string) bool {
	on, set := p.options().Overrides[name]
	return set && on
}

// verdict is the policy's answer for one call.
type verdict struct {
	allow bool
	by    string
	// reason: why, for the audit log (the person's words on a denial).
	reason string
	// matched: the grant that let the call run, in words.
	matched string
	// args: the arguments the person edited, nil when unchanged.
	args Args
	// grant: AllowSession or AllowAlways when the person gave a grant
	// with the answer; kept by the caller once the edit (if any) checks
	// out, for the scope of the arguments that run.
	grant Decision
	// msg and status: the failed result of a denial.
	msg    string
	status Status
}

// decide runs the layers for a call that needs confirmation.
func (p *Policy) decide(ctx context.Context, req ConfirmRequest, bus events.Publisher) verdict {
	name := req.Name()
	if v, ok := p.decideWithoutAsking(name, req.Scope); ok {
		return v
	}
	o := p.options()
	if o.Asker == nil {
		by := o.Nobody
		if by == "" {
			by = ByNobody
		}
		if o.Task != nil {
			return verdict{by: ByTask, reason: "not on the task's approve list", status: StatusDenied,
				msg: fmt.Sprintf("Tool '%s' needs confirmation and was not approved for this scheduled task%s, and nobody can be asked during a scheduled run; it was not run.", name, narrowNote(req))}
		}
		why := ""
		if req.Reason != "" {
			why = " (it " + req.Reason + ")"
		}
		if slices.Contains(o.Approve, name) {
			why += narrowNote(req)
		}
		return verdict{by: by, reason: "nobody could be asked", status: StatusDenied,
			msg: fmt.Sprintf("Tool '%s' requires confirmation%s but no confirmation callback is available.", req.Call.Name, why)}
	}
	p.asking.Lock()
	defer p.asking.Unlock()
	// An answer given while this call waited may have settled it.
	if v, ok := p.decideWithoutAsking(name, req.Scope); ok {
		return v
	}
	if ctx.Err() != nil {
		return cancelledVerdict(req.Call.Name)
	}
	req.CanAlways = o.Always != nil
	p.bus(bus).Publish(events.Event{Type: events.ConfirmAsk, Run: req.Run, Tool: &events.ToolPayload{Tool: req.Call.Name, CallID: req.Call.ID, Index: req.Call.Index, Arguments: req.Arguments}})
	var ans Answer
	var err error
	if a, ok := o.Asker.(Answerer); ok {
		ans, err = a.Answer(ctx, req)
	} else {
		ans.Decision, err = o.Asker.Confirm(ctx, req)
	}
	if err != nil || ctx.Err() != nil {
		return cancelledVerdict(req.Call.Name)
	}
	switch ans.Decision {
	case AllowOnce:
		return verdict{allow: true, by: ByPerson, reason: "allowed once", args: ans.Arguments}
	case AllowSession:
		return verdict{allow: true, by: ByPerson, reason: "allowed for the session", args: ans.Arguments, grant: AllowSession}
	case AllowAlways:
		if !req.CanAlways {
			return verdict{allow: true, by: ByPerson, reason: "allowed for the session", args: ans.Arguments, grant: AllowSession}
		}
		return verdict{allow: true, by: ByPerson, reason: "always allowed from now on", args: ans.Arguments, grant: AllowAlways}
	}
	reason := printable(ans.Reason)
	msg := fmt.Sprintf("Tool '%s' execution denied by user.", req.Call.Name)
	if reason != "" {
		msg = "Denied by the user: " + reason
	}
	return verdict{by: ByPerson, reason: reason, msg: msg, status: StatusDenied}
}

// narrowNote explains, for a scheduled run's denial, why a tool on the
// approve list was still not approved: its call falls in a scope that
// only a grant of that scope covers.
func narrowNote(req ConfirmRequest) string {
	if req.Scope.WideGrantable() {
		return ""
	}
	what := req.Scope.Words
	if what == "" {
		what = req.Scope.Ref()
	}
	return " (an approve list never covers " + what + ": only a grant of the directory, or the tool's allowed_dirs, does)"
}

// decideWithoutAsking applies the layers before a person: ok is false when
// none of them settles the call.
func (p *Policy) decideWithoutAsking(name string, scope Scope) (verdict, bool) {
	o := p.options()
	if g, ok := o.Approvals.Match(name, scope); ok {
		return verdict{allow: true, by: BySession, matched: "session: " + g.Describe()}, true
	}
	if o.Always != nil && !p.forced(name) {
		// A database that cannot be read leaves the call to the next
		// layers: an approval that cannot be checked is not given.
		if g, ok, err := o.Always.AlwaysMatch(name, scope); err == nil && ok {
			return verdict{allow: true, by: ByAlways, matched: "always: " + g.Describe()}, true
		}
	}
	if o.Yes {
		return verdict{allow: true, by: ByYes}, true
	}
	if scope.WideGrantable() && slices.Contains(o.Approve, name) {
		return verdict{allow: true, by: ByApprove}, true
	}
	if o.Task != nil && o.Task.covers(name, scope) {
		return verdict{allow: true, by: ByTask}, true
	}
	return verdict{}, false
}

func cancelledVerdict(tool string) verdict {
	return verdict{by: ByPerson, reason: "the confirmation was cancelled", status: StatusCancelled,
		msg: fmt.Sprintf("Tool '%s' was not run: the confirmation was cancelled.", tool)}
}

// keep records the grant a person gave (dec AllowSession or AllowAlways)
// for tool in scope, and returns it in words for the audit log ("" when
// dec gives none), with a reason when what was kept is less than what
// was asked for. An always-grant that cannot be saved is kept for the
// session, and the bus says so; the call still runs once.
func (p *Policy) keep(dec Decision, tool string, scope Scope, run events.RunInfo, bus events.Publisher) (grant, reason string) {
	o := p.options()
	switch dec {
	case AllowSession:
		g := Grant{Tool: tool, Scope: scope}
		o.Approvals.Grant(g)
		return "session: " + g.Describe(), ""
	case AllowAlways:
		g := Grant{Tool: tool, Scope: scope.AlwaysScope()}
		if o.Always == nil {
			g.Scope = scope
			o.Approvals.Grant(g)
			return "session: " + g.Describe(), "allowed for the session (approvals cannot be remembered here)"
		}
		if err := o.Always.AllowAlways(g); err != nil {
			g.Scope = scope
			o.Approvals.Grant(g)
			p.bus(bus).Publish(events.Event{Type: events.Notice, Run: run,
				Text: fmt.Sprintf("%s could not be always-allowed (%v); it is allowed for this session only.", g.Describe(), err)})
			return "session: " + g.Describe(), "allowed for the session: the always-grant could not be saved: " + err.Error()
		}
		return "always: " + g.Describe(), ""
	}
	return "", ""
}

// record writes e to the audit log and tells the bus.
func (p *Policy) record(e AuditEntry, run events.RunInfo, bus events.Publisher) {
	o := p.options()
	e.Time = time.Now().UTC()
	e.Source = o.Source
	if o.Session != nil && e.Session == "" {
		e.Session = o.Session()
	}
	if o.Task != nil && e.Task == "" {
		e.Task = o.Task.ID
	}
	e.Args = RedactArgs(e.Args)
	e.AskedArgs = RedactArgs(e.AskedArgs)
	if o.Audit != nil {
		o.Audit.Record(e)
	}
	if o.OnDecision != nil {
		o.OnDecision(e)
	}
	text := string(e.Decision) + " by " + e.By
	if e.Reason != "" {
		text += ": " + e.Reason
	}
	tool := e.Tool
	if e.Via != "" {
		tool = e.Via + " → " + e.Tool
	}
	p.bus(bus).Publish(events.Event{Type: events.ConfirmAnswer, Run: run, Text: text, Tool: &events.ToolPayload{Tool: tool, CallID: e.CallID}})
}

// bus is the policy's own bus, else the executor's.
func (p *Policy) bus(fallback events.Publisher) events.Publisher {
	if b := p.options().Bus; b != nil {
		return b
	}
	if fallback == nil {
		return events.Discard
	}
	return fallback
}

// MemoryAudit is an audit log kept in memory: for a program that reads its
// decisions back, and for tests.
type MemoryAudit struct {
	mu      sync.Mutex
	entries []AuditEntry
}

// Record keeps e.
func (m *MemoryAudit) Record(e AuditEntry) {
	m.mu.Lock()
	m.entries = append(m.entries, e)
	m.mu.Unlock()
}

// Entries returns the decisions kept so far, oldest first.
func (m *MemoryAudit) Entries() []AuditEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]AuditEntry(nil), m.entries...)
}
