package mcp

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/tools"
)

// memAudit keeps audit entries for tests.
type memAudit struct {
	mu      sync.Mutex
	entries []tools.AuditEntry
}

func (a *memAudit) Record(e tools.AuditEntry) {
	a.mu.Lock()
	a.entries = append(a.entries, e)
	a.mu.Unlock()
}

// A call through the adapter is approved, audited and refused as the
// server's tool it reaches: allowing it for the session allows that tool,
// not the adapter, and a tool the person turned off is not reachable.
func TestAdapterApprovalsArePerRealTool(t *testing.T) {
	m := startManager(t, fastOptions(), httpServer(t, "web"))
	waitReady(t, m, "web")
	var asked []string
	asker := tools.ConfirmFunc(func(_ context.Context, req tools.ConfirmRequest) (tools.Decision, error) {
		asked = append(asked, req.Name())
		return tools.AllowSession, nil
	})
	audit := &memAudit{}
	off := map[string]bool{"web__add": true}
	pol := tools.NewPolicy(tools.PolicyOptions{Source: tools.SourceTUI, Asker: asker, Audit: audit,
		TurnedOff: func(n string) bool { return off[n] }})
	e, err := tools.NewExecutor([]tools.Tool{NewAdapter(func() *Manager { return m })}, tools.ExecutorOptions{Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxTimeout(t, 20*time.Second)
	echo := call(AdapterName, `{"server":"web","tool":"echo","arguments":{"text":"hi"}}`)
	for range 2 {
		if r := e.Execute(ctx, echo); !r.Success {
			t.Fatalf("echo through the adapter: %+v", r)
		}
	}
	if len(asked) != 1 || asked[0] != "web__echo" {
		t.Fatalf("asked about %v, want web__echo once", asked)
	}
	if pol.Approvals().Allowed(AdapterName) || !pol.Approvals().Allowed("web__echo") {
		t.Fatal("the session approval was kept under the adapter, not under the tool it reached")
	}
	// The approval of echo does not reach the server's other tools.
	if r := e.Execute(ctx, call(AdapterName, `{"server":"web","tool":"image"}`)); !r.Success {
		t.Fatalf("image: %+v", r)
	}
	if len(asked) != 2 || asked[1] != "web__image" {
		t.Fatalf("asked about %v, want web__image asked on its own", asked)
	}
	r := e.Execute(ctx, call(AdapterName, `{"server":"web","tool":"add","arguments":{"a":1,"b":2}}`))
	if r.Success || r.Status != tools.StatusDenied || !strings.Contains(r.Content, "web__add' is turned off") {
		t.Fatalf("a turned-off tool was reached through the adapter: %+v", r)
	}
	if len(asked) != 2 {
		t.Fatalf("a turned-off tool was asked about: %v", asked)
	}
	audit.mu.Lock()
	defer audit.mu.Unlock()
	last := audit.entries[len(audit.entries)-1]
	if last.Tool != "web__add" || last.Via != AdapterName || last.Decision != tools.Denied || last.By != tools.ByToolsTab {
		t.Fatalf("the refusal was audited as %+v", last)
	}
	first := audit.entries[0]
	if first.Tool != "web__echo" || first.By != tools.ByPerson || first.Source != tools.SourceTUI {
		t.Fatalf("the first decision was audited as %+v", first)
	}
}
