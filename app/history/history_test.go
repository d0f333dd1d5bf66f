package history

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/jarvis-workbench/jarvis/agent"
	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store/sessions"
	"github.com/jarvis-workbench/jarvis/tools"
)

// What the agent appends comes back the same from the session: images,
// calls, usage, results and compactions.
func TestStoredAndAppendedRoundTrip(t *testing.T) {
	pic := engine.Image{Name: "a.png", MIMEType: "image/png", Data: []byte("png bytes"), Width: 4, Height: 2}
	usage := events.Usage{PromptTokens: 12, OutputTokens: 3, CostUSD: 0.5}
	in := []agent.Appended{
		{Message: engine.Message{Role: engine.RoleUser, Content: "look", Images: []engine.Image{pic}}},
		{Message: engine.Message{Role: engine.RoleAssistant, Thinking: "hm", ToolCalls: []engine.ToolCall{{ID: "c1", Name: "calculator", Arguments: `{"expression":"1+1"}`}}}, Usage: &usage,
			Context: &events.ContextPayload{Window: 8192, PromptTokens: 412, Estimated: true}, RunSeconds: 1.5},
		{Message: engine.Message{Role: engine.RoleTool, Content: "2", ToolName: "calculator", ToolCallID: "c1"},
			Result: &tools.Result{ToolName: "calculator", Content: "2", Success: true, Status: tools.StatusOK, LatencySeconds: 0.01}},
		{Message: agent.SummaryMessage("they added"), Usage: &usage, Compaction: &agent.Compaction{Summary: "they added", Kept: 1, Replaced: 2, Usage: usage}},
	}
	for i, a := range in {
		stored := Stored(a)
		if i == 0 && (stored.Images[0].Bytes != 9 || !bytes.Equal(stored.Images[0].Data, pic.Data)) {
			t.Fatalf("stored image = %+v", stored.Images[0])
		}
		back := Appended(stored)
		if !reflect.DeepEqual(back.Message, a.Message) {
			t.Errorf("message %d: %+v, want %+v", i, back.Message, a.Message)
		}
		if (a.Usage == nil) != (back.Usage == nil) || a.Usage != nil && *back.Usage != *a.Usage {
			t.Errorf("message %d usage: %+v", i, back.Usage)
		}
		if back.RunSeconds != a.RunSeconds || !reflect.DeepEqual(back.Context, a.Context) {
			t.Errorf("message %d: window %+v after %vs, want %+v after %vs", i, back.Context, back.RunSeconds, a.Context, a.RunSeconds)
		}
		if a.Compaction != nil && (back.Compaction == nil || back.Compaction.Kept != 1 || back.Compaction.Replaced != 2) {
			t.Errorf("compaction: %+v", back.Compaction)
		}
		if a.Result != nil && (back.Result == nil || back.Result.Status != tools.StatusOK || back.Result.Content != "2") {
			t.Errorf("result: %+v", back.Result)
		}
	}
}

// The conversation of a line replays each compaction where it happened,
// and leaves out what the interface showed.
func TestConversationReplaysCompactions(t *testing.T) {
	path := []sessions.Message{
		{Seq: 1, Role: sessions.RoleUser, Content: "q1"},
		{Seq: 2, Role: sessions.RoleAssistant, Content: "a1"},
		{Seq: 3, Role: sessions.RoleNotice, Content: "a notice"},
		{Seq: 4, Role: sessions.RoleUser, Content: "q2"},
		{Seq: 5, Role: sessions.RoleAssistant, Content: "a2"},
		{Seq: 6, Role: sessions.RoleSummary, Content: "q1 was asked", Kept: 2, Replaced: 2},
		{Seq: 7, Role: sessions.RoleUser, Content: "q3"},
	}
	conv := Conversation(path)
	var got []string
	for _, m := range conv.Messages {
		got = append(got, m.Role+": "+m.Content)
	}
	want := []string{"user: " + agent.SummaryPrefix + "q1 was asked", "user: q2", "assistant: a2", "user: q3"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("conversation = %q", got)
	}
}

