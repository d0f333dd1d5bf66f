package channels

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/jarvis-workbench/jarvis/internal/lazyregexp"
)

// service is one kind of channel: how to send, how long a message may be,
// and how to check it without side effects.
type service interface {
	limit() limit
	send(ctx context.Context, c *http.Client, text string) error
	// check verifies the channel without posting anything. note says what
	// could not be verified, if anything.
	check(ctx context.Context, c *http.Client) (steps []step, note string)
}

// limit is a service's per-message size limit.
type limit struct {
	service string
	max     int  // 0: none
	bytes   bool // counted in bytes, else in characters
}

// step is one check channel_status performed.
type step struct {
	what   string
	ok     bool
	detail string
}

// detail extracts a service's own error message from an answer body.
func (a answer) detail() string {
	var v map[string]any
	if json.Unmarshal(a.body, &v) == nil {
		for _, k := range []string{"description", "message", "error", "detail"} {
			if s, ok := v[k].(string); ok && s != "" {
				return oneLine(s)
			}
		}
		return ""
	}
	s := strings.TrimSpace(string(a.body))
	if s == "" || strings.HasPrefix(s, "<") || len(s) > 300 {
		return ""
	}
	return oneLine(s)
}

// code is "HTTP 403" or "HTTP 403: invalid_token".
func (a answer) code() string {
	if d := a.detail(); d != "" {
		return fmt.Sprintf("HTTP %d: %s", a.status, d)
	}
	return fmt.Sprintf("HTTP %d", a.status)
}

// retryHint says when to retry a rate-limited call, from the Retry-After
// header or a service's own field.
func (a answer) retryHint(bodySeconds float64) string {
	if v := strings.TrimSpace(a.header.Get("Retry-After")); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			return fmt.Sprintf(" Retry after %d seconds.", n)
		}
		return fmt.Sprintf(" Retry after %s.", v)
	}
	if bodySeconds > 0 {
		return fmt.Sprintf(" Retry after %s seconds.", strconv.FormatFloat(bodySeconds, 'f', -1, 64))
	}
	return " Wait before sending again."
}

// commonError words the answers every service shares (rate limits, server
// failures); it returns "" for the service-specific ones.
func commonError(service string, a answer, bodyRetry float64) string {
	switch {
	case a.status == http.StatusTooManyRequests:
		return fmt.Sprintf("%s rate-limited the request (%s).%s", service, a.code(), a.retryHint(bodyRetry))
	case a.status >= 500:
		return fmt.Sprintf("%s failed on its side (%s). Try again later.", service, a.code())
	case a.status >= 300 && a.status < 400:
		return fmt.Sprintf("%s answered with a redirect (HTTP %d), which is not followed; check the channel's URL.", service, a.status)
	}
	return ""
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func jsonHeader() http.Header {
	return http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
}

// checkReachable sends a HEAD to the root of u's host: any HTTP answer shows
// the host is reachable (DNS, TCP, TLS), and the root has no side effects.
func checkReachable(ctx context.Context, c *http.Client, u *url.URL) step {
	root := &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/"}
	what := fmt.Sprintf("HEAD %s://%s/", u.Scheme, u.Host)
	a, err := do(ctx, c, http.MethodHead, root, nil, nil)
	if err != nil {
		return step{what: what, detail: err.Error()}
	}
	return step{what: what, ok: true, detail: fmt.Sprintf("the host answered (HTTP %d)", a.status)}
}

// The services' own webhook hosts: their names carry no secret, so they
// stay readable in results. A Slack- or Discord-compatible webhook
// elsewhere (a self-hosted chat, a relay) gets its host label redacted like
// a generic webhook's.
var (
	slackHosts   = []string{"hooks.slack.com", "hooks.slack-gov.com"}
	discordHosts = []string{"discord.com", "discordapp.com", "canary.discord.com", "ptb.discord.com"}
)

func wellKnownHost(u *url.URL, hosts []string) bool {
	h := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	return slices.Contains(hosts, h)
}

// --- Slack -----------------------------------------------------------------

type slack struct{ u *url.URL }

func newSlack(ch Channel, red *redactor) (service, []string) {
	u, p := parseServiceURL("url (the incoming webhook URL)", ch.URL)
	if p != "" {
		return nil, []string{p}
	}
	red.addURL(u, "<slack webhook>")
	if !wellKnownHost(u, slackHosts) {
		red.addHostLabel(u, "<webhook host>")
	}
	return &slack{u: u}, nil
}

func (s *slack) limit() limit { return limit{service: "Slack", max: 40000} }

func (s *slack) send(ctx context.Context, c *http.Client, text string) error {
	body, _ := json.Marshal(map[string]string{"text": text})
	a, err := do(ctx, c, http.MethodPost, s.u, jsonHeader(), body)
	if err != nil {
		return err
	}
	if a.status == http.StatusOK {
		return nil
	}
	if msg := commonError("Slack", a, 0); msg != "" {
		return errors.New(msg)
	}
	switch a.status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusGone:
		return failf("Slack rejected the webhook (%s): the webhook URL is wrong, was revoked, or its channel is gone; create a new incoming webhook and update url for this channel", a.code())
	}
	return failf("Slack refused the message (%s)", a.code())
}

