package mcp

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jarvis-workbench/jarvis/tools"
)

// benchCall measures one echo call through the executor: argument checks,
// events, the MCP round trip and the result conversion.
func benchCall(b *testing.B, sc ServerConfig) {
	sc.Trusted = true
	m, err := New(Config{Servers: []ServerConfig{sc}}, fastOptions())
	if err != nil {
		b.Fatal(err)
	}
	m.Start()
	defer m.Close()
	if err := m.WaitReady(context.Background()); err != nil {
		b.Fatal(err)
	}
	e, err := tools.NewExecutor(m.Tools(), tools.ExecutorOptions{})
	if err != nil {
		b.Fatal(err)
	}
	c := tools.Call{ID: "b", Name: "test__echo", Arguments: `{"text":"hello"}`}
	b.ResetTimer()
	for b.Loop() {
		if r := e.Execute(context.Background(), c); !r.Success {
			b.Fatal(r.Content)
		}
	}
}

func BenchmarkCallStdio(b *testing.B) { benchCall(b, stdioServer("test")) }

func BenchmarkCallHTTP(b *testing.B) { benchCall(b, httpServer(b, "test")) }

func BenchmarkConvertResult(b *testing.B) {
	res := &sdk.CallToolResult{
		Content:           []sdk.Content{&sdk.TextContent{Text: `{"sum":5}`}, &sdk.ImageContent{MIMEType: "image/png", Data: make([]byte, 4096)}},
		StructuredContent: map[string]any{"sum": 5},
	}
	for b.Loop() {
		convertResult("add", res)
	}
}

func BenchmarkSchemaBookObserve(b *testing.B) {
	book := newSchemaBook()
	raw := json.RawMessage(listResult)
	for b.Loop() {
		book.observeResult(raw)
	}
}
