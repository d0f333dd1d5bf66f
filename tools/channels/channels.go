// Package channels holds the built-in tools that send messages out through
// channels the user configured: Slack and Discord incoming webhooks, a
// Telegram bot, a generic JSON webhook and ntfy. channel_send delivers a
// message, channel_list shows what is configured, channel_status checks
// that a channel works without posting anything.
//
// Channels carry secrets: bot tokens, access tokens, and webhook URLs that
// are themselves credentials (anyone holding a Slack webhook URL can post).
// None of them ever reaches a tool result, an event or a log: results name
// a channel by its configured name and type only, and every error message
// from a service or the network passes through the channel's redactor,
// which replaces each secret with a label such as "<slack webhook>". That
// includes the first label of a webhook's host name when it may be the
// credential (a per-user subdomain such as Pipedream's), since hosts
// appear in checks and network errors where URLs do not.
//
// The destinations come from the user's configuration, not from a model,
// so they are not subject to http_request's address policy: a self-hosted
// ntfy on the local network is a normal setup.
package channels

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Channel types.
const (
	TypeSlack    = "slack"
	TypeDiscord  = "discord"
	TypeTelegram = "telegram"
	TypeWebhook  = "webhook"
	TypeNtfy     = "ntfy"
)

// Default service endpoints.
const (
	DefaultTelegramAPI = "https://api.telegram.org"
	DefaultNtfyServer  = "https://ntfy.sh"
)

// Config is the [channels] section of the config file: one table per
// channel, keyed by the name used in channel_send.
type Config map[string]Channel

// Channel is one configured channel ([channels.NAME]).
type Channel struct {
	// Type is slack, discord, telegram, webhook or ntfy.
	Type string `toml:"type"`
	// URL is the webhook URL for slack, discord and webhook (a secret), or
	// the ntfy server (default https://ntfy.sh; a full topic URL also works).
	URL string `toml:"url"`
	// Token is the Telegram bot token, the ntfy access token, or a bearer
	// token for a generic webhook.
	Token string `toml:"token"`
	// ChatID is the Telegram chat to post to (a number or @channelname).
	ChatID ChatID `toml:"chat_id"`
	// Topic is the ntfy topic.
	Topic string `toml:"topic"`
	// APIURL overrides the Telegram Bot API base (default https://api.telegram.org).
	APIURL string `toml:"api_url"`
	// Template is a generic webhook's JSON body as a Go text/template;
	// {{json .Text}} is the message as a JSON string, .Channel the channel's
	// name. Default: {"text": {{json .Text}}}.
	Template string `toml:"template"`
	// MaxLength overrides the per-message limit (characters; bytes for ntfy).
	MaxLength int `toml:"max_length"`
	// Split sends a message longer than the limit in several parts (the
	// default); false refuses it instead.
	Split *bool `toml:"split"`
}

// ChatID is a Telegram chat id, written in the config as a number
// (-1001234567890) or a string ("@mychannel").
type ChatID string

// UnmarshalTOML accepts an integer or a string.
func (c *ChatID) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		*c = ChatID(strings.TrimSpace(x))
	case int64:
		*c = ChatID(strconv.FormatInt(x, 10))
	default:
		return fmt.Errorf("chat_id must be a number or a string, got %T", v)
	}
	return nil
}

// channel is a configured channel ready for use, or with the problems that
// keep it from being used.
type channel struct {
	name     string
	kind     string
	problems []string
	svc      service
	red      *redactor
	split    bool
}

// complete reports whether the channel can send.
func (c *channel) complete() bool { return len(c.problems) == 0 && c.svc != nil }

// label is how results name the channel: its name and type, nothing else.
func (c *channel) label() string { return fmt.Sprintf("%q (%s)", c.name, orUnknown(c.kind)) }

// set is every configured channel, sorted by name.
type set struct {
	byName map[string]*channel
	names  []string
	client *http.Client
}

// newSet prepares cfg's channels. It never fails: a channel with a missing
// or invalid setting is kept with its problems, so channel_list can show
// what to fix, and channel_send refuses it with the same words.
func newSet(cfg Config) *set {
	s := &set{byName: map[string]*channel{}, client: newClient()}
	for name, ch := range cfg {
		c := prepare(name, ch)
		s.byName[name] = c
		s.names = append(s.names, name)
	}
	sort.Strings(s.names)
	return s
}

// newClient returns the client channels use. Redirects are not followed: a
// webhook that redirects is misconfigured, and following it would carry the
// message (and any token) somewhere the user did not name.
func newClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			ForceAttemptHTTP2:   true,
			MaxIdleConns:        8,
			IdleConnTimeout:     60 * time.Second,
			TLSHandshakeTimeout: 15 * time.Second,
		},
		Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

func prepare(name string, ch Channel) *channel {
	kind := strings.ToLower(strings.TrimSpace(ch.Type))
	c := &channel{name: name, kind: kind, red: newRedactor(), split: ch.Split == nil || *ch.Split}
	if ch.MaxLength < 0 {
		c.problems = append(c.problems, "max_length must be positive")
	}
	var svc service
	var problems []string
	switch kind {
	case TypeSlack:
		svc, problems = newSlack(ch, c.red)
	case TypeDiscord:
		svc, problems = newDiscord(ch, c.red)
	case TypeTelegram:
		svc, problems = newTelegram(ch, c.red)
	case TypeWebhook:
		svc, problems = newWebhook(name, ch, c.red)
	case TypeNtfy:
		svc, problems = newNtfy(ch, c.red)
	case "":
		problems = []string{"type is missing (slack, discord, telegram, webhook or ntfy)"}
	default:
		problems = []string{fmt.Sprintf("type %q is not one of slack, discord, telegram, webhook, ntfy", ch.Type)}
	}
	c.problems = append(c.problems, problems...)
	if len(c.problems) == 0 {
		if ch.MaxLength > 0 {
			svc = withLimit{service: svc, max: ch.MaxLength}
		}
		c.svc = svc
	}
	return c
}

