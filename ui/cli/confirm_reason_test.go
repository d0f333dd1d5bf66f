package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools"
)

func TestPromptSaysWhyTheCallAsks(t *testing.T) {
	var out bytes.Buffer
	p := newPromptConfirmer(strings.NewReader("n\n"), &out)
	req := tools.ConfirmRequest{Spec: tools.Spec{Name: "file_read", Description: "Reads a file."},
		Arguments: tools.Args{"path": "/etc/hosts"}, Reason: "reads /etc/hosts, outside the working directory"}
	if d, err := p.Confirm(context.Background(), req); d != tools.Deny || err != nil {
		t.Fatalf("decision %v %v", d, err)
	}
	if !strings.Contains(out.String(), "Tool 'file_read' needs your approval: it reads /etc/hosts, outside the working directory.\n") {
		t.Errorf("prompt: %q", out.String())
	}
}
