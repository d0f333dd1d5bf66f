package tools

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// What jarvis records or shows about a call outside the call itself (the
// audit log, an MCP server's status) must not carry the credentials the
// call or the configuration holds. RedactURL and RedactArgs are the one
// place that decides what a secret looks like.

// maxShownSegment is the longest URL path segment shown whole; longer ones
// are usually tokens or ids.
const maxShownSegment = 16

// RedactedMark replaces a value judged secret.
const RedactedMark = "<redacted>"

// RedactURL returns raw in a form fit to show: without user info, query or
// fragment (a dropped query is marked "?…") and with every path segment
// longer than 16 characters cut to its first four and "…". A value that
// does not parse as a URL is cut the same way by its punctuation, erring on
// the side of showing less.
func RedactURL(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ""
	}
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" && u.Host != "" {
		out := u.Scheme + "://" + u.Host + shortenPath(u.EscapedPath())
		if u.RawQuery != "" || u.ForceQuery {
			out += "?…"
		}
		return out
	}
	s, query := raw, ""
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		if s[i] == '?' {
			query = "?…"
		}
		s = s[:i]
	}
	prefix := ""
	if i := strings.Index(s, "://"); i >= 0 {
		prefix, s = s[:i+3], s[i+3:]
	}
	// Without a parse to say where the user info ends, drop everything up
	// to the last '@': at worst part of the path goes unseen.
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		s = s[i+1:]
	}
	host, path := s, ""
	if i := strings.IndexByte(s, '/'); i >= 0 {
		host, path = s[:i], s[i:]
	}
	return prefix + host + shortenPath(path) + query
}

func shortenPath(p string) string {
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		if utf8.RuneCountInString(seg) > maxShownSegment {
			segs[i] = string([]rune(seg)[:4]) + "…"
		}
	}
	return strings.Join(segs, "/")
}

// secretWords are parts of argument names whose values are credentials.
var secretWords = []string{"token", "secret", "password", "passwd", "apikey", "api_key", "api-key",
	"authorization", "auth", "credential", "cookie", "private_key", "session_key", "access_key"}

// secretName reports whether an argument or header name holds a credential
// ("Authorization", "api_key", "X-Auth-Token", "password").
func secretName(name string) bool {
	n := strings.ToLower(name)
	if n == "key" || strings.HasSuffix(n, "_key") || strings.HasSuffix(n, "-key") {
		return true
	}
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// RedactArgs returns a copy of args fit to record: a value under a
// credential's name (token, password, api_key, Authorization, at any
// depth) is replaced by "<redacted>", and every string that holds a URL
// with user info or a query is shown as RedactURL shows it. Bearer and
// basic credentials written into free text are cut after the scheme word.
func RedactArgs(args Args) Args {
	if args == nil {
		return nil
	}
	out, _ := redactValue(map[string]any(args)).(map[string]any)
	return Args(out)
}

func redactValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			if secretName(k) && val != nil {
				if _, nested := val.(map[string]any); !nested {
					out[k] = RedactedMark
					continue
				}
			}
			out[k] = redactValue(val)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			out[i] = redactValue(val)
		}
		return out
	case string:
		return redactText(t)
	}
	return v
}

// redactText hides the URLs with credentials and the bearer tokens a
// string holds, leaving the rest as it is.
func redactText(s string) string {
	if !strings.Contains(s, "://") && !strings.Contains(strings.ToLower(s), "bearer ") && !strings.Contains(strings.ToLower(s), "basic ") {
		return s
	}
	fields := strings.Fields(s)
	changed := false
	for i, f := range fields {
		lower := strings.ToLower(f)
		if (lower == "bearer" || lower == "basic") && i+1 < len(fields) {
			fields[i+1] = RedactedMark
			changed = true
			continue
		}
		if j := strings.Index(f, "://"); j > 0 {
			start := j
			for start > 0 && isSchemeByte(f[start-1]) {
				start--
			}
			raw := f[start:]
			if u, err := url.Parse(raw); err == nil && (u.User != nil || u.RawQuery != "" || u.Fragment != "" || longSegment(u.EscapedPath())) {
				fields[i] = f[:start] + RedactURL(raw)
				changed = true
			}
		}
	}
	if !changed {
		return s
	}
	return strings.Join(fields, " ")
}

func isSchemeByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '+' || b == '-' || b == '.'
}

func longSegment(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if utf8.RuneCountInString(seg) > maxShownSegment {
			return true
		}
	}
	return false
}
