package ollama

import (
	"strings"
	"testing"

	"github.com/jarvis-workbench/jarvis/engine"
)

func TestParseHost(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", "http://127.0.0.1:11434"},
		{"  ", "http://127.0.0.1:11434"},
		{"example.com", "http://example.com:11434"},
		{"example.com:8080", "http://example.com:8080"},
		{"http://example.com", "http://example.com:80"},
		{"https://example.com", "https://example.com:443"},
		{"http://example.com:11434/", "http://example.com:11434"},
		{"https://proxy.example.com/ollama/", "https://proxy.example.com:443/ollama"},
		{"ollama.com", "https://ollama.com:443"},
		{"0.0.0.0", "http://127.0.0.1:11434"},
		{"0.0.0.0:9000", "http://127.0.0.1:9000"},
		{":9000", "http://127.0.0.1:9000"},
		{"9000", "http://127.0.0.1:9000"},
		{"[::]:9000", "http://[::1]:9000"},
		{"[::1]", "http://[::1]:11434"},
		{"::1", "http://[::1]:11434"},
		{"10.0.0.5", "http://10.0.0.5:11434"},
		{"http://10.0.0.5:8000", "http://10.0.0.5:8000"},
	}
	for _, c := range cases {
		got, err := ParseHost(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseHost(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"ftp://example.com", "example.com:http", "example.com:70000", "example.com:0", "exa mple.com"} {
		if got, err := ParseHost(bad); err == nil {
			t.Errorf("ParseHost(%q) = %q, want an error", bad, got)
		} else if !strings.Contains(err.Error(), bad) {
			t.Errorf("ParseHost(%q): error %q does not quote the input", bad, err)
		}
	}
}

func TestResolveHostPrecedence(t *testing.T) {
	t.Setenv(EnvHost, "")
	if got, err := ResolveHost(""); err != nil || got != engine.DefaultHost {
		t.Errorf("default: %q, %v", got, err)
	}
	t.Setenv(EnvHost, "0.0.0.0:11500")
	if got, err := ResolveHost(""); err != nil || got != "http://127.0.0.1:11500" {
		t.Errorf("from env: %q, %v", got, err)
	}
	if got, err := ResolveHost("gpu-box"); err != nil || got != "http://gpu-box:11434" {
		t.Errorf("explicit over env: %q, %v", got, err)
	}
	t.Setenv(EnvHost, "host:notaport")
	if _, err := ResolveHost(""); err == nil || !strings.Contains(err.Error(), EnvHost) {
		t.Errorf("bad env: error %v does not name %s", err, EnvHost)
	}
}
