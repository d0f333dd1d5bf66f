package mcp

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"

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
func newHTTPTransport(cfg ServerConfig, book *schemaBook) (*sdk.StreamableClientTransport, *http.Transport, error) {
	endpoint, err := expand("url", cfg.URL)
	if err != nil {
		return nil, nil, err
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
			return nil, nil, err
		}
		headers.Set(k, v)
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	rt := &recordingRoundTripper{base: base, headers: headers, book: book}
	return &sdk.StreamableClientTransport{
		Endpoint:   endpoint,
		HTTPClient: &http.Client{Transport: rt},
	}, base, nil
}

// recordingRoundTripper adds the configured headers and lets the schema book
// read the responses to POSTs (the only ones that carry tools/list results).
type recordingRoundTripper struct {
	base    http.RoundTripper
	headers http.Header
	book    *schemaBook
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
	switch mt {
	case "application/json":
		resp.Body = &jsonRecorder{ReadCloser: resp.Body, book: r.book}
	case "text/event-stream":
		resp.Body = &sseRecorder{ReadCloser: resp.Body, book: r.book}
	}
	return resp, nil
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
