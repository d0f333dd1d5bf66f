package channels

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools"
)

// request is what a fake service received.
type request struct {
	Method, Path, Query, Auth, Body string
}

// fake is a loopback stand-in for a service. reply decides each answer;
// every request is recorded.
type fake struct {
	*httptest.Server
	mu    sync.Mutex
	got   []request
	reply func(w http.ResponseWriter, r request)
}

func newFake(t *testing.T, reply func(w http.ResponseWriter, r request)) *fake {
	t.Helper()
	f := &fake{reply: reply}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		req := request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Auth: r.Header.Get("Authorization"), Body: string(b)}
		f.mu.Lock()
		f.got = append(f.got, req)
		reply := f.reply
		f.mu.Unlock()
		reply(w, req)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fake) requests() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]request(nil), f.got...)
}

func (f *fake) setReply(reply func(w http.ResponseWriter, r request)) {
	f.mu.Lock()
	f.reply = reply
	f.mu.Unlock()
}

// status answers with a status, headers and a body.
func status(code int, body string, header ...string) func(http.ResponseWriter, request) {
	return func(w http.ResponseWriter, _ request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

func send(t *testing.T, cfg Config, channel, message string) tools.Result {
	t.Helper()
	return NewSend(cfg).Execute(context.Background(), tools.Args{"channel": channel, "message": message})
}

func check(t *testing.T, cfg Config, channel string) tools.Result {
	t.Helper()
	return NewStatus(cfg).Execute(context.Background(), tools.Args{"channel": channel})
}

// assertNoSecret fails when any secret appears in the result's content or
// metadata.
func assertNoSecret(t *testing.T, r tools.Result, secrets ...string) {
	t.Helper()
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(string(raw), s) {
			t.Fatalf("result leaks secret %q:\n%s", s, raw)
		}
	}
}

func assertContains(t *testing.T, r tools.Result, success bool, wants ...string) {
	t.Helper()
	if r.Success != success {
		t.Errorf("success = %v, want %v: %q", r.Success, success, r.Content)
	}
	for _, w := range wants {
		if !strings.Contains(r.Content, w) {
			t.Errorf("content %q\nlacks %q", r.Content, w)
		}
	}
}
