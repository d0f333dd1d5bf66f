package channels

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"
)

const (
	slackToken    = "xoxwebhooksecret0123456789"
	slackPath     = "/services/T0AAAAAAA/B0BBBBBBB/" + slackToken
	discordToken  = "dscrd-Tok3n-abcdefghijklmnopqrstuvwxyz"
	discordPath   = "/api/webhooks/123456789012345678/" + discordToken
	telegramToken = "123456789:AAF-telegram-secret-token_xyz"
	ntfyToken     = "tk_ntfysecrettoken1234567"
	ntfyTopicName = "jarvis-private-topic-9f2c"
	webhookToken  = "whk-bearer-secret-998877"
	webhookPath   = "/hooks/incoming/abcdef0123456789secret"
)

func TestSlack(t *testing.T) {
	srv := newFake(t, status(200, "ok"))
	cfg := Config{"team": {Type: "slack", URL: srv.URL + slackPath}}
	secrets := []string{srv.URL + slackPath, slackPath, slackToken}

	r := send(t, cfg, "team", "deploy finished")
	assertContains(t, r, true, `Message sent to channel "team" (slack).`)
	got := srv.requests()
	if len(got) != 1 || got[0].Method != "POST" || got[0].Path != slackPath || got[0].Body != `{"text":"deploy finished"}` {
		t.Fatalf("Slack received %+v", got)
	}
	assertNoSecret(t, r, secrets...)

	for _, c := range []struct {
		reply func(http.ResponseWriter, request)
		want  string
	}{
		{status(403, "invalid_token"), "Slack rejected the webhook (HTTP 403: invalid_token): the webhook URL is wrong, was revoked"},
		{status(401, ""), "Slack rejected the webhook (HTTP 401)"},
		{status(404, "no_service"), "(HTTP 404: no_service)"},
		{status(400, "invalid_payload"), "Slack refused the message (HTTP 400: invalid_payload)"},
		{status(429, "rate_limited", "Retry-After", "30"), "Slack rate-limited the request (HTTP 429: rate_limited). Retry after 30 seconds."},
		{status(500, "<html>oops</html>"), "Slack failed on its side (HTTP 500). Try again later."},
		{status(302, "", "Location", "https://elsewhere.example/"), "answered with a redirect (HTTP 302), which is not followed"},
		// A service that echoes the request path must not reveal it.
		{status(400, "bad payload for "+slackPath), "bad payload for <slack webhook>"},
	} {
		srv.setReply(c.reply)
		r := send(t, cfg, "team", "x")
		assertContains(t, r, false, `Sending to channel "team" (slack) failed: `, c.want)
		assertNoSecret(t, r, secrets...)
	}

	// A network failure names the host, not the webhook URL.
	down := Config{"team": {Type: "slack", URL: "http://127.0.0.1:1" + slackPath}}
	r = send(t, down, "team", "x")
	assertContains(t, r, false, "could not connect to 127.0.0.1:1: the connection was refused: nothing listens on that port (connect: connection refused); the message was not sent")
	assertNoSecret(t, r, slackPath, slackToken)

	// Status reaches the host's root only.
	srv.setReply(status(404, "not found"))
	before := len(srv.requests())
	r = check(t, cfg, "team")
	assertContains(t, r, true, `Channel "team" (slack) works.`, "- HEAD http://127.0.0.1:", "ok, the host answered (HTTP 404)",
		"the webhook itself was not tested", "Nothing was sent to the channel.")
	if last := srv.requests()[before]; last.Method != "HEAD" || last.Path != "/" {
		t.Fatalf("status sent %+v; want HEAD /", last)
	}
	assertNoSecret(t, r, secrets...)
}

