package channels

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/jarvis-workbench/jarvis/events"
	"github.com/jarvis-workbench/jarvis/tools"
)

func TestChannelList(t *testing.T) {
	off := false
	cfg := Config{
		"team":  {Type: "slack", URL: "https://hooks.slack.com" + slackPath},
		"ops":   {Type: "telegram", Token: telegramToken},
		"phone": {Type: "NTFY", Topic: ntfyTopicName, Token: ntfyToken, Split: &off},
		"weird": {Type: "carrier-pigeon", URL: "https://example.com/" + webhookToken},
		"bare":  {},
		"hook":  {Type: "webhook", URL: "not a url " + webhookToken, MaxLength: 500},
	}
	r := NewList(cfg).Execute(context.Background(), nil)
	want := strings.Join([]string{
		"6 channels configured:",
		"- bare (no type): incomplete: type is missing (slack, discord, telegram, webhook or ntfy)",
		"- hook (webhook): incomplete: url is not an http:// or https:// URL",
		"- ops (telegram): incomplete: chat_id is missing",
		"- phone (ntfy): ready; messages up to 4096 bytes, longer ones are refused",
		"- team (slack): ready; messages up to 40000 characters, longer ones are split",
		`- weird (carrier-pigeon): incomplete: type "carrier-pigeon" is not one of slack, discord, telegram, webhook, ntfy`,
	}, "\n")
	if !r.Success || r.Content != want {
		t.Fatalf("content:\n%s\nwant:\n%s", r.Content, want)
	}
	assertNoSecret(t, r, slackPath, slackToken, telegramToken, ntfyTopicName, ntfyToken, webhookToken)
	meta, _ := json.Marshal(r.Metadata)
	if !strings.Contains(string(meta), `{"configured":true,"max_length":40000,"name":"team","type":"slack"}`) {
		t.Errorf("metadata = %s", meta)
	}

	empty := NewList(nil).Execute(context.Background(), nil)
	if !empty.Success || !strings.Contains(empty.Content, "No channels are configured") || !strings.Contains(empty.Content, "[channels.phone]") {
		t.Errorf("no channels: %q", empty.Content)
	}
}

func TestChannelSendRefusals(t *testing.T) {
	cfg := Config{
		"ops":  {Type: "telegram", Token: telegramToken},
		"team": {Type: "slack", URL: "http://127.0.0.1:1" + slackPath},
	}
	for _, c := range []struct {
		channel, message, want string
	}{
		{"nope", "x", `Unknown channel "nope". Configured channels: ops, team.`},
		{"ops", "x", `Channel "ops" (telegram) is not configured completely: chat_id is missing. Fix [channels.ops] in the config file.`},
		{"team", "  \n", "No message provided."},
	} {
		r := send(t, cfg, c.channel, c.message)
		if r.Success || r.Content != c.want {
			t.Errorf("%s: %q\nwant %q", c.channel, r.Content, c.want)
		}
		assertNoSecret(t, r, telegramToken, slackToken)
	}
	r := send(t, nil, "any", "x")
	assertContains(t, r, false, "No channels are configured")
	r = check(t, cfg, "ops")
	assertContains(t, r, false, "Nothing was checked")
}

func TestSplitMessage(t *testing.T) {
	l := limit{service: "test", max: 30}
	if got := splitMessage("short", l); len(got) != 1 || got[0] != "short" {
		t.Fatalf("short: %q", got)
	}
	got := splitMessage("one two three four five six seven eight nine ten eleven", l)
	for _, p := range got {
		if l.size(p) > l.max {
			t.Errorf("part %q is %d long", p, l.size(p))
		}
	}
	if strings.Join(got, "|") != "(1/3) one two three four|(2/3) five six seven eight|(3/3) nine ten eleven" {
		t.Errorf("word split: %q", got)
	}
	// Paragraphs win over lines, lines over words.
	got = splitMessage("alpha beta\ngamma\n\ndelta epsilon zeta eta", limit{max: 28})
	if len(got) != 3 || got[0] != "(1/3) alpha beta\ngamma" {
		t.Errorf("paragraph split: %q", got)
	}
	// No spaces at all: cut inside the text, on character boundaries.
	got = splitMessage(strings.Repeat("ü", 50), limit{max: 30})
	for _, p := range got {
		if !strings.HasPrefix(p, "(") || strings.ContainsRune(p, '\uFFFD') {
			t.Errorf("hard split produced %q", p)
		}
	}
	// Emoji count two units each, as Telegram counts them.
	emoji := strings.Repeat("😀", 20) // 40 units
	if l.size(emoji) != 40 || len(splitMessage(emoji, l)) != 2 {
		t.Errorf("emoji: size %d, parts %q", l.size(emoji), splitMessage(emoji, l))
	}
	if got := splitMessage(strings.Repeat("word ", 200), limit{max: 30}); got != nil {
		t.Errorf("over MaxParts: %d parts", len(got))
	}
}

