package web

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/htmlindex"
)

// keyHeaders are the response headers worth a model's attention, in the
// order they are shown. Others (cookies above all) are left out.
var keyHeaders = []string{
	"Content-Type", "Content-Length", "Content-Encoding", "Content-Disposition",
	"Location", "Last-Modified", "ETag", "Cache-Control", "Retry-After", "WWW-Authenticate",
}

// readCapped reads at most limit bytes of r, reporting whether more was
// available. It reads one byte past the limit to tell "exactly limit" from
// "cut"; the extra byte is dropped.
func readCapped(r io.Reader, limit int64) (body []byte, truncated bool, err error) {
	body, err = io.ReadAll(io.LimitReader(r, limit+1))
	if int64(len(body)) > limit {
		return body[:limit], true, err
	}
	return body, false, err
}

// shownResponse is a response laid out for the model.
type shownResponse struct {
	statusLine  string
	headers     map[string]string
	headerOrder []string
	finalURL    string
	body        string
	note        string
	contentType string
	binary      bool
}

func (s shownResponse) content() string {
	var b strings.Builder
	b.WriteString(s.statusLine)
	for _, k := range s.headerOrder {
		fmt.Fprintf(&b, "\n%s: %s", k, s.headers[k])
	}
	if s.finalURL != "" {
		fmt.Fprintf(&b, "\nFinal URL: %s", s.finalURL)
	}
	b.WriteString("\n\n")
	b.WriteString(s.body)
	if s.note != "" {
		if s.body != "" && !strings.HasSuffix(s.body, "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(s.note)
	}
	return b.String()
}

// formatResponse lays out status, key headers and body. Text is decoded to
// UTF-8 from its declared charset; anything else is summarised, since raw
// bytes are useless to a model and can be large.
func formatResponse(resp *http.Response, body []byte, truncated bool, limit int64, redirected bool) shownResponse {
	s := shownResponse{
		statusLine: fmt.Sprintf("%s %s", resp.Proto, resp.Status),
		headers:    map[string]string{},
	}
	if resp.Proto == "" {
		s.statusLine = "HTTP " + resp.Status
	}
	for _, k := range keyHeaders {
		if v := resp.Header.Values(k); len(v) > 0 {
			s.headers[k] = strings.Join(v, ", ")
			s.headerOrder = append(s.headerOrder, k)
		}
	}
	if redirected {
		s.finalURL = resp.Request.URL.Redacted()
	}

	declared := resp.Header.Get("Content-Type")
	media, params, _ := mime.ParseMediaType(declared)
	if media == "" && len(body) > 0 {
		media, params, _ = mime.ParseMediaType(http.DetectContentType(body))
	}
	s.contentType = media

	switch {
	case resp.Request.Method == http.MethodHead:
		s.body = "(HEAD request: no body)"
		return s
	case len(body) == 0:
		s.body = "(empty body)"
		return s
	}

	text, ok := decodeText(body, media, params["charset"], truncated)
	if !ok {
		s.binary = true
		size := fmt.Sprintf("%d bytes", len(body))
		if truncated {
			size = fmt.Sprintf("more than %d bytes", limit)
			if resp.ContentLength > 0 {
				size = fmt.Sprintf("%d bytes", resp.ContentLength)
			}
		}
		s.body = fmt.Sprintf("[binary content not shown: %s, %s]", orDefault(media, "unknown type"), size)
		return s
	}
	s.body = text
	if truncated {
		s.note = fmt.Sprintf("[response truncated at %d bytes]", limit)
	}
	return s
}

// decodeText returns body as UTF-8 text, or ok=false when it is not text.
func decodeText(body []byte, media, charset string, truncated bool) (string, bool) {
	if !isTextual(media) {
		return "", false
	}
	if cs := strings.ToLower(strings.TrimSpace(charset)); cs != "" && cs != "utf-8" && cs != "utf8" && cs != "us-ascii" {
		if enc, err := htmlindex.Get(cs); err == nil {
			if decoded, err := enc.NewDecoder().Bytes(body); err == nil {
				body = decoded
			}
		}
	}
	if bytes.IndexByte(body, 0) >= 0 {
		return "", false
	}
	if truncated {
		// The cap may have split the last character: drop its start rather
		// than showing a replacement character.
		for i := 0; i < utf8.UTFMax-1 && len(body) > 0; i++ {
			r, size := utf8.DecodeLastRune(body)
			if r != utf8.RuneError || size != 1 {
				break
			}
			body = body[:len(body)-1]
		}
	}
	return strings.ToValidUTF8(string(body), "\uFFFD"), true
}

// isTextual reports whether a media type is something a model can read.
func isTextual(media string) bool {
	switch {
	case strings.HasPrefix(media, "text/"),
		strings.HasSuffix(media, "+json"), strings.HasSuffix(media, "+xml"),
		strings.HasSuffix(media, "+yaml"):
		return true
	}
	switch media {
	case "application/json", "application/xml", "application/javascript", "application/ecmascript",
		"application/x-javascript", "application/yaml", "application/x-yaml", "application/toml",
		"application/x-www-form-urlencoded", "application/x-ndjson", "application/ndjson",
		"application/graphql", "application/sql", "application/csv", "image/svg+xml":
		return true
	}
	return false
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
