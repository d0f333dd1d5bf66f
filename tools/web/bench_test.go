package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"testing"

	"github.com/jarvis-workbench/jarvis/tools"
)

// The address check runs on every URL, redirect and dial: it must cost
// next to nothing beside a network round trip.
func BenchmarkPolicyCheckAddr(b *testing.B) {
	p, _ := NewPolicy([]string{"192.168.1.0/24", "nas.lan"})
	addrs := []netip.Addr{
		netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("2606:4700:4700::1111"),
		netip.MustParseAddr("64:ff9b::a9fe:a9fe"), netip.MustParseAddr("127.0.0.1"),
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = p.CheckAddr("example.com", addrs[i%len(addrs)])
	}
}

func BenchmarkPolicyCheckURL(b *testing.B) {
	p, _ := NewPolicy(nil)
	u, _ := url.Parse("https://example.com/path?q=1")
	b.ReportAllocs()
	for b.Loop() {
		_ = p.CheckURL(u)
	}
}

// A whole http_request call against loopback: argument handling, policy,
// guarded dial (connections are reused), body cap and formatting.
func BenchmarkHTTPRequestLoopback(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"ok","items":[1,2,3]}`)
	}))
	defer srv.Close()
	h, err := NewHTTPRequest(HTTPConfig{AllowHosts: []string{"127.0.0.1"}})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	args := tools.Args{"url": srv.URL + "/api"}
	b.ReportAllocs()
	for b.Loop() {
		if r := h.Execute(context.Background(), args); !r.Success {
			b.Fatal(r.Content)
		}
	}
}
