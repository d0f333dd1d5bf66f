package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
	ot "github.com/jarvis-workbench/jarvis/engine/ollama/ollamatest"
)

// tools describe --tokens counts each tool in both forms; with a server
// that renders prompts, the schema count is what the tool adds to the
// model's rendered prompt, and differs from the bare JSON's.
func TestToolsDescribeTokens(t *testing.T) {
	srv := ot.New(t)
	srv.AddModel(ot.ModelSpec{Name: "tinyt", Capabilities: []string{engine.CapCompletion, engine.CapTools}, Template: ot.TemplateNames})
	srv.AddModel(ot.ModelSpec{Name: "old", Capabilities: []string{engine.CapCompletion, engine.CapTools}, NoRender: true})
	// A server without rendering answers the request for real.
	srv.Default(et.Text("hello"))
	decode := func(out string) toolCosts {
		t.Helper()
		var c toolCosts
		if err := json.Unmarshal([]byte(out), &c); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return c
	}
	out, errOut, code := runCLI(t, "", "tools", "describe", "--tokens", "--json", "--host", srv.URL, "--model", "tinyt", "calculator,think")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rendered := decode(out)
	if code != ExitOK || !rendered.Rendered || len(rendered.Tools) != 2 {
		t.Fatalf("exit %d %s: %+v", code, errOut, rendered)
	}
	out, errOut, code = runCLI(t, "", "tools", "describe", "--tokens", "--json", "--host", srv.URL, "--model", "old", "calculator,think")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	plain := decode(out)
	if plain.Rendered || plain.Tools[0].Schema == 0 || plain.Tools[0].Text == 0 {
		t.Fatalf("estimate without rendering: %+v", plain)
	}
	// The names-only template renders a tool as its name: far cheaper than
	// its JSON schema, which is what that model really reads.
	if rendered.Tools[0].Schema >= plain.Tools[0].Schema {
		t.Fatalf("rendered %d tokens, JSON %d: the rendering was not used", rendered.Tools[0].Schema, plain.Tools[0].Schema)
	}
	out, _, code = runCLI(t, "", "tools", "describe", "--tokens", "--host", srv.URL, "--model", "tinyt", "calculator")
	if code != ExitOK || !strings.Contains(out, "AS SCHEMA (orchestrator)") || !strings.Contains(out, "tinyt's chat template") {
		t.Fatalf("table: %s", out)
	}
}
