// Package web holds the built-in tools that reach the network on a model's
// behalf: http_request, which fetches a URL the model chose, and web_search,
// which sends a query to the search service the user configured.
//
// The two differ in whom they trust. http_request's destination comes from
// the model, so every address it actually connects to is checked (see
// Policy): loopback, private, link-local and the other non-public ranges are
// refused, whether they arrive as a literal in the URL, through DNS, or in a
// redirect, unless the user allow-listed them; and a redirect leads to an
// allow-listed destination only from another allow-listed one, so a public
// site cannot bounce an approved request into the user's network.
// web_search talks only to
// services named in the user's configuration, so those are not subject to
// that check, but it never follows a redirect to another host.
//
// Both tools send data off the machine, so both require confirmation.
package web

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// Defaults for HTTPConfig and SearchConfig fields left at zero.
const (
	// DefaultMaxBytes caps the response body http_request returns (1 MiB).
	DefaultMaxBytes = 1 << 20
	// DefaultTimeout is the per-request timeout in seconds.
	DefaultTimeout = 30
	// DefaultMaxTimeout is the largest timeout a call may ask for.
	DefaultMaxTimeout = 120
	// DefaultUserAgent identifies jarvis's requests.
	DefaultUserAgent = "jarvis-http/1.0"
	// MaxRedirects is how many redirects one request follows.
	MaxRedirects = 5

	// DefaultBraveURL and DefaultTavilyURL are the search APIs' endpoints.
	DefaultBraveURL  = "https://api.search.brave.com/res/v1/web/search"
	DefaultTavilyURL = "https://api.tavily.com/search"
	// DefaultSearchTimeout bounds one search, in seconds.
	DefaultSearchTimeout = 20
)

// Environment variables that supply search settings missing from the config.
const (
	EnvSearxNGURL   = "SEARXNG_URL"
	EnvBraveAPIKey  = "BRAVE_API_KEY"
	EnvTavilyAPIKey = "TAVILY_API_KEY"
)

// Config is the [web] section of the config file.
type Config struct {
	HTTP   HTTPConfig   `toml:"http"`
	Search SearchConfig `toml:"search"`
}

// HTTPConfig configures http_request ([web.http]).
type HTTPConfig struct {
	// AllowHosts lists what http_request may reach even though it is not
	// public: exact host names ("localhost", "nas.lan"), addresses
	// ("127.0.0.1") or networks ("192.168.1.0/24", "fd00::/8"). A listed
	// name is trusted whatever it resolves to.
	AllowHosts []string `toml:"allow_hosts"`
	// MaxBytes caps the response body returned (0: DefaultMaxBytes).
	MaxBytes int64 `toml:"max_bytes"`
	// Timeout is the default per-request timeout in seconds (0: 30).
	Timeout float64 `toml:"timeout"`
	// MaxTimeout is the largest timeout a call may ask for (0: 120).
	MaxTimeout float64 `toml:"max_timeout"`
	// UserAgent is sent when the call sets none.
	UserAgent string `toml:"user_agent"`
}

// SearchConfig configures web_search ([web.search]). Empty keys and URLs
// fall back to the environment (SEARXNG_URL, BRAVE_API_KEY, TAVILY_API_KEY).
type SearchConfig struct {
	// Backend picks "searxng", "brave" or "tavily". Empty picks the first
	// configured one in that order: a local SearXNG first.
	Backend string `toml:"backend"`
	// SearxNGURL is the SearXNG instance, e.g. "http://localhost:8888".
	SearxNGURL   string `toml:"searxng_url"`
	BraveAPIKey  string `toml:"brave_api_key"`
	TavilyAPIKey string `toml:"tavily_api_key"`
	// BraveURL and TavilyURL override the API endpoints (a proxy, a test).
	BraveURL  string `toml:"brave_url"`
	TavilyURL string `toml:"tavily_url"`
	// Timeout bounds one search in seconds (0: 20).
	Timeout float64 `toml:"timeout"`
}

// withDefaults fills zero fields and checks the rest.
func (c HTTPConfig) withDefaults() (HTTPConfig, error) {
	if c.MaxBytes < 0 {
		return c, fmt.Errorf("[web.http] max_bytes must be positive, got %d", c.MaxBytes)
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.Timeout < 0 || c.MaxTimeout < 0 {
		return c, fmt.Errorf("[web.http] timeout and max_timeout must be positive numbers of seconds")
	}
	if c.MaxTimeout == 0 {
		c.MaxTimeout = DefaultMaxTimeout
	}
	if c.Timeout == 0 {
		c.Timeout = min(DefaultTimeout, c.MaxTimeout)
	}
	if c.Timeout > c.MaxTimeout {
		return c, fmt.Errorf("[web.http] timeout (%gs) is larger than max_timeout (%gs)", c.Timeout, c.MaxTimeout)
	}
	if strings.TrimSpace(c.UserAgent) == "" {
		c.UserAgent = DefaultUserAgent
	}
	return c, nil
}

// resolved returns c with environment fallbacks applied and defaults set.
func (c SearchConfig) resolved(getenv func(string) string) SearchConfig {
	if getenv == nil {
		getenv = os.Getenv
	}
	fill := func(v *string, env string) {
		if strings.TrimSpace(*v) == "" {
			*v = strings.TrimSpace(getenv(env))
		}
	}
	fill(&c.SearxNGURL, EnvSearxNGURL)
	fill(&c.BraveAPIKey, EnvBraveAPIKey)
	fill(&c.TavilyAPIKey, EnvTavilyAPIKey)
	if c.BraveURL == "" {
		c.BraveURL = DefaultBraveURL
	}
	if c.TavilyURL == "" {
		c.TavilyURL = DefaultTavilyURL
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultSearchTimeout
	}
	c.Backend = strings.ToLower(strings.TrimSpace(c.Backend))
	return c
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
