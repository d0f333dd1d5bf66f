package openai_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine/openai"
	ot "github.com/jarvis-workbench/jarvis/engine/openai/openaitest"
)

func TestParseBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8080/v1":      "http://127.0.0.1:8080/v1",
		"http://127.0.0.1:8080/v1/":     "http://127.0.0.1:8080/v1",
		"http://127.0.0.1:8080":         "http://127.0.0.1:8080/v1",
		"localhost:1234":                "http://localhost:1234/v1",
		" https://openrouter.ai/api/v1": "https://openrouter.ai/api/v1",
		"https://proxy.example/llm/":    "https://proxy.example/llm",
		"0.0.0.0:8000":                  "http://127.0.0.1:8000/v1",
		"http://[::]:8000":              "http://[::1]:8000/v1",
		"https://api.openai.com/v1":     "https://api.openai.com/v1",
	} {
		got, err := openai.ParseBaseURL(in)
		if err != nil || got != want {
			t.Errorf("ParseBaseURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, says := range map[string]string{
		"":                         "no base URL",
		"ftp://host/v1":            "http or https",
		"http://:8080/v1":          "no host",
		"http://host:99999/v1":     "port",
		"http://host/v1?key=x":     "without a query",
		"http://user:pw@host/v1":   "without a query, fragment or user",
		"http://host:8080/v1#frag": "fragment",
	} {
		if _, err := openai.ParseBaseURL(in); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("ParseBaseURL(%q): err = %v, want it to say %q", in, err, says)
		}
	}
	e, err := openai.New("localhost:8080")
	if err != nil || e.Host() != "http://localhost:8080/v1" {
		t.Errorf("New: %v, %v", e, err)
	}
	if _, err := openai.New("ftp://x"); err == nil {
		t.Error("New accepted a bad URL")
	}
}

type countingTransport struct{ n *int }

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	*c.n++
	return http.DefaultTransport.RoundTrip(r)
}

func TestWithHTTPClient(t *testing.T) {
	srv := ot.New(t, ot.VLLM)
	srv.Model("m")
	n := 0
	e := newEngine(t, srv.BaseURL, openai.WithHTTPClient(&http.Client{Transport: countingTransport{&n}}))
	if _, err := e.ListModels(context.Background()); err != nil || n != 1 {
		t.Errorf("requests through the given client: %d, %v", n, err)
	}
}
