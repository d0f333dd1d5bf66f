package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxRecordedBody bounds how much of one JSON response the schema book
// buffers; a tool list larger than this only loses its property order.
const maxRecordedBody = 8 << 20

// newHTTPTransport returns the SDK's streamable HTTP transport with the
// configured headers on every request and the schema book reading the
// responses. The http.Client has no overall timeout on purpose: the
// server-sent event streams it carries are long-lived; calls are bounded by
// their context instead.
func newHTTPTransport(cfg ServerConfig, book *schemaBook) (*sdk.StreamableClientTransport, *http.Transport, *httpAnswers, error) {
	endpoint, err := expand("url", cfg.URL)
	if err != nil {
		return nil, nil, nil, err
	}
	headers := make(http.Header, len(cfg.Headers))
	keys := make([]string, 0, len(cfg.Headers))
	for k := range cfg.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, err := expand(fmt.Sprintf("header %s", k), cfg.Headers[k])
		if err != nil {
			return nil, nil, nil, err
		}
		headers.Set(k, v)
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	seen := &httpAnswers{}
	rt := &recordingRoundTripper{base: base, headers: headers, book: book, seen: seen}
	return &sdk.StreamableClientTransport{
		Endpoint:   endpoint,
		HTTPClient: &http.Client{Transport: rt},
	}, base, seen, nil
}

// recordingRoundTripper adds the configured headers, lets the schema book
// read the responses to POSTs (the only ones that carry tools/list
// results), and notes answers that are not MCP for the failure reasons.
type recordingRoundTripper struct {
	base    http.RoundTripper
	headers http.Header
	book    *schemaBook
	seen    *httpAnswers
}

func (r *recordingRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(r.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range r.headers {
			req.Header[k] = v
		}
	}
	resp, err := r.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost || resp.Body == nil {
		return resp, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode >= 400:
		r.seen.note(resp)
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent || resp.ContentLength == 0:
	case mt == "application/json":
		resp.Body = &jsonRecorder{ReadCloser: resp.Body, book: r.book}
	case mt == "text/event-stream":
		resp.Body = &sseRecorder{ReadCloser: resp.Body, book: r.book}
	default:
		r.seen.note(resp)
	}
	return resp, nil
}

// httpAnswers keeps the last answer to a POST that was not MCP: an error
// status or a body of another kind (a web page, plain text).
type httpAnswers struct {
	mu   sync.Mutex
	last *httpAnswer
}

// httpAnswer is one such answer.
type httpAnswer struct {
	status      int
	statusText  string
	contentType string
	message     string // the start of a short text or JSON error body
}

// maxAnswerPeek is how much of an error body is read for its message.
const maxAnswerPeek = 512

// note records resp, reading the start of its body without taking it from
// the SDK, which reads it after.
func (h *httpAnswers) note(resp *http.Response) {
	if h == nil {
		return
	}
	a := &httpAnswer{status: resp.StatusCode, statusText: resp.Status}
	a.contentType, _, _ = mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode >= 400 && resp.Body != nil {
		peek, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswerPeek))
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(peek), resp.Body), resp.Body}
		a.message = errorMessage(a.contentType, peek)
	}
	h.mu.Lock()
	h.last = a
	h.mu.Unlock()
}

// problem returns the answer noted last, nil when there is none.
func (h *httpAnswers) problem() *httpAnswer {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}

// reason says what the answer means for someone configuring the server.
func (a *httpAnswer) reason(host string) string {
	status := "HTTP " + a.statusText
	if a.message != "" {
		status += ": " + a.message
	}
	switch {
	case a.status == http.StatusUnauthorized || a.status == http.StatusForbidden:
		return fmt.Sprintf("%s refused the request as unauthorized (%s); check the credentials in headers for this server", host, status)
	case a.status == http.StatusNotFound:
		return fmt.Sprintf("%s has no MCP endpoint at the configured url (%s); check its path (streamable HTTP servers usually serve /mcp)", host, status)
	case a.status == http.StatusMethodNotAllowed:
		return fmt.Sprintf("the configured url of %s does not accept MCP requests (%s); it may be an older SSE-only endpoint, and jarvis speaks streamable HTTP", host, status)
	case a.status >= 500:
		return fmt.Sprintf("%s failed on its side (%s); try again later, or look at the server's own logs", host, status)
	case a.status >= 400:
		return fmt.Sprintf("%s refused the request (%s)", host, status)
	case a.contentType == "":
		return fmt.Sprintf("%s answered without saying what it sent, not with MCP; check that url is the server's MCP endpoint", host)
	}
	return fmt.Sprintf("%s answered with %s, not MCP; check that url is the server's MCP endpoint rather than a web page or another API", host, a.contentType)
}

// errorMessage is a short error body's text: a JSON body's usual message
// field, or plain text.
func errorMessage(contentType string, body []byte) string {
	var v map[string]any
	if json.Unmarshal(body, &v) == nil {
		for _, k := range []string{"error_description", "message", "error", "detail"} {
			if s, ok := v[k].(string); ok && s != "" {
				return oneLine(s, 200)
			}
			if m, ok := v[k].(map[string]any); ok {
				if s, ok := m["message"].(string); ok && s != "" {
					return oneLine(s, 200)
				}
			}
		}
		return ""
	}
	if contentType == "text/plain" {
		return oneLine(string(body), 200)
	}
	return ""
}

// jsonRecorder buffers a JSON body as it is read and records it at EOF.
type jsonRecorder struct {
	io.ReadCloser
	book *schemaBook
	buf  bytes.Buffer
	done bool
}

func (j *jsonRecorder) Read(p []byte) (int, error) {
	n, err := j.ReadCloser.Read(p)
	if !j.done && j.buf.Len()+n <= maxRecordedBody {
		j.buf.Write(p[:n])
	}
	if err == io.EOF && !j.done {
		j.done = true
		if j.buf.Len() <= maxRecordedBody {
			j.book.observeMessage(j.buf.Bytes())
		}
		j.buf = bytes.Buffer{}
	}
	return n, err
}

// sseRecorder follows a server-sent event stream line by line and records
// each event's data as soon as the event is complete, before the SDK acts
// on it.
type sseRecorder struct {
	io.ReadCloser
	book    *schemaBook
	partial []byte // an unfinished line
	data    []byte // the data lines of the current event
}

func (s *sseRecorder) Read(p []byte) (int, error) {
	n, err := s.ReadCloser.Read(p)
	s.feed(p[:n])
	if err == io.EOF {
		s.endEvent()
	}
	return n, err
}

func (s *sseRecorder) feed(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if len(s.partial)+len(b) <= maxRecordedBody {
				s.partial = append(s.partial, b...)
			}
			return
		}
		line := append(s.partial, b[:i]...)
		s.partial = s.partial[:0]
		b = b[i+1:]
		s.line(bytes.TrimSuffix(line, []byte("\r")))
	}
}

func (s *sseRecorder) line(l []byte) {
	switch {
	case len(l) == 0:
		s.endEvent()
	case bytes.HasPrefix(l, []byte("data:")):
		v := bytes.TrimPrefix(l[5:], []byte(" "))
		if len(s.data)+len(v) > maxRecordedBody {
			return
		}
		if len(s.data) > 0 {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, v...)
	}
}

func (s *sseRecorder) endEvent() {
	if len(s.data) > 0 {
		s.book.observeMessage(s.data)
	}
	s.data = s.data[:0]
}
