package ollamatest

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkFlood20k is the time to stream a 20,000-token reply over
// loopback to a client that only splits lines: the ceiling the fake puts on
// any benchmark that uses it (the TUI's needs it well under 0.3 s).
func BenchmarkFlood20k(b *testing.B) {
	const tokens = 20000
	srv := New(b)
	srv.Model("tiny")
	srv.On().Reply(Flood(tokens))
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