func (s *slack) check(ctx context.Context, c *http.Client) ([]step, string) {
	return []step{checkReachable(ctx, c, s.u)},
		"Slack has no way to test an incoming webhook without posting to it, so the webhook itself was not tested."
}

// --- Discord ---------------------------------------------------------------

type discord struct{ u *url.URL }

func newDiscord(ch Channel, red *redactor) (service, []string) {
	u, p := parseServiceURL("url (the webhook URL)", ch.URL)
	if p != "" {
		return nil, []string{p}
	}
	red.addURL(u, "<discord webhook>")
	if !wellKnownHost(u, discordHosts) {
		red.addHostLabel(u, "<webhook host>")
	}
	return &discord{u: u}, nil
}

func (d *discord) limit() limit { return limit{service: "Discord", max: 2000} }

// discordAnswer is the part of Discord's error body that matters.
type discordAnswer struct {
	RetryAfter float64 `json:"retry_after"`
}

func (d *discord) err(a answer) error {
	var da discordAnswer
	_ = json.Unmarshal(a.body, &da)
	if msg := commonError("Discord", a, da.RetryAfter); msg != "" {
		return errors.New(msg)
	}
	switch a.status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
		return failf("Discord rejected the webhook (%s): it was deleted or the URL is wrong; create a new webhook and update url for this channel", a.code())
	}
	return failf("Discord refused the message (%s)", a.code())
}

func (d *discord) send(ctx context.Context, c *http.Client, text string) error {
	u := *d.u
	q := u.Query()
	q.Set("wait", "true")
	u.RawQuery = q.Encode()
	// No mentions are parsed: text written by a model must not ping
	// @everyone or anyone else.
	body, _ := json.Marshal(map[string]any{"content": text, "allowed_mentions": map[string]any{"parse": []string{}}})
	a, err := do(ctx, c, http.MethodPost, &u, jsonHeader(), body)
	if err != nil {
		return err
	}
	if a.status == http.StatusOK || a.status == http.StatusNoContent {
		return nil
	}
	return d.err(a)
}

func (d *discord) check(ctx context.Context, c *http.Client) ([]step, string) {
	what := "GET webhook (Discord's read-only webhook lookup)"
	a, err := do(ctx, c, http.MethodGet, d.u, http.Header{"Accept": {"application/json"}}, nil)
	if err != nil {
		return []step{{what: what, detail: err.Error()}}, ""
	}
	if a.status != http.StatusOK {
		return []step{{what: what, detail: d.err(a).Error()}}, ""
	}
	var info struct {
		Name      string `json:"name"`
		ChannelID string `json:"channel_id"`
	}
	_ = json.Unmarshal(a.body, &info)
	return []step{{what: what, ok: true, detail: fmt.Sprintf("the webhook exists (name %q, Discord channel %s)", info.Name, info.ChannelID)}}, ""
}

