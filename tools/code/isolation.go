package code

import (
	"errors"
	"fmt"
	"strings"
)

// readyFrame is the driver's report, sent before it reads any code: what
// confinement it achieved, and notes saying why where it fell short.
type readyFrame struct {
	Type                string          `json:"type"`
	Python              string          `json:"python"`
	Notes               []string        `json:"notes"`
	FilesystemReadonly  bool            `json:"filesystem_readonly"`
	ReadonlyMethod      string          `json:"readonly_method"` // "mount_setattr" or "remount"
	PrivateProc         bool            `json:"private_proc"`
	PrivateDev          bool            `json:"private_dev"`
	TerminalsHidden     bool            `json:"terminals_hidden"`
	CapabilitiesDropped bool            `json:"capabilities_dropped"`
	KeyringPrivate      bool            `json:"keyring_private"`
	Seccomp             bool            `json:"seccomp"`
	Hidden              []string        `json:"hidden"`
	NotHidden           []string        `json:"not_hidden"`
	Limits              map[string]bool `json:"limits"`
}

// frame is one line on the control pipe from the driver.
type frame struct {
	Type     string  `json:"type"`
	ID       int     `json:"id"`
	Status   string  `json:"status"`
	ExitCode int     `json:"exit_code"`
	CPUUsed  float64 `json:"cpu_used"` // the interpreter's CPU seconds so far (repl)
	raw      []byte
}

// isolation says what confinement a process actually got.
type isolation struct {
	namespaces   bool   // user, pid, network, mount, IPC and UTS namespaces
	nsReason     string // why not, when not
	processLimit string // "rlimit", "cgroup" or "none"
	hostUID      int    // who the code runs as, outside
	ready        readyFrame
}

// missing lists the confinement the policy requires that this process did
// not get. What is always required keeps the code from changing the
// user's files, reaching the network or the host's daemons, reading the
// hidden paths or the user's terminal, or using privileges; strict (see
// Config.RequireIsolation) adds every other defence.
func (iso isolation) missing(strict bool) []string {
	var m []string
	add := func(ok bool, what string) {
		if !ok {
			m = append(m, what)
		}
	}
	add(iso.namespaces, missingNamespaces)
	if iso.namespaces {
		add(iso.ready.FilesystemReadonly, "a read-only file system")
		add(len(iso.ready.NotHidden) == 0, "hidden paths ("+strings.Join(iso.ready.NotHidden, ", ")+")")
		add(iso.ready.TerminalsHidden, "the host's terminals out of reach")
	}
	add(iso.ready.CapabilitiesDropped, "dropped capabilities")
	if strict {
		add(iso.ready.Seccomp, "the seccomp filter")
		add(iso.ready.KeyringPrivate, "a private keyring")
		add(iso.ready.PrivateProc, "a private /proc")
		add(iso.ready.PrivateDev, "a private /dev")
		add(iso.processLimit != "none", "a process limit")
	}
	return m
}

// meta is the isolation as result metadata: confined says whether all that
// is normally required was in force; the rest says what was.
func (iso isolation) meta() map[string]any {
	m := map[string]any{
		"confined":             len(iso.missing(false)) == 0,
		"namespaces":           iso.namespaces,
		"filesystem_readonly":  iso.ready.FilesystemReadonly,
		"private_proc":         iso.ready.PrivateProc,
		"private_dev":          iso.ready.PrivateDev,
		"terminals_hidden":     iso.ready.TerminalsHidden,
		"capabilities_dropped": iso.ready.CapabilitiesDropped,
		"keyring_private":      iso.ready.KeyringPrivate,
		"seccomp":              iso.ready.Seccomp,
		"process_limit":        iso.processLimit,
		"host_uid":             iso.hostUID,
		"python_version":       iso.ready.Python,
	}
	if iso.ready.ReadonlyMethod != "" {
		m["readonly_method"] = iso.ready.ReadonlyMethod
	}
	if len(iso.ready.Hidden) > 0 {
		m["hidden_paths"] = iso.ready.Hidden
	}
	if len(iso.ready.NotHidden) > 0 {
		m["not_hidden_paths"] = iso.ready.NotHidden
	}
	if notes := iso.notes(); len(notes) > 0 {
		m["notes"] = notes
	}
	return m
}

func (iso isolation) notes() []string {
	notes := append([]string(nil), iso.ready.Notes...)
	if iso.nsReason != "" {
		notes = append([]string{iso.nsReason}, notes...)
	}
	return notes
}

// ErrNotConfined is returned when the sandbox could not be set up as the
// configuration requires; the message says what is missing, why, and how
// to allow it.
var ErrNotConfined = errors.New("the sandbox could not be set up")

const missingNamespaces = "namespaces (network, pid and mount isolation)"

// unconfinedAllowed reports whether code may run without the sandbox.
func (c Config) unconfinedAllowed() bool { return c.AllowUnconfined && !c.RequireIsolation }

// enforce applies the configured policy to what a process got: nil when it
// may run code.
func (iso isolation) enforce(cfg Config) error {
	if cfg.unconfinedAllowed() {
		return nil
	}
	missing := iso.missing(cfg.RequireIsolation)
	if len(missing) == 0 {
		return nil
	}
	return refusal(missing, iso.notes(), cfg.RequireIsolation)
}

// refusal builds the ErrNotConfined error.
func refusal(missing, notes []string, strict bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s completely on this machine, so the code was not run. Missing: %s.", ErrNotConfined.Error(), strings.Join(missing, "; "))
	if len(notes) > 0 {
		fmt.Fprintf(&b, " Why: %s.", strings.Join(notes, "; "))
	}
	if strict {
		b.WriteString(" require_isolation = true in the [code] section of the config file requires every defence; " +
			"without it, only namespaces, a read-only file system, the hidden paths, the terminals and the " +
			"capabilities are required.")
		return &notConfinedError{msg: b.String()}
	}
	b.WriteString(" Running it anyway would give it more access than the sandbox allows (it could write to your files " +
		"or reach local services). Fix the cause, or set allow_unconfined = true in the [code] section of the config " +
		"file to run code with whatever isolation is available (each result then says what was in force).")
	return &notConfinedError{msg: b.String()}
}

type notConfinedError struct{ msg string }

func (e *notConfinedError) Error() string { return e.msg }
func (e *notConfinedError) Unwrap() error { return ErrNotConfined }

// describeIsolation is the tools' description of the sandbox as it is on
// this machine, as far as it is known before a run: the model is told the
// truth about what the code can reach.
func describeIsolation(cfg Config) string {
	ns, reason := namespacesUsable()
	unconfinedOK := cfg.unconfinedAllowed()
	switch {
	case !ns && unconfinedOK:
		return "WARNING: the sandbox is not available on this machine (" + reason + "): code runs without network or " +
			"file system isolation, with the access of the user running jarvis. "
	case !ns:
		return "The sandbox is not available on this machine (" + reason + "), so code is refused until that is fixed. "
	}
	s := "Sandbox: no network access (local services and Unix sockets included); the file system is read-only except " +
		"the current (temporary) directory and a private /tmp; credentials and jarvis's own files are hidden. "
	if unconfinedOK {
		s += "Where the sandbox cannot be set up completely, code runs with what is available (see the result's isolation metadata). "
	}
	return s
}