// Through the registry and executor, as the CLI and TUI run them:
// channel_send needs a confirmation, the other two do not; and no secret
// reaches an event.
func TestChannelToolsThroughExecutor(t *testing.T) {
	srv := newFake(t, status(200, "ok"))
	cfg := Config{"team": {Type: "slack", URL: srv.URL + slackPath}}
	reg := tools.NewRegistry()
	for name, f := range map[string]tools.Factory{
		"channel_send": SendFactory(cfg), "channel_list": ListFactory(cfg), "channel_status": StatusFactory(cfg),
	} {
		if err := reg.Register(name, f); err != nil {
			t.Fatal(err)
		}
	}
	list, err := reg.BuildAll(tools.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	rec := &events.Recorder{}
	exec, err := tools.NewExecutor(list, tools.ExecutorOptions{Bus: rec})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	r := exec.Execute(ctx, tools.Call{ID: "1", Name: "channel_send", Arguments: `{"channel":"team","message":"hi"}`})
	if r.Status != tools.StatusDenied || r.Content != "Tool 'channel_send' requires confirmation but no confirmation callback is available." {
		t.Fatalf("unconfirmed send: %v %q", r.Status, r.Content)
	}
	if len(srv.requests()) != 0 {
		t.Fatal("an unconfirmed message reached the service")
	}
	for _, call := range []tools.Call{
		{ID: "2", Name: "channel_list"},
		{ID: "3", Name: "channel_status", Arguments: `{"channel":"team"}`},
	} {
		if r := exec.Execute(ctx, call); !r.Success {
			t.Errorf("%s without a confirmer: %q", call.Name, r.Content)
		}
	}
	bad := exec.Execute(ctx, tools.Call{ID: "4", Name: "channel_status", Arguments: `{"channel":"other"}`})
	if bad.Success || !strings.Contains(bad.Content, `must be one of "team"`) {
		t.Errorf("unknown channel through the schema: %q", bad.Content)
	}

	exec.SetConfirmer(tools.AllowAll)
	srv.setReply(status(403, "invalid_token for "+slackPath))
	r = exec.Execute(ctx, tools.Call{ID: "5", Name: "channel_send", Arguments: `{"channel":"team","message":"hi"}`})
	if r.Success {
		t.Fatal("send succeeded against a 403")
	}
	for _, e := range rec.Events() {
		dump := fmt.Sprintf("%+v %+v", e, e.Tool)
		for _, s := range []string{slackPath, slackToken} {
			if strings.Contains(dump, s) {
				t.Fatalf("event %s leaks %q: %s", e.Type, s, dump)
			}
		}
	}
	if spec, _ := exec.Spec("channel_send"); !spec.RequiresConfirmation {
		t.Error("channel_send does not require confirmation")
	}
}

func TestConfigDecodesFromTOML(t *testing.T) {
	const doc = `
[channels.team]
type = "slack"
url = "https://hooks.slack.com/services/T000/B000/XXXX"

[channels.ops]
type = "telegram"
token = "123456:ABC-DEF"
chat_id = -1001234567890

[channels.news]
type = "telegram"
token = "123456:ABC-DEF"
chat_id = "@mychannel"
api_url = "https://api.telegram.org"

[channels.phone]
type = "ntfy"
url = "https://ntfy.sh"
topic = "my-secret-topic"
token = "tk_abc"
max_length = 2000
split = false

[channels.hook]
type = "webhook"
url = "https://example.com/hooks/abc"
token = "bearer-token"
template = '{"content": {{json .Text}}}'
`
	var file struct {
		Channels Config `toml:"channels"`
	}
	md, err := toml.Decode(doc, &file)
	if err != nil {
		t.Fatal(err)
	}
	if u := md.Undecoded(); len(u) > 0 {
		t.Fatalf("keys not decoded: %v", u)
	}
	c := file.Channels
	if c["ops"].ChatID != "-1001234567890" || c["news"].ChatID != "@mychannel" || c["phone"].Split == nil || *c["phone"].Split ||
		c["phone"].MaxLength != 2000 || c["hook"].Template != `{"content": {{json .Text}}}` || c["team"].Type != "slack" {
		t.Fatalf("decoded %+v", c)
	}
	l := NewList(c).Execute(context.Background(), nil)
	if strings.Contains(l.Content, "incomplete") {
		t.Fatalf("example channels are incomplete:\n%s", l.Content)
	}
	if _, err := toml.Decode("[channels.x]\nchat_id = 1.5\n", &file); err == nil {
		t.Error("a fractional chat_id decoded")
	}
}

// A grant of channel_send covers the channel it names.
func TestSendGrantsOneChannel(t *testing.T) {
	s := NewSend(Config{"team": {Type: "slack"}})
	sc := s.GrantScope(tools.Args{"channel": " team ", "message": "hi"})
	if sc.Kind != tools.ScopeChannel || sc.Value != "team" || sc.Words != "messages to channel team" {
		t.Fatalf("scope %+v", sc)
	}
	if other := s.GrantScope(tools.Args{"channel": "ops"}); (tools.Grant{Tool: "channel_send", Scope: sc}).Covers("channel_send", other) {
		t.Fatal("a grant for team covers ops")
	}
}
