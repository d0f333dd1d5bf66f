package web

import (
	"math"
	"strings"
	"testing"
)

func TestCheckReportsEveryBadValue(t *testing.T) {
	cfg := Config{
		HTTP: HTTPConfig{MaxBytes: -1, Timeout: 90, MaxTimeout: 60, AllowHosts: []string{"nas.lan", "10.0.0.0/33", "https://user:pw-secret-1@nas.lan/"}},
		Search: SearchConfig{Backend: "Bing", SearxNGURL: "ftp://user:pw-secret-2@searx/?token=q-secret-3",
			BraveURL: "https://api.search.brave.com/res/v1/web/search", Timeout: math.Inf(1)},
	}
	var keys []string
	var all strings.Builder
	cfg.Check(func(key, problem, fix string) {
		keys = append(keys, key)
		all.WriteString(problem + " " + fix + "\n")
	})
	want := []string{"http.max_bytes", "http.timeout", "http.allow_hosts", "http.allow_hosts", "search.backend", "search.searxng_url", "search.timeout"}
	if strings.Join(keys, " ") != strings.Join(want, " ") {
		t.Fatalf("keys %v, want %v\n%s", keys, want, all.String())
	}
	for _, s := range []string{"pw-secret-1", "pw-secret-2", "q-secret-3"} {
		if strings.Contains(all.String(), s) {
			t.Errorf("%s is in a problem:\n%s", s, all.String())
		}
	}
	if !strings.Contains(all.String(), "90s is larger than max_timeout (60s)") {
		t.Errorf("problems:\n%s", all.String())
	}
	// A zero value is the default, not a mistake; and NewHTTPRequest
	// refuses what Check reports.
	none := true
	Config{}.Check(func(string, string, string) { none = false })
	if !none {
		t.Error("the zero configuration has problems")
	}
	if _, err := NewHTTPRequest(HTTPConfig{Timeout: -1}); err == nil || !strings.Contains(err.Error(), "[web.http] timeout must be a positive number of seconds") {
		t.Errorf("NewHTTPRequest: %v", err)
	}
}
