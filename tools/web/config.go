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
	"cmp"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/jarvis-workbench/jarvis/tools"
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

// Check reports every value of the [web] section that http_request or
// web_search would refuse, each with its key under [web] ("http.timeout")
// and what to do, so that the configuration can list them all before any
// tool is built.
func (c Config) Check(report func(key, problem, fix string)) {
	c.HTTP.check(func(key, problem, fix string) { report("http."+key, problem, fix) })
	s := c.Search
	switch strings.ToLower(strings.TrimSpace(s.Backend)) {
	case "", "searxng", "brave", "tavily":
	default:
		report("search.backend", fmt.Sprintf("%q is not a search backend jarvis knows", s.Backend),
			"use searxng, brave or tavily, or leave it out to use the first one configured")
	}
	for _, u := range []struct{ key, raw string }{
		{"searxng_url", s.SearxNGURL}, {"brave_url", s.BraveURL}, {"tavily_url", s.TavilyURL},
	} {
		if strings.TrimSpace(u.raw) == "" {
			continue
		}
		if _, err := serviceURL(u.key, u.raw); err != nil {
			report("search."+u.key, fmt.Sprintf("%q is not an http:// or https:// URL", tools.RedactURL(u.raw)), "write the service's address as an absolute URL, e.g. http://localhost:8888")
		}
	}
	if badSeconds(s.Timeout) {
		report("search.timeout", fmt.Sprintf("must be a positive number of seconds, got %v", s.Timeout), fmt.Sprintf("leave it out for %d", DefaultSearchTimeout))
	}
}

// check reports what withDefaults refuses, keys relative to [web.http].
func (c HTTPConfig) check(report func(key, problem, fix string)) {
	if c.MaxBytes < 0 {
		report("max_bytes", fmt.Sprintf("must be a positive number of bytes, got %d", c.MaxBytes), fmt.Sprintf("leave it out for %d (1 MiB)", DefaultMaxBytes))
	}
	if badSeconds(c.Timeout) {
		report("timeout", fmt.Sprintf("must be a positive number of seconds, got %v", c.Timeout), fmt.Sprintf("leave it out for %d", DefaultTimeout))
	}
	if badSeconds(c.MaxTimeout) {
		report("max_timeout", fmt.Sprintf("must be a positive number of seconds, got %v", c.MaxTimeout), fmt.Sprintf("leave it out for %d", DefaultMaxTimeout))
	}
	if !badSeconds(c.Timeout) && !badSeconds(c.MaxTimeout) && c.Timeout > 0 {
		if maxT := cmp.Or(c.MaxTimeout, DefaultMaxTimeout); c.Timeout > maxT {
			report("timeout", fmt.Sprintf("%gs is larger than max_timeout (%gs)", c.Timeout, maxT), "lower timeout or raise max_timeout")
		}
	}
	for _, entry := range c.AllowHosts {
		if _, err := NewPolicy([]string{entry}); err != nil {
			msg := strings.TrimPrefix(err.Error(), "[web.http] ")
			if strings.ContainsAny(entry, "@?#") || strings.Contains(entry, "://") {
				// Written as a URL, it may carry credentials, which the
				// parser's own words would quote.
				msg = fmt.Sprintf("allow_hosts entry %q must be a host name, an address or a network, not a URL", tools.RedactURL(entry))
			}
			report("allow_hosts", msg, "")
		}
	}
}

// badSeconds reports a number of seconds that cannot be meant: negative,
// or not a number (TOML has inf and nan).
func badSeconds(s float64) bool { return s < 0 || math.IsNaN(s) || math.IsInf(s, 0) }

// withDefaults fills zero fields and refuses what check reports.
func (c HTTPConfig) withDefaults() (HTTPConfig, error) {
	var first error
	c.check(func(key, problem, _ string) {
		if first == nil && key != "allow_hosts" { // NewPolicy reports those itself
			first = fmt.Errorf("[web.http] %s %s", key, problem)
		}
	})
	if first != nil {
		return c, first
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.MaxTimeout == 0 {
		c.MaxTimeout = DefaultMaxTimeout
	}
	if c.Timeout == 0 {
		c.Timeout = min(DefaultTimeout, c.MaxTimeout)
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
