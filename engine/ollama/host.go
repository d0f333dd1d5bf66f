package ollama

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/jarvis-workbench/jarvis/engine"
)

// EnvHost is the environment variable Ollama itself reads for its address.
const EnvHost = "OLLAMA_HOST"

// ResolveHost returns the base URL of the server to talk to: explicit (the
// --host flag or the config file) when set, else $OLLAMA_HOST, else
// engine.DefaultHost. Both are read with ParseHost, so every form the
// ollama command accepts works here too.
func ResolveHost(explicit string) (string, error) {
	if strings.TrimSpace(explicit) != "" {
		return ParseHost(explicit)
	}
	if env := strings.TrimSpace(os.Getenv(EnvHost)); env != "" {
		u, err := ParseHost(env)
		if err != nil {
			return "", fmt.Errorf("%s: %w", EnvHost, err)
		}
		return u, nil
	}
	return engine.DefaultHost, nil
}

// ParseHost turns an Ollama address into a base URL, following the rules of
// Ollama's own OLLAMA_HOST parsing (envconfig.Host):
//
//	""                      -> http://127.0.0.1:11434
//	"example.com"           -> http://example.com:11434
//	"example.com:8080"      -> http://example.com:8080
//	"http://example.com"    -> http://example.com:80   (an explicit scheme implies its port)
//	"https://example.com"   -> https://example.com:443
//	"ollama.com"            -> https://ollama.com:443
//	"host:port/prefix"      -> keeps the path prefix (for reverse proxies)
//
// Two forms differ on purpose, because they are what people type to mean
// "this machine": a bare port ("11434" or ":11434") means 127.0.0.1 on that
// port, and the listen-everywhere addresses 0.0.0.0 and [::] (what a server
// is started with) are dialled as 127.0.0.1 and [::1]. Unlike Ollama, which
// falls back to the default port with a log line, a bad port is an error.
func ParseHost(s string) (string, error) {
	const defaultPort = "11434"
	s = strings.TrimSpace(s)
	if s == "" {
		return engine.DefaultHost, nil
	}
	port := defaultPort
	scheme, hostport, ok := strings.Cut(s, "://")
	switch {
	case !ok:
		scheme, hostport = "http", s
		if s == "ollama.com" {
			scheme, hostport = "https", "ollama.com:443"
		}
	case scheme == "http":
		port = "80"
	case scheme == "https":
		port = "443"
	default:
		return "", fmt.Errorf("invalid Ollama host %q: the scheme must be http or https", s)
	}
	hostport, path, _ := strings.Cut(hostport, "/")
	if isDigits(hostport) {
		hostport = ":" + hostport
	}
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	} else {
		port = p
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("invalid Ollama host %q: port %q is not a number from 1 to 65535", s, port)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	if strings.ContainsAny(host, " /?#@") {
		return "", fmt.Errorf("invalid Ollama host %q: %q is not a host name or IP address", s, host)
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}
	if path = strings.Trim(path, "/"); path != "" {
		u.Path = "/" + path
	}
	return u.String(), nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
