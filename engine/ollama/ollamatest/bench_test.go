package ollamatest

import (
	"bufio"
	"net/http"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	et "github.com/jarvis-workbench/jarvis/engine/enginetest"
)

// BenchmarkFlood20k is the time to stream a 20,000-token reply over
// loopback to a client that only splits lines: the ceiling the fake puts on
// any benchmark that uses it (the TUI's needs it well under 0.3 s).
func BenchmarkFlood20k(b *testing.B) {
	const tokens = 20000
	srv := New(b)
	srv.Model("tiny")
	srv.On().Reply(et.Flood(tokens))
	for b.Loop() {
		resp, err := http.Post(srv.URL+"/api/chat", "application/json", strings.NewReader(chatHi))
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		n := 0
		for sc.Scan() {
			n++
		}
		resp.Body.Close()
		if n != tokens+1 || sc.Err() != nil {
			b.Fatalf("%d lines, %v", n, sc.Err())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/20k-tokens")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tokens), "ns/chunk")
}

// BenchmarkSilentCut is the cost of fitting a long conversation into a
// small window the way the real server does (render, count, drop the
// oldest message, again): 200 messages of about 100 words into 2,048
// tokens. Requests that fit, or say "truncate": false, render once.
func BenchmarkSilentCut(b *testing.B) {
	t, err := parseTemplate("", "")
	if err != nil {
		b.Fatal(err)
	}
	var msgs []api.Message
	for i := range 200 {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, api.Message{Role: role, Content: strings.Repeat("several words of ordinary prose ", 20)})
	}
	for b.Loop() {
		f, err := t.fit(msgs, nil, nil, 2048, true)
		if err != nil || f.tokens > 2048 || f.cutMessages == 0 {
			b.Fatalf("%+v, %v", f, err)
		}
	}
}

// BenchmarkCountTokens is the tokenizer over 1 MB of prose.
func BenchmarkCountTokens(b *testing.B) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog, 42 times. ", 1<<14)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if CountTokens(text) == 0 {
			b.Fatal("no tokens")
		}
	}
}
