package format

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/store"
	"github.com/jarvis-workbench/jarvis/store/sessions"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var t0 = time.Date(2025, 3, 14, 9, 26, 53, 589_793_238, time.UTC)

// sample is a stored exchange with every kind of message.
func sample() []sessions.Message {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	return []sessions.Message{
		{Role: sessions.RoleUser, Content: "What is 6*7, and what is in notes.txt?\nBe brief.", CreatedAt: at(1)},
		{
			Role: sessions.RoleAssistant, Content: "Let me check both.", Thinking: "Two tools, in parallel.",
			Model: "qwen3:8b", CreatedAt: at(3),
			ToolCalls: []sessions.ToolCall{
				{ID: "call_1", Index: 0, Name: "calculator", Arguments: `{"expression":"6*7"}`},
				{ID: "call_2", Index: 1, Name: "file_read", Arguments: `{"path":"notes.txt","max_lines":5}`},
			},
			Usage: &sessions.Usage{PromptTokens: 412, OutputTokens: 38, EvalSeconds: 0.95, TokensPerSec: 40, LoadSeconds: 0.1,
				TotalSeconds: 1.2, CostUSD: 0.0004, WallSeconds: 1.3, ThinkingTokens: 9},
		},
		{Role: sessions.RoleTool, Content: "42", ToolName: "calculator", ToolCallID: "call_1", CreatedAt: at(4),
			Result: &sessions.ToolResult{Success: true, Status: "ok", LatencySeconds: 0.0021, CostUSD: 0}},
		{Role: sessions.RoleTool, Content: "permission denied by the person", ToolName: "file_read", ToolCallID: "call_2", CreatedAt: at(5),
			Result: &sessions.ToolResult{Success: false, Status: "denied", LatencySeconds: 1.5, CostUSD: 0.001, CostEstimated: true,
				Metadata: map[string]any{"path": "notes.txt", "lines": 3.0}}},
		{Role: sessions.RoleNotice, Content: "orchestrator fell back to react", CreatedAt: at(6)},
		{Role: sessions.RoleAssistant, Content: "6*7 = 42. I could not read notes.txt.", Model: "qwen3:8b", CreatedAt: at(8),
			Usage: &sessions.Usage{PromptTokens: 520, OutputTokens: 17, EvalSeconds: 0.4, TokensPerSec: 42.5, TotalSeconds: 0.5, CostUSD: 0.0002}},
		{Role: sessions.RoleError, Content: "Ollama is not reachable at http://127.0.0.1:11434.", CreatedAt: at(9)},
	}
}