func TestDiscord(t *testing.T) {
	srv := newFake(t, func(w http.ResponseWriter, r request) {
		if r.Method == "GET" {
			fmt.Fprintf(w, `{"id":"123456789012345678","type":1,"name":"Jarvis","channel_id":"42","guild_id":"7","token":%q}`, discordToken)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"1","content":"x"}`)
	})
	cfg := Config{"dev": {Type: "discord", URL: srv.URL + discordPath}}
	secrets := []string{discordPath, discordToken}

	r := send(t, cfg, "dev", "@everyone build is green")
	assertContains(t, r, true, `Message sent to channel "dev" (discord).`)
	got := srv.requests()[0]
	var body struct {
		Content         string `json:"content"`
		AllowedMentions struct {
			Parse []string `json:"parse"`
		} `json:"allowed_mentions"`
	}
	if err := json.Unmarshal([]byte(got.Body), &body); err != nil || body.Content != "@everyone build is green" || body.AllowedMentions.Parse == nil || len(body.AllowedMentions.Parse) != 0 {
		t.Fatalf("Discord received %+v (%v)", got, err)
	}
	if got.Query != "wait=true" || got.Path != discordPath {
		t.Fatalf("Discord request %+v", got)
	}

	r = check(t, cfg, "dev")
	assertContains(t, r, true, `Channel "dev" (discord) works.`, `the webhook exists (name "Jarvis", Discord channel 42)`)
	assertNoSecret(t, r, secrets...)

	for _, c := range []struct {
		reply func(http.ResponseWriter, request)
		want  string
	}{
		{status(404, `{"message": "Unknown Webhook", "code": 10015}`), "Discord rejected the webhook (HTTP 404: Unknown Webhook): it was deleted or the URL is wrong"},
		{status(401, `{"message": "401: Unauthorized", "code": 0}`), "Discord rejected the webhook (HTTP 401: 401: Unauthorized)"},
		{status(429, `{"message": "You are being rate limited.", "retry_after": 1.5, "global": false}`), "Discord rate-limited the request (HTTP 429: You are being rate limited.). Retry after 1.5 seconds."},
		{status(500, ""), "Discord failed on its side (HTTP 500)"},
		{status(400, `{"message": "Invalid Form Body", "code": 50035}`), "Discord refused the message (HTTP 400: Invalid Form Body)"},
	} {
		srv.setReply(c.reply)
		r := send(t, cfg, "dev", "x")
		assertContains(t, r, false, c.want)
		assertNoSecret(t, r, secrets...)
		st := check(t, cfg, "dev")
		if st.Success {
			t.Errorf("status succeeded on %q", c.want)
		}
		assertNoSecret(t, st, secrets...)
	}
}

func TestDiscordSplitsLongMessages(t *testing.T) {
	srv := newFake(t, status(204, ""))
	cfg := Config{"dev": {Type: "discord", URL: srv.URL + discordPath}}
	var paragraphs []string
	for i := range 9 {
		paragraphs = append(paragraphs, fmt.Sprintf("Paragraph %d. %s", i, strings.Repeat("word ", 100)))
	}
	text := strings.Join(paragraphs, "\n\n") // about 4600 characters
	r := send(t, cfg, "dev", text)
	assertContains(t, r, true, `in 3 parts`, "Discord accepts 2000 per message")
	var joined []string
	for i, req := range srv.requests() {
		var body struct{ Content string }
		_ = json.Unmarshal([]byte(req.Body), &body)
		if n := utf8.RuneCountInString(body.Content); n > 2000 {
			t.Errorf("part %d has %d characters", i+1, n)
		}
		prefix := fmt.Sprintf("(%d/3) ", i+1)
		if !strings.HasPrefix(body.Content, prefix) {
			t.Errorf("part %d starts %q", i+1, body.Content[:10])
		}
		if i < 2 && !strings.HasSuffix(body.Content, "word") {
			t.Errorf("part %d was not cut at a paragraph or word boundary: ...%q", i+1, body.Content[len(body.Content)-12:])
		}
		joined = append(joined, strings.TrimPrefix(body.Content, prefix))
	}
	if strings.Join(strings.Fields(strings.Join(joined, " ")), " ") != strings.Join(strings.Fields(text), " ") {
		t.Fatal("the parts do not add up to the message")
	}

	// A failure in the middle says how much went out.
	var calls atomic.Int32
	srv2 := newFake(t, func(w http.ResponseWriter, r request) {
		if calls.Add(1) == 2 {
			w.WriteHeader(500)
			return
		}
		w.WriteHeader(204)
	})
	r = send(t, Config{"dev": {Type: "discord", URL: srv2.URL + discordPath}}, "dev", text)
	assertContains(t, r, false, `Sent 1 of 3 parts to channel "dev" (discord), then part 2 failed: Discord failed on its side`)
	if len(srv2.requests()) != 2 {
		t.Fatalf("sending went on after a failure: %d requests", len(srv2.requests()))
	}
}

func telegramFake(t *testing.T) *fake {
	return newFake(t, func(w http.ResponseWriter, r request) {
		w.Header().Set("Content-Type", "application/json")
		method, ok := strings.CutPrefix(r.Path, "/bot"+telegramToken+"/")
		if !ok {
			w.WriteHeader(401)
			io.WriteString(w, `{"ok":false,"error_code":401,"description":"Unauthorized"}`)
			return
		}
		var params map[string]any
		_ = json.Unmarshal([]byte(r.Body), &params)
		switch method {
		case "getMe":
			io.WriteString(w, `{"ok":true,"result":{"id":987,"is_bot":true,"first_name":"Jarvis","username":"jarvis_test_bot"}}`)
		case "getChat", "sendMessage":
			if params["chat_id"] != "-1001234567890" {
				w.WriteHeader(400)
				io.WriteString(w, `{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}`)
				return
			}
			if method == "getChat" {
				io.WriteString(w, `{"ok":true,"result":{"id":-1001234567890,"title":"Ops","type":"supergroup"}}`)
				return
			}
			fmt.Fprintf(w, `{"ok":true,"result":{"message_id":5,"text":%q}}`, params["text"])
		default:
			w.WriteHeader(404)
			io.WriteString(w, `{"ok":false,"error_code":404,"description":"Not Found"}`)
		}
	})
}

func TestTelegram(t *testing.T) {
	srv := telegramFake(t)
	cfg := Config{"ops": {Type: "telegram", Token: telegramToken, ChatID: "-1001234567890", APIURL: srv.URL}}

	r := send(t, cfg, "ops", "disk at 91%")
	assertContains(t, r, true, `Message sent to channel "ops" (telegram).`)
	got := srv.requests()[0]
	if got.Path != "/bot"+telegramToken+"/sendMessage" || got.Body != `{"chat_id":"-1001234567890","text":"disk at 91%"}` {
		t.Fatalf("Telegram received %+v", got)
	}
	assertNoSecret(t, r, telegramToken)

	r = check(t, cfg, "ops")
	assertContains(t, r, true, `Channel "ops" (telegram) works.`,
		"- getMe: ok, the bot token is valid (bot @jarvis_test_bot, id 987)",
		`- getChat: ok, the bot can see the chat (supergroup "Ops")`)
	assertNoSecret(t, r, telegramToken)

	wrongToken := Config{"ops": {Type: "telegram", Token: "111:wrong-token-value", ChatID: "-1001234567890", APIURL: srv.URL}}
	r = send(t, wrongToken, "ops", "x")
	assertContains(t, r, false, "Telegram rejected the bot token (HTTP 401: Unauthorized); check token")
	assertNoSecret(t, r, "111:wrong-token-value")
	r = check(t, wrongToken, "ops")
	assertContains(t, r, false, `Channel "ops" (telegram) does not work.`, "- getMe: FAILED, Telegram rejected the bot token")

	wrongChat := Config{"ops": {Type: "telegram", Token: telegramToken, ChatID: "42", APIURL: srv.URL}}
	r = check(t, wrongChat, "ops")
	assertContains(t, r, false, "- getMe: ok", "- getChat: FAILED, Telegram refused getChat: the bot does not know chat 42 (HTTP 400: Bad Request: chat not found); check chat_id for this channel")
	r = send(t, wrongChat, "ops", "x")
	assertContains(t, r, false, `Sending to channel "ops" (telegram) failed: Telegram refused sendMessage: the bot does not know chat 42`, "a person must first start a chat with the bot")

	for _, c := range []struct {
		reply func(http.ResponseWriter, request)
		want  string
	}{
		{status(429, `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 7","parameters":{"retry_after":7}}`),
			"Telegram rate-limited the request (HTTP 429: Too Many Requests: retry after 7). Retry after 7 seconds."},
		{status(500, `{"ok":false,"error_code":500,"description":"Internal Server Error"}`), "Telegram failed on its side (HTTP 500: Internal Server Error)"},
		{status(404, `{"ok":false,"error_code":404,"description":"Not Found: /bot`+telegramToken+`/sendMessage"}`), "Not Found: /bot<telegram token>/sendMessage"},
	} {
		srv.setReply(c.reply)
		r := send(t, cfg, "ops", "x")
		assertContains(t, r, false, c.want)
		assertNoSecret(t, r, telegramToken)
	}
}

