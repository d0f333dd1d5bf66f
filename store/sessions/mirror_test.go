package sessions_test

import (
	"reflect"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/store/sessions"
)

// The conversions the TUI uses compile only while the mirrors match their
// originals field for field.
var (
	_ = engine.ToolCall(sessions.ToolCall{})
	_ = sessions.ToolCall(engine.ToolCall{})
	_ = events.Usage(sessions.Usage{})
	_ = sessions.Usage(events.Usage{})
)

// toEngine and fromEngine are the conversions the README gives the TUI.
func toEngine(msgs []sessions.Message) []engine.Message {
	out := make([]engine.Message, 0, len(msgs))
	for _, m := range sessions.ChatMessages(msgs) {
		em := engine.Message{Role: m.Role, Content: m.Content, Thinking: m.Thinking,
			ToolName: m.ToolName, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			em.ToolCalls = append(em.ToolCalls, engine.ToolCall(c))
		}
		out = append(out, em)
	}
	return out
}

func fromEngine(m engine.Message) sessions.Message {
	sm := sessions.Message{Role: m.Role, Content: m.Content, Thinking: m.Thinking,
		ToolName: m.ToolName, ToolCallID: m.ToolCallID}
	for _, c := range m.ToolCalls {
		sm.ToolCalls = append(sm.ToolCalls, sessions.ToolCall(c))
	}
	return sm
}

// TestMessageMirrorsEngine fails when engine.Message gains a field that
// sessions.Message does not store, or the conversions lose one.
func TestMessageMirrorsEngine(t *testing.T) {
	et, st := reflect.TypeOf(engine.Message{}), reflect.TypeOf(sessions.Message{})
	for i := range et.NumField() {
		ef := et.Field(i)
		sf, ok := st.FieldByName(ef.Name)
		if !ok {
			t.Errorf("sessions.Message has no field %s (engine.Message has); store it", ef.Name)
			continue
		}
		if ef.Type.Kind() != sf.Type.Kind() {
			t.Errorf("field %s: engine %s, sessions %s", ef.Name, ef.Type, sf.Type)
		}
	}
	in := []engine.Message{
		{Role: engine.RoleUser, Content: "hi"},
		{Role: engine.RoleAssistant, Content: "c", Thinking: "t", ToolCalls: []engine.ToolCall{
			{ID: "a", Index: 0, Name: "calculator", Arguments: `{"expression":"1+1"}`},
			{ID: "b", Index: 1, Name: "think", Arguments: `{}`},
		}},
		{Role: engine.RoleTool, Content: "2", ToolName: "calculator", ToolCallID: "a"},
	}
	var stored []sessions.Message
	for _, m := range in {
		stored = append(stored, fromEngine(m))
	}
	stored = append(stored, sessions.Message{Role: sessions.RoleNotice, Content: "not for the model"})
	if out := toEngine(stored); !reflect.DeepEqual(out, in) {
		t.Errorf("round trip through sessions.Message changed the conversation:\n got %+v\nwant %+v", out, in)
	}
}
