package mcp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/jarvis-workbench/jarvis/tools"
)

// schemaBook remembers each tool's input schema exactly as the server sent
// it. The SDK decodes schemas into maps, which loses the order of the
// properties, and that order is how a tool's parameters are described to the
// model (a server lists "path" before "max_lines" for a reason). The
// transports hand every JSON-RPC result to the book before the SDK sees it.
type schemaBook struct {
	mu  sync.Mutex
	raw map[string]json.RawMessage
}

func newSchemaBook() *schemaBook { return &schemaBook{raw: map[string]json.RawMessage{}} }

var inputSchemaKey = []byte(`"inputSchema"`)

// observeResult records the schemas of a tools/list result; other results
// are skipped after one byte scan.
func (b *schemaBook) observeResult(result json.RawMessage) {
	if !bytes.Contains(result, inputSchemaKey) {
		return
	}
	var page struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &page) != nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, t := range page.Tools {
		if t.Name != "" && len(t.InputSchema) > 0 {
			b.raw[t.Name] = bytes.Clone(t.InputSchema)
		}
	}
}

// observeMessage records the schemas in one wire message (or batch), as the
// HTTP transport reads them.
func (b *schemaBook) observeMessage(data []byte) {
	data = bytes.TrimSpace(data)
	if !bytes.Contains(data, inputSchemaKey) {
		return
	}
	if len(data) > 0 && data[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(data, &batch) == nil {
			for _, m := range batch {
				b.observeMessage(m)
			}
		}
		return
	}
	if msg, err := jsonrpc.DecodeMessage(data); err == nil {
		if r, ok := msg.(*jsonrpc.Response); ok {
			b.observeResult(r.Result)
		}
	}
}

// schema returns the tool's input schema with its properties in the
// server's order. decoded is the schema as the SDK decoded it; the recorded
// text is used only when it says the same thing, so a stale or missing
// record can cost the order but never the content.
func (b *schemaBook) schema(name string, decoded any) (*jsonschema.Schema, error) {
	if decoded == nil {
		return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}, nil
	}
	plain, err := json.Marshal(decoded)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	raw := b.raw[name]
	b.mu.Unlock()
	if raw != nil && sameJSON(raw, plain) {
		return tools.SchemaFromJSON(raw)
	}
	return tools.SchemaFromJSON(plain)
}

func sameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