func TestTelegramLimit(t *testing.T) {
	srv := telegramFake(t)
	long := strings.Repeat("abcdefghij ", 500) // 5500 characters
	cfg := Config{"ops": {Type: "telegram", Token: telegramToken, ChatID: "-1001234567890", APIURL: srv.URL}}
	r := send(t, cfg, "ops", long)
	assertContains(t, r, true, "in 2 parts", "Telegram accepts 4096 per message")

	off := false
	strict := Config{"ops": {Type: "telegram", Token: telegramToken, ChatID: "-1001234567890", APIURL: srv.URL, Split: &off}}
	before := len(srv.requests())
	r = send(t, strict, "ops", long)
	assertContains(t, r, false, "The message is 5500 characters long; Telegram accepts at most 4096 per message, and splitting is turned off")
	if len(srv.requests()) != before {
		t.Fatal("a refused message was sent")
	}

	r = send(t, cfg, "ops", strings.Repeat("x", 4096*11))
	assertContains(t, r, false, "at most 10 parts")
}

func TestWebhook(t *testing.T) {
	srv := newFake(t, status(202, ""))
	plain := Config{"hook": {Type: "webhook", URL: srv.URL + webhookPath}}
	r := send(t, plain, "hook", `say "hi"`)
	assertContains(t, r, true, `Message sent to channel "hook" (webhook).`)
	if got := srv.requests()[0]; got.Body != `{"text": "say \"hi\""}` || got.Auth != "" {
		t.Fatalf("default body %+v", got)
	}

	custom := Config{"hook": {
		Type: "webhook", URL: srv.URL + webhookPath, Token: webhookToken,
		Template: `{"content": {{json .Text}}, "source": "jarvis", "channel": {{json .Channel}}}`,
	}}
	r = send(t, custom, "hook", "line one\nline two")
	assertContains(t, r, true)
	got := srv.requests()[1]
	var body map[string]string
	if err := json.Unmarshal([]byte(got.Body), &body); err != nil || body["content"] != "line one\nline two" || body["channel"] != "hook" || body["source"] != "jarvis" {
		t.Fatalf("templated body %q (%v)", got.Body, err)
	}
	if got.Auth != "Bearer "+webhookToken {
		t.Fatalf("Authorization = %q", got.Auth)
	}

	for _, c := range []struct {
		reply func(http.ResponseWriter, request)
		want  string
	}{
		{status(401, `{"error": "bad token `+webhookToken+`"}`), "The webhook refused the credentials (HTTP 401: bad token <webhook token>)"},
		{status(429, "", "Retry-After", "12"), "The webhook rate-limited the request (HTTP 429). Retry after 12 seconds."},
		{status(503, "maintenance"), "The webhook failed on its side (HTTP 503: maintenance)"},
		{status(422, `{"message":"content too long"}`), "The webhook refused the message (HTTP 422: content too long)"},
	} {
		srv.setReply(c.reply)
		r := send(t, custom, "hook", "x")
		assertContains(t, r, false, c.want)
		assertNoSecret(t, r, webhookToken, webhookPath)
	}

	srv.setReply(status(405, ""))
	before := len(srv.requests())
	r = check(t, custom, "hook")
	assertContains(t, r, true, "the host answered (HTTP 405)", "The webhook itself was not called")
	if req := srv.requests()[before]; req.Method != "HEAD" || req.Path != "/" || req.Auth != "" {
		t.Fatalf("status probe %+v; want an unauthenticated HEAD /", req)
	}
}

