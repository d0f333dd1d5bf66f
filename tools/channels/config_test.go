package channels

import (
	"fmt"
	"strings"
	"testing"
)

// Check reports what each channel lacks, under the key it is about, with
// what its type needs; a complete channel has no problem.
func TestCheckNamesTheKeyAndWhatTheTypeNeeds(t *testing.T) {
	cfg := Config{
		"ok":    {Type: "ntfy", Topic: "alerts"},
		"team":  {Type: "slack"},
		"phone": {Type: "telegram", Token: "123456:abcdef"},
		"push":  {Type: "ntfy", Topic: "bad topic!"},
		"push2": {Type: "ntfy", Topic: strings.Repeat("t", 65)},
		"ok64":  {Type: "ntfy", Topic: strings.Repeat("t", 64)},
		"x":     {Type: "sms"},
		"hook":  {Type: "webhook", URL: "https://example.com/h", Template: "{{.Nope"},
		"long":  {Type: "ntfy", Topic: "t", MaxLength: -1},
	}
	type problem struct{ key, text, fix string }
	var got []problem
	cfg.Check(func(key, text, fix string) { got = append(got, problem{key, text, fix}) })
	want := []problem{
		{"hook.template", "template does not parse", "a webhook channel needs url"},
		{"long.max_length", "max_length must be positive", "an ntfy channel needs topic"},
		{"phone.chat_id", "chat_id is missing", "a telegram channel needs token"},
		{"push.topic", "topic must be 1-64 letters", "an ntfy channel needs topic"},
		{"push2.topic", "topic must be 1-64 letters", "an ntfy channel needs topic"},
		{"team.url", "url (the incoming webhook URL) is missing", "a slack channel needs url"},
		{"x.type", `type "sms" is not one of`, "type is one of slack, discord"},
	}
	if len(got) != len(want) {
		t.Fatalf("problems: %+v", got)
	}
	for i, w := range want {
		if got[i].key != w.key || !strings.Contains(got[i].text, w.text) || !strings.HasPrefix(got[i].fix, w.fix) {
			t.Errorf("problem %d = %+v, want %+v", i, got[i], w)
		}
	}
}

// Redacted hides every credential a channel holds, with the labels the
// tools use, and leaves what is not secret readable.
func TestRedactedHidesEveryCredential(t *testing.T) {
	secrets := []string{"slacksecretpath0001", "telegram-secret-0002", "topicsecret0003", "ntfytokensecret0004",
		hostSecret, "hookpathsecret0005", "hooktokensecret0006", "shortx", "unknowntypeurl0007", "apiurlsecret0008"}
	cases := map[string]struct {
		ch   Channel
		want Channel
	}{
		"slack":    {Channel{Type: "slack", URL: "https://hooks.slack.com/services/T1/B1/slacksecretpath0001"}, Channel{Type: "slack", URL: "<slack webhook>"}},
		"telegram": {Channel{Type: "telegram", Token: "123:telegram-secret-0002", ChatID: "@news", APIURL: "https://bot:apiurlsecret0008@api.example.com"}, Channel{Type: "telegram", Token: "<telegram token>", ChatID: "@news", APIURL: "https://api.example.com"}},
		"ntfy":     {Channel{Type: "ntfy", URL: "https://ntfy.example.com", Topic: "topicsecret0003", Token: "ntfytokensecret0004"}, Channel{Type: "ntfy", URL: "https://ntfy.example.com", Topic: "<ntfy topic>", Token: "<ntfy token>"}},
		"hook":     {Channel{Type: "webhook", URL: "https://" + hostSecret + ".m.pipedream.net/hookpathsecret0005", Token: "hooktokensecret0006"}, Channel{Type: "webhook", URL: "<webhook url>", Token: "<webhook token>"}},
		"short":    {Channel{Type: "ntfy", Topic: "t", Token: "shortx"}, Channel{Type: "ntfy", Topic: "<ntfy topic>", Token: "<ntfy token>"}},
		"unknown":  {Channel{Type: "sms", URL: "https://sms.example.com/unknowntypeurl0007"}, Channel{Type: "sms", URL: "<sms url>"}},
	}
	for name, c := range cases {
		got := c.ch.Redacted(name)
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", name, got, c.want)
		}
		for _, s := range secrets {
			if strings.Contains(fmt.Sprintf("%+v", got), s) {
				t.Errorf("%s: %s is shown: %+v", name, s, got)
			}
		}
	}
}