// A react observation is stored as the result of its tool, and comes
// back as the user message the model read; a cut reply keeps its mark.
func TestObservationAndIncompleteRoundTrip(t *testing.T) {
	res := tools.Result{ToolName: "calculator", Content: "1024", Success: true, Status: tools.StatusOK}
	res = res.WithMeta("arguments", map[string]any{"expression": "2**10"}).WithMeta("big", "not kept")
	obs := agent.Appended{Message: engine.Message{Role: engine.RoleUser, Content: "Observation: 1024"}, Result: &res}
	stored := Stored(obs)
	if stored.ToolName != "calculator" || !sessions.IsToolResult(stored) || IsQuestion(stored) {
		t.Fatalf("observation stored as %+v", stored)
	}
	if args := sessions.ObservationArgs(stored); args != `{"expression":"2**10"}` || len(stored.Result.Metadata) != 1 {
		t.Fatalf("observation arguments stored as %q (metadata %v)", args, stored.Result.Metadata)
	}
	if back := Appended(stored); !reflect.DeepEqual(back.Message, obs.Message) || back.Result.ToolName != "calculator" {
		t.Fatalf("observation read back as %+v / %+v", back.Message, back.Result)
	}
	cut := agent.Appended{Message: engine.Message{Role: engine.RoleAssistant, Content: "Half"}, Incomplete: agent.IncompleteCancelled}
	if s := Stored(cut); s.Incomplete != sessions.IncompleteCancelled || Appended(s).Incomplete != agent.IncompleteCancelled {
		t.Fatalf("the cancelled mark was lost: %+v", s)
	}
	if !IsQuestion(sessions.Message{Role: sessions.RoleUser, Content: "what is 2**10?"}) {
		t.Fatal("a question is not a question")
	}
}

// The session's marks for a cut reply are the agent's, value for value.
func TestIncompleteValuesMirrorTheAgent(t *testing.T) {
	pairs := [][2]string{
		{agent.IncompleteCancelled, sessions.IncompleteCancelled},
		{agent.IncompleteLost, sessions.IncompleteLost},
		{agent.IncompleteLength, sessions.IncompleteLength},
		{agent.IncompleteRefused, sessions.IncompleteRefused},
		{agent.IncompleteError, sessions.IncompleteError},
	}
	for _, p := range pairs {
		if p[0] != p[1] {
			t.Errorf("agent %q, sessions %q", p[0], p[1])
		}
	}
}

// A write's diff is kept with its result, and nothing else of its
// metadata: a reopened session shows what the person approved.
func TestAWritesDiffIsKeptWithItsResult(t *testing.T) {
	const diff = "--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-draft\n+final\n"
	res := tools.OK("Edited notes.txt.").WithMeta(tools.MetaDiff, diff).WithMeta("paths", []string{"/w/notes.txt"})
	res.ToolName, res.Status = "file_edit", tools.StatusOK
	stored := Stored(agent.Appended{Message: engine.Message{Role: engine.RoleTool, Content: res.Content, ToolName: "file_edit", ToolCallID: "c1"}, Result: &res})
	if len(stored.Result.Metadata) != 1 || stored.Result.Metadata[tools.MetaDiff] != diff {
		t.Fatalf("stored metadata %v", stored.Result.Metadata)
	}
	if back := Appended(stored); back.Result.Diff() != diff {
		t.Fatalf("read back without its diff: %+v", back.Result)
	}
	plain := tools.OK("4")
	if s := Stored(agent.Appended{Message: engine.Message{Role: engine.RoleTool, Content: "4"}, Result: &plain}); s.Result.Metadata != nil {
		t.Fatalf("a result without a diff stored metadata %v", s.Result.Metadata)
	}
}