func TestWebhookTemplateProblems(t *testing.T) {
	for tmpl, want := range map[string]string{
		`{"text": "{{.Text}}"}`:   "does not produce valid JSON; insert the message with {{json .Text}}",
		`{"text": {{json .Txt}}}`: "the template failed",
		`{"text": {{json .Text}`:  "template does not parse",
	} {
		l := NewList(Config{"hook": {Type: "webhook", URL: "https://example.com/h", Template: tmpl}}).Execute(t.Context(), nil)
		if !strings.Contains(l.Content, "hook (webhook): incomplete: ") || !strings.Contains(l.Content, want) {
			t.Errorf("template %s: %q", tmpl, l.Content)
		}
	}
}

func TestNtfy(t *testing.T) {
	srv := newFake(t, func(w http.ResponseWriter, r request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Path == "/v1/health":
			io.WriteString(w, `{"healthy":true}`)
		case r.Auth != "Bearer "+ntfyToken:
			w.WriteHeader(401)
			io.WriteString(w, `{"code":40101,"http":401,"error":"unauthorized"}`)
		case r.Path == "/v1/account":
			io.WriteString(w, `{"username":"phil","role":"user"}`)
		case r.Path == "/"+ntfyTopicName && r.Method == "POST":
			fmt.Fprintf(w, `{"id":"abc","event":"message","topic":%q,"message":%q}`, ntfyTopicName, r.Body)
		default:
			w.WriteHeader(404)
		}
	})
	secrets := []string{ntfyToken, ntfyTopicName}
	cfg := Config{"phone": {Type: "ntfy", URL: srv.URL, Topic: ntfyTopicName, Token: ntfyToken}}

	r := send(t, cfg, "phone", "backup done")
	assertContains(t, r, true, `Message sent to channel "phone" (ntfy).`)
	if got := srv.requests()[0]; got.Body != "backup done" || got.Auth != "Bearer "+ntfyToken {
		t.Fatalf("ntfy received %+v", got)
	}
	assertNoSecret(t, r, secrets...)

	// The topic may be given as part of the URL.
	inURL := Config{"phone": {Type: "ntfy", URL: srv.URL + "/" + ntfyTopicName, Token: ntfyToken}}
	assertContains(t, send(t, inURL, "phone", "x"), true)

	r = check(t, cfg, "phone")
	assertContains(t, r, true, "- GET /v1/health: ok, the server is healthy", `- GET /v1/account: ok, the access token is valid (user "phil")`)
	assertNoSecret(t, r, secrets...)

	bad := Config{"phone": {Type: "ntfy", URL: srv.URL, Topic: ntfyTopicName, Token: "tk_wrongwrongwrong"}}
	r = send(t, bad, "phone", "x")
	assertContains(t, r, false, "ntfy refused access to the topic (HTTP 401: unauthorized)")
	r = check(t, bad, "phone")
	assertContains(t, r, false, "- GET /v1/health: ok", "- GET /v1/account: FAILED, the server rejected the access token (HTTP 401: unauthorized)")
	assertNoSecret(t, r, "tk_wrongwrongwrong", ntfyTopicName)

	anon := Config{"phone": {Type: "ntfy", URL: srv.URL, Topic: ntfyTopicName}}
	assertContains(t, check(t, anon, "phone"), true, "No token is configured")

	for _, c := range []struct {
		reply func(http.ResponseWriter, request)
		want  string
	}{
		{status(429, `{"code":42901,"http":429,"error":"limit reached: too many requests"}`, "Retry-After", "60"), "ntfy rate-limited the request (HTTP 429: limit reached: too many requests). Retry after 60 seconds."},
		{status(500, `{"code":50001,"http":500,"error":"internal server error"}`), "ntfy failed on its side (HTTP 500: internal server error)"},
		{status(413, `{"code":41301,"http":413,"error":"too large"}`), "ntfy refused the message as too large"},
	} {
		srv.setReply(c.reply)
		r := send(t, cfg, "phone", "x")
		assertContains(t, r, false, c.want)
		assertNoSecret(t, r, secrets...)
	}

	srv.setReply(status(200, "<html>not ntfy</html>"))
	assertContains(t, check(t, cfg, "phone"), false, "the server did not answer as ntfy does")

	// ntfy counts bytes: 3000 two-byte characters are 6000 bytes.
	srv.setReply(status(200, "{}"))
	r = send(t, cfg, "phone", strings.Repeat("é", 3000))
	assertContains(t, r, true, "in 2 parts", "(it was 6000 bytes; ntfy accepts 4096 per message)")
}
