package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/jarvis-workbench/jarvis/tools"
)

func TestDialogShowsWhyTheCallAsks(t *testing.T) {
	m := newTestModel(t, 100, 30)
	run := fakeRun(m, "read my hosts file")
	desc := strings.Repeat("Read the contents of a UTF-8 text file. ", 6)
	m.Update(confirmRequestMsg{req: tools.ConfirmRequest{
		Call:      tools.Call{ID: "k1", Name: "file_read"},
		Spec:      tools.Spec{Name: "file_read", Description: desc},
		Arguments: tools.Args{"path": "/etc/hosts"}, Run: run,
		Reason: "reads /etc/hosts, outside the working directory",
	}, reply: make(chan tools.Decision, 1), once: new(syncOnce)})
	text := ansi.Strip(strings.Join(boxRows(t, screen(t, m), "╔", "╚"), "\n"))
	if !strings.Contains(text, "reads /etc/hosts, outside the working directory") {
		t.Fatalf("the dialog does not say why it asks:\n%s", text)
	}
	if strings.Index(text, "reads /etc/hosts") > strings.Index(text, "Read the contents") {
		t.Errorf("the reason must come before the description:\n%s", text)
	}
}
