package sessions

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestExportMarkdownGolden exports a stored session with every kind of
// message and compares it with testdata/export.golden.md.
func TestExportMarkdownGolden(t *testing.T) {
	s := newStore(t)
	s.now = func() time.Time { return t0 }
	sess, err := s.Create(Meta{Model: "qwen3:8b", Agent: "orchestrator", Tools: []string{"calculator", "file_read"}})
	if err != nil {
		t.Fatal(err)
	}
	msgs := sample()
	// A result whose call is not in the transcript, arguments that are not
	// JSON, a call without a result, and content with a code fence.
	msgs = append(msgs,
		Message{Role: RoleUser, Content: "Show a fence:", CreatedAt: t0.Add(26 * time.Hour)},
		Message{Role: RoleAssistant, Content: "Here:\n\n```go\nfmt.Println(1)\n```", Model: "qwen3:8b", CreatedAt: t0.Add(26*time.Hour + time.Second),
			ToolCalls: []ToolCall{{ID: "call_3", Name: "python", Arguments: "print(1"}}},
		Message{Role: RoleTool, Content: "```\nraw\n```", ToolName: "web_fetch", ToolCallID: "gone",
			Result: &ToolResult{Success: false, Status: "timeout", LatencySeconds: 30, CostUSD: 0}, CreatedAt: t0.Add(26*time.Hour + 2*time.Second)},
	)
	s.now = func() time.Time { return t0.Add(26*time.Hour + 3*time.Second) }
	if err := s.Append(sess.ID, msgs...); err != nil {
		t.Fatal(err)
	}
	got, stored, err := s.Load(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The id is random; the golden file has a fixed one.
	got.ID = "01jpa3k8c0abcdef"
	out := ExportMarkdown(got, stored)

	golden := filepath.Join("testdata", "export.golden.md")
	if *update {
		if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if out != string(want) {
		t.Errorf("export differs from %s (go test -update rewrites it after review):\n%s", golden, out)
	}
}

func TestExportEmptyAndFences(t *testing.T) {
	out := ExportMarkdown(Session{ID: "x"}, nil)
	for _, want := range []string{"# Untitled session", "_No messages yet._", "- Messages: 0", "- Total cost: $0.0000"} {
		if !strings.Contains(out, want) {
			t.Errorf("empty export lacks %q:\n%s", want, out)
		}
	}
	if got := fenced("a ```` b", "text"); !strings.HasPrefix(got, "`````text\n") || !strings.HasSuffix(got, "\n`````") {
		t.Errorf("fence = %q", got)
	}
	if got, lang := prettyJSON(`{"b":1,"a":[1,2]}`); lang != "json" || got != "{\n  \"b\": 1,\n  \"a\": [\n    1,\n    2\n  ]\n}" {
		t.Errorf("pretty = %q %s", got, lang)
	}
}
