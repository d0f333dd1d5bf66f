package channels

import (
	"reflect"
	"sort"
	"strings"

	"github.com/jarvis-workbench/jarvis/tools"
)

// needs says what each type of channel needs, for a problem's fix.
var needs = map[string]string{
	TypeSlack:    `a slack channel needs url, its incoming webhook URL (https://hooks.slack.com/services/...)`,
	TypeDiscord:  `a discord channel needs url, its webhook URL (https://discord.com/api/webhooks/...)`,
	TypeTelegram: `a telegram channel needs token (from @BotFather) and chat_id (a number, or "@channel")`,
	TypeWebhook:  `a webhook channel needs url, and takes an optional token and template`,
	TypeNtfy:     `an ntfy channel needs topic, and takes an optional url (default ` + DefaultNtfyServer + `) and token`,
}

// Check reports what keeps each channel from sending, with its key under
// [channels] ("team.url") and what the channel's type needs, so that the
// configuration can list every problem before anything runs. They are the
// problems channel_list shows and channel_send refuses a channel for, in
// the same words, none of which holds a secret.
func (c Config) Check(report func(key, problem, fix string)) {
	names := make([]string, 0, len(c))
	for name := range c {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		ch := prepare(name, c[name])
		fix := needs[ch.kind]
		if fix == "" {
			fix = "type is one of slack, discord, telegram, webhook, ntfy"
		}
		for _, p := range ch.problems {
			key := name
			if field := problemField(p); field != "" {
				key += "." + field
			}
			report(key, p, fix)
		}
	}
}

// problemField is the key a problem is about: every problem prepare and
// the services give starts with it ("token (the bot token...) is missing",
// "the template failed: ...").
func problemField(problem string) string {
	word, _, _ := strings.Cut(strings.TrimPrefix(problem, "the "), " ")
	t := reflect.TypeOf(Channel{})
	for i := 0; i < t.NumField(); i++ {
		if name := t.Field(i).Tag.Get("toml"); name == word {
			return name
		}
	}
	return ""
}

// Redacted returns the channel fit to show (jarvis config show): each
// value that is or may hold a credential is replaced by the label channel
// results use for it ("<slack webhook>", "<telegram token>", "<ntfy
// topic>"), or hidden whole where the channel cannot be prepared enough to
// have one; other URLs are shown as tools.RedactURL shows them.
func (ch Channel) Redacted(name string) Channel {
	c := prepare(name, ch)
	kind := orUnknown(c.kind)
	hide := func(v string, secret bool, label string) string {
		if strings.TrimSpace(v) == "" {
			return v
		}
		shown := c.red.redact(v)
		if shown == v && secret {
			return label
		}
		return tools.RedactURL(shown)
	}
	out := ch
	// A webhook's URL is its credential; so is any URL of a channel
	// whose type is unknown, since nothing says what it is.
	urlIsSecret := c.kind != TypeNtfy && c.kind != TypeTelegram
	out.URL = hide(ch.URL, urlIsSecret, "<"+kind+" url>")
	out.Token = hide(ch.Token, true, "<"+kind+" token>")
	out.Topic = hide(ch.Topic, true, "<"+kind+" topic>")
	out.APIURL = hide(ch.APIURL, false, "")
	out.Template = c.red.redact(ch.Template)
	return out
}