// withLimit overrides a service's message limit.
type withLimit struct {
	service
	max int
}

func (w withLimit) limit() limit {
	l := w.service.limit()
	l.max = w.max
	return l
}

// lookup finds a channel by name, or says which names exist.
func (s *set) lookup(name string) (*channel, string) {
	if c, ok := s.byName[strings.TrimSpace(name)]; ok {
		return c, ""
	}
	if len(s.names) == 0 {
		return nil, noChannels
	}
	return nil, fmt.Sprintf("Unknown channel %q. Configured channels: %s.", name, strings.Join(s.names, ", "))
}

const noChannels = `No channels are configured. Add one to the config file, for example:

  [channels.phone]
  type = "ntfy"
  topic = "my-secret-topic"

Types: slack and discord (url = the incoming webhook URL), telegram (token, chat_id), webhook (url, optional token and template), ntfy (topic, optional url and token).`

// parseServiceURL checks a configured URL; the problem text never contains
// the URL, which may be a secret.
func parseServiceURL(key, raw string) (*url.URL, string) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, key + " is missing"
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, key + " is not an http:// or https:// URL"
	}
	return u, ""
}

// redactor replaces secrets with labels in any text that leaves the
// package.
type redactor struct {
	secrets []secret
}

type secret struct {
	value, label string
	// word marks a host label: it is replaced only where it stands as a
	// whole label, so that a label that is also a word ("status") does not
	// garble the middle of other words.
	word bool
}

func newRedactor() *redactor { return &redactor{} }

// add registers value under label, with the spellings it takes inside URLs.
// Very short values are skipped: replacing them would garble messages and
// they protect nothing.
func (r *redactor) add(value, label string) {
	for _, v := range []string{value, url.PathEscape(value), url.QueryEscape(value)} {
		if len(v) >= minSecret {
			r.secrets = append(r.secrets, secret{value: v, label: label})
		}
	}
	r.sort()
}

// minSecret is the shortest value worth redacting.
const minSecret = 6

// sort puts the longest secrets first, so a URL is replaced whole before
// its token is.
func (r *redactor) sort() {
	sort.SliceStable(r.secrets, func(i, j int) bool { return len(r.secrets[i].value) > len(r.secrets[j].value) })
}

// addHostLabel registers the first label of u's host name. Some webhook
// services put the credential there (https://eo1a2b3c4d5.m.pipedream.net/),
// and the host, unlike the URL, appears in reachability checks and in
// network errors ("could not connect to HOST", "lookup HOST: no such host").
// A host of one or two labels (localhost, webhook.site) is left readable:
// its first label is a registered domain everyone can look up, not a
// credential someone was issued. Callers also leave out a service's own
// well-known hosts, which say where a message went.
func (r *redactor) addHostLabel(u *url.URL, label string) {
	host := strings.TrimSuffix(u.Hostname(), ".")
	if host == "" || net.ParseIP(host) != nil || strings.Count(host, ".") < 2 {
		return
	}
	first, _, _ := strings.Cut(host, ".")
	for _, v := range []string{first, strings.ToLower(first)} {
		if len(v) >= minSecret {
			r.secrets = append(r.secrets, secret{value: v, label: label, word: true})
		}
	}
	r.sort()
}

// addURL registers a secret URL: the whole of it, and the path segments and
// query values that carry its credentials.
func (r *redactor) addURL(u *url.URL, label string) {
	r.add(u.String(), label)
	r.add(strings.TrimPrefix(u.String(), u.Scheme+"://"), label)
	if len(u.Path) > 1 {
		r.add(u.Path, label)
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if len(seg) >= 12 {
			r.add(seg, label)
		}
	}
	for _, vs := range u.Query() {
		for _, v := range vs {
			if len(v) >= 8 {
				r.add(v, label)
			}
		}
	}
	if p, ok := u.User.Password(); ok {
		r.add(p, label)
	}
}

func (r *redactor) redact(s string) string {
	for _, sec := range r.secrets {
		if sec.word {
			s = replaceLabel(s, sec.value, sec.label)
		} else {
			s = strings.ReplaceAll(s, sec.value, sec.label)
		}
	}
	return s
}

// replaceLabel replaces each occurrence of old in s that stands as the
// first label of a host name: not preceded by a character of a label, and
// followed by a dot. A word in a sentence that happens to be the same as
// the label is left alone.
func replaceLabel(s, old, repl string) string {
	var b strings.Builder
	start := 0
	for from := 0; from < len(s); {
		i := strings.Index(s[from:], old)
		if i < 0 {
			break
		}
		i += from
		end := i + len(old)
		if (i == 0 || !labelByte(s[i-1])) && end < len(s) && s[end] == '.' {
			b.WriteString(s[start:i])
			b.WriteString(repl)
			start, from = end, end
			continue
		}
		from = i + 1
	}
	b.WriteString(s[start:])
	return b.String()
}

func labelByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

func orUnknown(s string) string {
	if s == "" {
		return "no type"
	}
	return s
}
