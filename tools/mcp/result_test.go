package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jarvis-workbench/jarvis/tools"
)

func TestConvertResult(t *testing.T) {
	size := int64(2048)
	cases := []struct {
		name    string
		res     *sdk.CallToolResult
		ok      bool
		content string
		atts    int
	}{
		{"text parts joined", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "one"}, &sdk.TextContent{Text: "two"}}},
			true, "one\ntwo", 0},
		{"empty", &sdk.CallToolResult{}, true, "(the tool returned no content)", 0},
		{"error result", &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "no such file"}}},
			false, "no such file", 0},
		{"error without message", &sdk.CallToolResult{IsError: true}, false, "MCP tool 'tool' reported an error without a message.", 0},
		{"structured only", &sdk.CallToolResult{StructuredContent: map[string]any{"n": 1}}, true, `{"n":1}`, 0},
		{"structured repeated as text", &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.TextContent{Text: `{ "n": 1 }`}},
			StructuredContent: map[string]any{"n": 1}}, true, `{ "n": 1 }`, 0},
		{"structured beside other text", &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.TextContent{Text: "found 1"}},
			StructuredContent: []any{"a"}}, true, "found 1", 0},
		// The reference filesystem server answers like this: the text for a
		// reader, the same as structured content. The model reads it once.
		{"structured repeating the text in other words", &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.TextContent{Text: "[FILE] a.txt\n[DIR] src"}},
			StructuredContent: map[string]any{"content": "[FILE] a.txt\n[DIR] src"}}, true, "[FILE] a.txt\n[DIR] src", 0},
		{"structured beside an image only", &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.ImageContent{MIMEType: "image/png", Data: make([]byte, 10)}},
			StructuredContent: map[string]any{"w": 1}}, true, "[image: image/png, 10 B]\n{\"w\":1}", 1},
		{"image", &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{MIMEType: "image/png", Data: make([]byte, 12*1024)}}},
			true, "[image: image/png, 12 KB]", 1},
		{"large audio without type", &sdk.CallToolResult{Content: []sdk.Content{&sdk.AudioContent{Data: make([]byte, 3*1024*1024/2)}}},
			true, "[audio: unknown type, 1.5 MB]", 1},
		{"binary resource", &sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///a.bin", Blob: []byte{1, 2, 3}}}}},
			true, "[resource: file:///a.bin, unknown type, 3 B]", 1},
		{"resource link with description", &sdk.CallToolResult{Content: []sdk.Content{&sdk.ResourceLink{URI: "file:///r", Name: "file:///r", Description: "the report", Size: &size}}},
			true, "[resource link: file:///r] the report", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := convertResult("tool", c.res)
			if r.Success != c.ok || r.Content != c.content {
				t.Fatalf("got (%v, %q), want (%v, %q)", r.Success, r.Content, c.ok, c.content)
			}
			if !c.ok && r.Status != tools.StatusError {
				t.Errorf("status %q", r.Status)
			}
			atts, _ := r.Metadata[MetaAttachments].([]Attachment)
			if len(atts) != c.atts {
				t.Errorf("attachments %+v", atts)
			}
			if c.res.StructuredContent != nil && r.Metadata[MetaStructuredContent] == nil {
				t.Error("structured content missing from metadata")
			}
		})
	}
}

func TestAttachmentKeepsData(t *testing.T) {
	img := []byte{0x89, 'P', 'N', 'G'}
	r := convertResult("t", &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{MIMEType: "image/png", Data: img}}})
	atts := r.Metadata[MetaAttachments].([]Attachment)
	b, err := json.Marshal(atts[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"type":"image","mime_type":"image/png","size_bytes":4,"data":"iVBORw=="}`; string(b) != want {
		t.Errorf("attachment JSON %s, want %s", b, want)
	}
}

func TestByteSize(t *testing.T) {
	for n, want := range map[int]string{0: "0 B", 1023: "1023 B", 1024: "1 KB", 12 * 1024: "12 KB", 1536 * 1024: "1.5 MB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestToolsWithUnusableSchemasAreSkipped(t *testing.T) {
	m, err := New(Config{Servers: []ServerConfig{{Name: "s", Command: "x", Timeout: 5}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	listed := []*sdk.Tool{
		{Name: "good", Description: "fine", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer", "minimum": 1}}}},
		{Name: "bad", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"$ref": "#/$defs/missing"}}}},
		{Name: "untitled", InputSchema: map[string]any{"type": "object"}},
		// Schemas no call can satisfy: offered, they would fail every call.
		{Name: "typo", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "strnig"}}}},
		{Name: "scalar", InputSchema: map[string]any{"type": "string"}},
	}
	list := m.byName["s"].buildTools(listed)
	if len(list.tools) != 2 || len(list.skipped) != 3 || !strings.HasPrefix(list.skipped[0], "bad: ") ||
		!strings.Contains(list.skipped[1], `typo: tool s__typo: invalid parameter schema: parameter 'q' has type "strnig"`) ||
		!strings.Contains(list.skipped[2], "scalar: tool s__scalar: invalid parameter schema: the arguments are a JSON object, but the schema's type is string") {
		t.Fatalf("tools %d, skipped %q", len(list.tools), list.skipped)
	}
	spec := list.tools[1].Spec()
	if spec.Name != "s__untitled" || spec.Description != "Tool 'untitled' of MCP server 's'." || spec.TimeoutSeconds != 5 {
		t.Errorf("spec %+v", spec)
	}
}
