package mcp

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/jarvis-workbench/jarvis/tools"
)

// listResult is a tools/list result whose properties are in reverse
// alphabetical order.
const listResult = `{"tools":[{"name":"zap","inputSchema":{"type":"object","properties":{"zulu":{"type":"string","description":"last letter"},"alpha":{"type":"integer"}},"required":["zulu"]}}]}`

// decoded is the schema as the SDK hands it over: a map, order lost.
func decoded(t *testing.T) any {
	t.Helper()
	var page struct {
		Tools []struct {
			InputSchema any `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(listResult), &page); err != nil {
		t.Fatal(err)
	}
	return page.Tools[0].InputSchema
}

func describeSchema(t *testing.T, b *schemaBook, v any) string {
	t.Helper()
	s, err := b.schema("zap", v)
	if err != nil {
		t.Fatal(err)
	}
	return tools.DescribeSpecs([]tools.Spec{{Name: "zap", Description: "d", Parameters: s}}, false, false)
}

const inServerOrder = "### zap\nd\nParameters:\n  - zulu (string, required): last letter\n  - alpha (integer)"

func TestSchemaBookKeepsServerOrder(t *testing.T) {
	b := newSchemaBook()
	b.observeResult(json.RawMessage(listResult))
	if got := describeSchema(t, b, decoded(t)); got != inServerOrder {
		t.Errorf("got:\n%s\nwant:\n%s", got, inServerOrder)
	}
}

func TestSchemaBookIgnoresStaleRecord(t *testing.T) {
	b := newSchemaBook()
	b.observeResult(json.RawMessage(listResult))
	// The tool changed but the new listing was not seen by the book: the
	// decoded schema wins, in sorted order.
	changed := map[string]any{"type": "object", "properties": map[string]any{"zulu": map[string]any{"type": "number"}, "beta": map[string]any{}}}
	want := "### zap\nd\nParameters:\n  - beta (any)\n  - zulu (number)"
	if got := describeSchema(t, b, changed); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestSchemaBookWithoutSchema(t *testing.T) {
	s, err := newSchemaBook().schema("x", nil)
	if err != nil || s.Type != "object" {
		t.Fatalf("%+v %v", s, err)
	}
}

func TestHTTPRecordingSSEAndJSON(t *testing.T) {
	response := `{"jsonrpc":"2.0","id":2,"result":` + listResult + `}`
	sse := "event: message\r\nid: 1\r\ndata: " + response + "\r\n\r\n"
	for _, c := range []struct {
		name, contentType, body string
	}{
		{"json", "application/json", response},
		{"sse", "text/event-stream", sse},
		{"sse batch", "text/event-stream", "data: [" + response + "]\n\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var gotHeader string
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				gotHeader = r.Header.Get("X-Api-Key")
				w.Header().Set("Content-Type", c.contentType)
				io.WriteString(w, c.body)
			}))
			defer ts.Close()
			b := newSchemaBook()
			rt := &recordingRoundTripper{base: http.DefaultTransport, headers: http.Header{"X-Api-Key": {"k"}}, book: b}
			req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader("{}"))
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			// Read the way a client does, a few bytes at a time.
			if _, err := io.ReadAll(iotest.OneByteReader(resp.Body)); err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if gotHeader != "k" {
				t.Errorf("header %q", gotHeader)
			}
			if got := describeSchema(t, b, decoded(t)); got != inServerOrder {
				t.Errorf("order lost:\n%s", got)
			}
		})
	}
}

func TestSSERecorderMultiLineData(t *testing.T) {
	b := newSchemaBook()
	r := &sseRecorder{ReadCloser: io.NopCloser(nil), book: b}
	// One event whose JSON is split over two data lines, fed in odd chunks.
	stream := `data: {"jsonrpc":"2.0","id":2,` + "\n" + `data: "result":` + listResult + "}\n\n"
	for i := 0; i < len(stream); i += 7 {
		r.feed([]byte(stream[i:min(i+7, len(stream))]))
	}
	if got := describeSchema(t, b, decoded(t)); got != inServerOrder {
		t.Errorf("order lost:\n%s", got)
	}
}