// --- Telegram --------------------------------------------------------------

type telegram struct {
	api    *url.URL
	token  string
	chatID string
}

func newTelegram(ch Channel, red *redactor) (service, []string) {
	var problems []string
	token := strings.TrimSpace(ch.Token)
	if token == "" {
		problems = append(problems, "token (the bot token from @BotFather) is missing")
	} else {
		red.add(token, "<telegram token>")
	}
	if strings.TrimSpace(string(ch.ChatID)) == "" {
		problems = append(problems, "chat_id is missing")
	}
	base := ch.APIURL
	if strings.TrimSpace(base) == "" {
		base = DefaultTelegramAPI
	}
	api, p := parseServiceURL("api_url", base)
	if p != "" {
		problems = append(problems, p)
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return &telegram{api: api, token: token, chatID: strings.TrimSpace(string(ch.ChatID))}, nil
}

func (t *telegram) limit() limit { return limit{service: "Telegram", max: 4096} }

// call invokes a Bot API method and returns its result.
func (t *telegram) call(ctx context.Context, c *http.Client, method string, params map[string]any) (json.RawMessage, error) {
	u := *t.api
	u.Path = strings.TrimSuffix(u.Path, "/") + "/bot" + t.token + "/" + method
	body, _ := json.Marshal(params)
	a, err := do(ctx, c, http.MethodPost, &u, jsonHeader(), body)
	if err != nil {
		return nil, err
	}
	var reply struct {
		OK          bool            `json:"ok"`
		Result      json.RawMessage `json:"result"`
		Description string          `json:"description"`
		Parameters  struct {
			RetryAfter float64 `json:"retry_after"`
		} `json:"parameters"`
	}
	if json.Unmarshal(a.body, &reply) == nil && reply.OK && a.status == http.StatusOK {
		return reply.Result, nil
	}
	if msg := commonError("Telegram", a, reply.Parameters.RetryAfter); msg != "" {
		return nil, errors.New(msg)
	}
	switch {
	case a.status == http.StatusUnauthorized, a.status == http.StatusNotFound:
		return nil, failf("Telegram rejected the bot token (%s); check token for this channel (from @BotFather)", a.code())
	case a.status == http.StatusBadRequest && strings.Contains(strings.ToLower(reply.Description), "chat not found"):
		return nil, failf("Telegram refused %s: the bot does not know chat %s (%s); check chat_id for this channel, and that the bot was added to the group or channel (a person must first start a chat with the bot)", method, t.chatID, a.code())
	case a.status == http.StatusOK:
		return nil, failf("Telegram answered %s with something that is not a Bot API reply; check api_url", method)
	}
	return nil, failf("Telegram refused %s (%s)", method, a.code())
}

func (t *telegram) send(ctx context.Context, c *http.Client, text string) error {
	_, err := t.call(ctx, c, "sendMessage", map[string]any{"chat_id": t.chatID, "text": text})
	return err
}

func (t *telegram) check(ctx context.Context, c *http.Client) ([]step, string) {
	res, err := t.call(ctx, c, "getMe", map[string]any{})
	if err != nil {
		return []step{{what: "getMe", detail: err.Error()}}, ""
	}
	var me struct {
		ID       int64  `json:"id"`
		Username string `json:"username"`
	}
	_ = json.Unmarshal(res, &me)
	steps := []step{{what: "getMe", ok: true, detail: fmt.Sprintf("the bot token is valid (bot @%s, id %d)", me.Username, me.ID)}}

	res, err = t.call(ctx, c, "getChat", map[string]any{"chat_id": t.chatID})
	if err != nil {
		return append(steps, step{what: "getChat", detail: err.Error()}), ""
	}
	var chat struct {
		Type      string `json:"type"`
		Title     string `json:"title"`
		FirstName string `json:"first_name"`
	}
	_ = json.Unmarshal(res, &chat)
	name := chat.Title
	if name == "" {
		name = chat.FirstName
	}
	return append(steps, step{what: "getChat", ok: true, detail: fmt.Sprintf("the bot can see the chat (%s %q)", chat.Type, name)}), ""
}

// --- generic webhook -------------------------------------------------------

const defaultTemplate = `{"text": {{json .Text}}}`

type webhook struct {
	u     *url.URL
	token string
	tmpl  *template.Template
	name  string
}

func newWebhook(name string, ch Channel, red *redactor) (service, []string) {
	u, p := parseServiceURL("url", ch.URL)
	if p != "" {
		return nil, []string{p}
	}
	red.addURL(u, "<webhook url>")
	red.addHostLabel(u, "<webhook host>")
	token := strings.TrimSpace(ch.Token)
	if token != "" {
		red.add(token, "<webhook token>")
	}
	src := ch.Template
	if strings.TrimSpace(src) == "" {
		src = defaultTemplate
	}
	tmpl, err := template.New("webhook").Option("missingkey=error").Funcs(template.FuncMap{"json": jsonString}).Parse(src)
	if err != nil {
		return nil, []string{"template does not parse: " + red.redact(err.Error())}
	}
	w := &webhook{u: u, token: token, tmpl: tmpl, name: name}
	// A message with quotes, a newline and a backslash shows whether the
	// template escapes it: {{.Text}} instead of {{json .Text}} would not.
	if _, err := w.render("a \"quoted\"\nline \\ end"); err != nil {
		return nil, []string{err.Error()}
	}
	return w, nil
}

func jsonString(s string) (string, error) {
	b, err := json.Marshal(s)
	return string(b), err
}

func (w *webhook) render(text string) ([]byte, error) {
	var b bytes.Buffer
	if err := w.tmpl.Execute(&b, map[string]string{"Text": text, "Channel": w.name}); err != nil {
		return nil, failf("the template failed: %v", err)
	}
	if !json.Valid(b.Bytes()) {
		return nil, failf("template does not produce valid JSON; insert the message with {{json .Text}}")
	}
	return b.Bytes(), nil
}

func (w *webhook) limit() limit { return limit{service: "the webhook"} }

func (w *webhook) send(ctx context.Context, c *http.Client, text string) error {
	body, err := w.render(text)
	if err != nil {
		return err
	}
	h := jsonHeader()
	if w.token != "" {
		h.Set("Authorization", "Bearer "+w.token)
	}
	a, err := do(ctx, c, http.MethodPost, w.u, h, body)
	if err != nil {
		return err
	}
	if a.status >= 200 && a.status < 300 {
		return nil
	}
	if msg := commonError("The webhook", a, 0); msg != "" {
		return errors.New(msg)
	}
	if a.status == http.StatusUnauthorized || a.status == http.StatusForbidden {
		return failf("The webhook refused the credentials (%s); check url and token for this channel", a.code())
	}
	return failf("The webhook refused the message (%s)", a.code())
}

func (w *webhook) check(ctx context.Context, c *http.Client) ([]step, string) {
	return []step{checkReachable(ctx, c, w.u)},
		"The webhook itself was not called: a generic webhook cannot be tested without side effects."
}

// --- ntfy ------------------------------------------------------------------

type ntfy struct {
	server *url.URL
	topic  string
	token  string
}

// ntfyTopic is what ntfy takes as a topic, of at most maxNtfyTopicLen
// characters (checked apart: a counted repetition compiles to one copy of
// the class per count).
var ntfyTopic = lazyregexp.New(`^[-_A-Za-z0-9]+$`)

const maxNtfyTopicLen = 64

func newNtfy(ch Channel, red *redactor) (service, []string) {
	raw := ch.URL
	if strings.TrimSpace(raw) == "" {
		raw = DefaultNtfyServer
	}
	server, p := parseServiceURL("url", raw)
	if p != "" {
		return nil, []string{p}
	}
	topic := strings.TrimSpace(ch.Topic)
	if topic == "" {
		// url may be the topic URL itself: https://ntfy.sh/mytopic.
		path := strings.TrimSuffix(server.Path, "/")
		if i := strings.LastIndex(path, "/"); i >= 0 && path[i+1:] != "" {
			topic, server.Path = path[i+1:], path[:i]
		}
	}
	server.RawQuery, server.Fragment = "", ""
	var problems []string
	switch {
	case topic == "":
		problems = append(problems, "topic is missing")
	case len(topic) > maxNtfyTopicLen || !ntfyTopic().MatchString(topic):
		problems = append(problems, "topic must be 1-64 letters, digits, - or _")
	default:
		red.add(topic, "<ntfy topic>")
		red.addURL(server.JoinPath(topic), "<ntfy topic>")
	}
	token := strings.TrimSpace(ch.Token)
	if token != "" {
		red.add(token, "<ntfy token>")
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return &ntfy{server: server, topic: topic, token: token}, nil
}

// ntfy's default message-size-limit; longer bodies become attachments or
// are refused, depending on the server.
func (n *ntfy) limit() limit { return limit{service: "ntfy", max: 4096, bytes: true} }

func (n *ntfy) auth(h http.Header) http.Header {
	if n.token != "" {
		h.Set("Authorization", "Bearer "+n.token)
	}
	return h
}

func (n *ntfy) send(ctx context.Context, c *http.Client, text string) error {
	h := n.auth(http.Header{"Content-Type": {"text/plain; charset=utf-8"}})
	a, err := do(ctx, c, http.MethodPost, n.server.JoinPath(n.topic), h, []byte(text))
	if err != nil {
		return err
	}
	if a.status == http.StatusOK {
		return nil
	}
	if msg := commonError("ntfy", a, 0); msg != "" {
		return errors.New(msg)
	}
	switch a.status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return failf("ntfy refused access to the topic (%s): the topic is reserved or the token lacks write access; check token for this channel", a.code())
	case http.StatusRequestEntityTooLarge:
		return failf("ntfy refused the message as too large (%s)", a.code())
	}
	return failf("ntfy refused the message (%s)", a.code())
}

func (n *ntfy) check(ctx context.Context, c *http.Client) ([]step, string) {
	what := "GET /v1/health"
	a, err := do(ctx, c, http.MethodGet, n.server.JoinPath("v1", "health"), http.Header{"Accept": {"application/json"}}, nil)
	var health struct {
		Healthy bool `json:"healthy"`
	}
	switch {
	case err != nil:
		return []step{{what: what, detail: err.Error()}}, ""
	case a.status != http.StatusOK || json.Unmarshal(a.body, &health) != nil:
		return []step{{what: what, detail: fmt.Sprintf("the server did not answer as ntfy does (%s); check url", a.code())}}, ""
	case !health.Healthy:
		return []step{{what: what, detail: "the server reports that it is not healthy"}}, ""
	}
	steps := []step{{what: what, ok: true, detail: "the server is healthy"}}
	if n.token == "" {
		return steps, "No token is configured, so publishing relies on the topic allowing anonymous writes."
	}
	what = "GET /v1/account"
	a, err = do(ctx, c, http.MethodGet, n.server.JoinPath("v1", "account"), n.auth(http.Header{"Accept": {"application/json"}}), nil)
	var account struct {
		Username string `json:"username"`
	}
	switch {
	case err != nil:
		return append(steps, step{what: what, detail: err.Error()}), ""
	case a.status == http.StatusUnauthorized || a.status == http.StatusForbidden:
		return append(steps, step{what: what, detail: fmt.Sprintf("the server rejected the access token (%s); check token for this channel", a.code())}), ""
	case a.status != http.StatusOK:
		return append(steps, step{what: what, detail: fmt.Sprintf("unexpected answer (%s)", a.code())}), ""
	}
	_ = json.Unmarshal(a.body, &account)
	return append(steps, step{what: what, ok: true, detail: fmt.Sprintf("the access token is valid (user %q)", account.Username)}), ""
}

// failure is an error whose text is a finished sentence for the user (it
// may start with a service's name, which Go's error conventions would
// otherwise lower-case).
type failure struct{ msg string }

func (f *failure) Error() string { return f.msg }

func failf(format string, a ...any) error { return &failure{msg: fmt.Sprintf(format, a...)} }
