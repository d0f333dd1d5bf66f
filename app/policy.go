package app

import (
	"github.com/jarvis-workbench/jarvis/app/config"
	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/approvals"
	"github.com/jarvis-workbench/jarvis/store/audit"
	"github.com/jarvis-workbench/jarvis/tools"
)

// PolicyOptions are what every approval policy of a process shares: the
// config's confirm settings, the always-approvals and the audit log in
// db. Without a database (nil) there are neither, and confirmation still
// works. The caller adds where it decides (Source), who can be asked and
// --yes.
func PolicyOptions(cfg *config.Config, db *store.DB) tools.PolicyOptions {
	var o tools.PolicyOptions
	if cfg != nil {
		o.Overrides = tools.ConfigOverrides(cfg.Tool)
	}
	if db != nil {
		o.Always = approvals.New(db)
		o.Audit = AuditLog{audit.New(db)}
	}
	return o
}

// AuditLog writes a policy's decisions to the database's audit log.
type AuditLog struct{ Log *audit.Log }

// Record queues e for the audit log.
func (l AuditLog) Record(e tools.AuditEntry) {
	l.Log.Record(audit.Entry{
		Time: e.Time, Tool: e.Tool, Via: e.Via, Args: e.Args, AskedArgs: e.AskedArgs,
		Decision: string(e.Decision), By: e.By, Source: e.Source, Session: e.Session, Task: e.Task,
		Reason: e.Reason, Grant: e.Grant, CallID: e.CallID,
	})
}