// TestSessionMarkdownGolden exports a stored session with every kind of
// message and compares it with testdata/session.golden.md.
func TestSessionMarkdownGolden(t *testing.T) {
	// The session goes through a real store: the export shows what was
	// saved (totals, title, sequence), not what was handed in.
	db, err := store.Open(filepath.Join(t.TempDir(), "j.db"), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := sessions.New(db)
	sessions.SetClock(s, func() time.Time { return t0 })
	sess, err := s.Create(sessions.Meta{Model: "qwen3:8b", Agent: "orchestrator", Tools: []string{"calculator", "file_read"}})
	if err != nil {
		t.Fatal(err)
	}
	msgs := sample()
	// A result whose call is not in the transcript, arguments that are not
	// JSON, a call without a result, and content with a code fence.
	msgs = append(msgs,
		sessions.Message{Role: sessions.RoleUser, Content: "Show a fence:", CreatedAt: t0.Add(26 * time.Hour)},
		sessions.Message{Role: sessions.RoleAssistant, Content: "Here:\n\n```go\nfmt.Println(1)\n```", Model: "qwen3:8b", CreatedAt: t0.Add(26*time.Hour + time.Second),
			ToolCalls: []sessions.ToolCall{{ID: "call_3", Name: "python", Arguments: "print(1"}}},
		sessions.Message{Role: sessions.RoleTool, Content: "```\nraw\n```", ToolName: "web_fetch", ToolCallID: "gone",
			Result: &sessions.ToolResult{Success: false, Status: "timeout", LatencySeconds: 30, CostUSD: 0}, CreatedAt: t0.Add(26*time.Hour + 2*time.Second)},
	)
	sessions.SetClock(s, func() time.Time { return t0.Add(26*time.Hour + 3*time.Second) })
	if err := s.Append(sess.ID, msgs...); err != nil {
		t.Fatal(err)
	}
	got, stored, err := s.Load(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The id is random; the golden file has a fixed one.
	got.ID = "01jpa3k8c0abcdef"
	out := SessionMarkdown(got, stored)

	golden := filepath.Join("testdata", "session.golden.md")
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
	out := SessionMarkdown(sessions.Session{ID: "x"}, nil)
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

// A session with a retry exports the line the model sees, then the other
// attempt; images link to the files the caller wrote.
func TestExportWithBranchesAndImages(t *testing.T) {
	tree := &sessions.Tree{}
	tree.Append(sessions.Message{Role: sessions.RoleUser, Content: "Describe this", CreatedAt: t0,
		Images: []sessions.Image{{SHA256: "abcdef0123456789", Name: "cat_1.png", MIMEType: "image/png", Bytes: 2048, Width: 64, Height: 48}}})
	tree.Append(sessions.Message{Role: sessions.RoleAssistant, Content: "A dog.", CreatedAt: t0})
	b := tree.Branch(1, sessions.ReasonRetry, t0)
	tree.Append(sessions.Message{Role: sessions.RoleAssistant, Content: "A cat.", CreatedAt: t0})
	sess := sessions.Session{ID: "s1", Title: "cats", Branch: b.ID, Branches: tree.Branches, Messages: 3}

	out := SessionMarkdownWith(sess, tree.Messages, ExportOptions{ImageLink: func(im sessions.Image) string { return "x-images/" + im.SHA256[:8] + ".png" }})
	for _, want := range []string{
		"- Branches: 2 (retries and edits)",
		`![cat\_1.png](<x-images/abcdef01.png>) *cat\_1.png (64×48, 2.0 KiB)*`,
		"## Other attempts and edits",
		"### The first line of the conversation, after message 1 (user: “Describe this”)",
		"#### Assistant",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("export lacks %q:\n%s", want, out)
		}
	}
	if i, j := strings.Index(out, "A cat."), strings.Index(out, "A dog."); i < 0 || j < i {
		t.Errorf("the current attempt must come first, the other after it:\n%s", out)
	}
	// Without links, an image is named with its size and hash.
	if plain := SessionMarkdown(sess, tree.Messages); !strings.Contains(plain, "*Image: cat\\_1.png (64×48, 2.0 KiB, sha256 abcdef012345)*") {
		t.Errorf("plain export:\n%s", plain)
	}
}

// A react agent's tool results read as user messages to the model; the
// export shows them as the tool results they are, and a reply cut short
// says so.
func TestExportReactObservationsAndIncompleteReplies(t *testing.T) {
	msgs := []sessions.Message{
		{Seq: 1, Role: sessions.RoleUser, Content: "What is 2**10, and 2**11?"},
		{Seq: 2, Role: sessions.RoleAssistant, Content: "Thought: compute\nAction: calculator\nAction Input: 2**10"},
		{Seq: 3, Role: sessions.RoleUser, Content: "Observation: 1024", ToolName: "calculator",
			Result: &sessions.ToolResult{Success: true, Status: "ok", LatencySeconds: 0.002,
				Metadata: map[string]any{sessions.ArgumentsKey: map[string]any{"expression": "2**10"}}}},
		{Seq: 4, Role: sessions.RoleAssistant, Content: "Thought: again\nAction: `calculator`\nAction Input: 2**11"},
		// Stored before observations named their tool.
		{Seq: 5, Role: sessions.RoleUser, Content: "Observation: 2048", Result: &sessions.ToolResult{Success: true, Status: "ok"}},
		{Seq: 6, Role: sessions.RoleAssistant, Content: "Final Answer: 1024 and 20", Incomplete: sessions.IncompleteLength},
	}
	out := SessionMarkdown(sessions.Session{ID: "r", Agent: "react", Messages: len(msgs)}, msgs)
	if n := strings.Count(out, "## User"); n != 1 {
		t.Errorf("%d user messages, want 1 (the observations are tool results):\n%s", n, out)
	}
	for _, want := range []string{
		"### Tool call `calculator` · ok · 2.0ms · $0.0000\n\nArguments:\n\n```json\n{\n  \"expression\": \"2**10\"\n}\n```\n\nResult:\n\n```text\n1024\n```",
		"### Tool call `calculator` · ok · 0µs · $0.0000\n\nResult:\n\n```text\n2048\n```",
		"Final Answer: 1024 and 20\n\n> **Incomplete:** The reply stopped at its length limit; it is incomplete.",
		"- Tool calls: 2 (",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("export lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Observation:") {
		t.Errorf("an observation is exported with its protocol prefix:\n%s", out)
	}
}

// What models and tools wrote reaches the exported file without its
// escape sequences: a terminal showing the file (cat, less -R) must not
// act on them.
func TestExportStripsEscapeSequences(t *testing.T) {
	msgs := []sessions.Message{
		{Role: sessions.RoleUser, Content: "hi", CreatedAt: t0},
		{Role: sessions.RoleAssistant, Content: "clear\x1b[2J\x1b]0;owned\x07 done\r", Thinking: "\x9b31m", Model: "m", CreatedAt: t0,
			ToolCalls: []sessions.ToolCall{{ID: "c", Name: "file_read", Arguments: `{"path":"x\u001b[1m"}`}}},
		{Role: sessions.RoleTool, Content: "line\x1b]52;c;ZXZpbA==\x07\ttab\nnext", ToolName: "file_read", ToolCallID: "c", CreatedAt: t0,
			Result: &sessions.ToolResult{Success: true, Status: "ok"}},
	}
	out := SessionMarkdown(sessions.Session{ID: "s", Title: "t\x1b[31m", CreatedAt: t0, UpdatedAt: t0}, msgs)
	for _, bad := range []string{"\x1b", "\x07", "\x9b", "\r"} {
		if strings.Contains(out, bad) {
			t.Fatalf("the export keeps %q:\n%q", bad, out)
		}
	}
	if !strings.Contains(out, "line\ttab\nnext") || !strings.Contains(out, "clear done") {
		t.Fatalf("the text around the sequences is lost:\n%s", out)
	}
}
