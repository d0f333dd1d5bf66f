package tui

import (
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/app/history"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/tools"
)

// A reopened session's write panel shows the diff the person approved,
// as the live panel did: collapsed its summary, expanded the lines.
func TestAReopenedWritePanelShowsItsDiff(t *testing.T) {
	const diff = "--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-draft\n+final\n"
	res := tools.OK("Edited notes.txt.").WithMeta(tools.MetaDiff, diff)
	res.ToolName, res.Status = "file_edit", tools.StatusOK
	call := engine.ToolCall{ID: "c1", Name: "file_edit", Arguments: `{"path":"notes.txt","old_string":"draft","new_string":"final"}`}
	var msgs []sessions.Message
	for i, a := range []agent.Appended{
		{Message: engine.Message{Role: engine.RoleUser, Content: "finish the notes"}},
		{Message: engine.Message{Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{call}}},
		{Message: engine.Message{Role: engine.RoleTool, Content: res.Content, ToolName: "file_edit", ToolCallID: "c1"}, Result: &res},
		{Message: engine.Message{Role: engine.RoleAssistant, Content: "Done."}},
	} {
		m := history.Stored(a)
		m.Seq = i + 1
		msgs = append(msgs, m)
	}
	var panel *toolPanel
	for _, it := range itemsOf(msgs, 0) {
		if a, ok := it.(*assistantItem); ok {
			panel = a.panels["c1"]
		}
	}
	if panel == nil || panel.diff != diff || panel.state != panelOK {
		t.Fatalf("the reopened panel: %+v", panel)
	}
	m := newTestModel(t, 120, 40)
	collapsed := strings.Join(panel.render(m.renderCtx(100), 100), "\n")
	if !strings.Contains(collapsed, "+1 −1 notes.txt") {
		t.Fatalf("the collapsed panel does not sum the diff up:\n%s", collapsed)
	}
}
