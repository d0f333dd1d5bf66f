package sessions

import (
	"context"
	"testing"

	"github.com/asdine/storm/v3"
)

func TestChangesAreRecordedThroughTheQueueGroupedByTurnAndUndone(t *testing.T) {
	s := newStore(t)
	sess, err := s.CreateQueued(Meta{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []Message{
		{Role: RoleUser, Content: "fix main.go"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "file_edit", Arguments: "{}"}}},
		{Role: RoleTool, ToolCallID: "c1", ToolName: "file_edit", Content: "Edited"},
		{Role: RoleUser, Content: "and add a test"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c2", Name: "file_write", Arguments: "{}"}}},
	}
	if err := s.AppendQueued(sess.ID, msgs...); err != nil {
		t.Fatal(err)
	}
	first, err := s.RecordChangeQueued(sess.ID, Change{CallID: "c1", Tool: "file_edit", Path: "/w/main.go", Shown: "./main.go",
		Before: "a\n", BeforeExists: true, After: "b\n", AfterExists: true, Mode: 0o644})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordChangeQueued(sess.ID, Change{CallID: "c2", Tool: "file_write", Path: "/w/main_test.go", After: "t\n", AfterExists: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.UndoQueued(sess.ID, first.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, list, err := s.Changes(sess.ID[:8])
	if err != nil || got.Changes != 2 || len(list) != 2 {
		t.Fatalf("changes = %+v %+v %v", got, list, err)
	}
	if !list[0].Undone() || list[1].Undone() || list[0].Before != "a\n" || list[1].BeforeExists {
		t.Fatalf("recorded = %+v", list)
	}
	_, stored, _ := s.Load(sess.ID)
	groups := GroupChanges(stored, list)
	if len(groups) != 2 || groups[0].Turn != 1 || groups[0].Question != "fix main.go" || groups[1].Turn != 2 {
		t.Fatalf("groups = %+v", groups)
	}
	// A replayed write (after a crash) is not recorded twice.
	if err := recordChangeTxReplay(s, sess.ID, list[1]); err != nil {
		t.Fatal(err)
	}
	if _, again, _ := s.Changes(sess.ID); len(again) != 2 {
		t.Fatalf("a replay added a change: %d", len(again))
	}
	if err := s.Delete(sess.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Changes(sess.ID); err == nil {
		t.Fatal("the session's changes outlived it")
	}
}

func recordChangeTxReplay(s *Store, id string, c Change) error {
	return s.update(func(n storm.Node) error { return recordChangeTx(n, id, c) })
}
