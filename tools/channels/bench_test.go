package channels

import (
	"strings"
	"testing"
)

func BenchmarkSplitMessage(b *testing.B) {
	text := strings.Repeat("A sentence of a long report that goes on. ", 400) // ~17 KB
	l := limit{service: "Telegram", max: 4096}
	b.ReportAllocs()
	for b.Loop() {
		if parts := splitMessage(text, l); len(parts) < 2 {
			b.Fatal("not split")
		}
	}
}

// Every error message passes through the redactor.
func BenchmarkRedact(b *testing.B) {
	c := prepare("team", Channel{Type: "slack", URL: "https://hooks.slack.com" + slackPath})
	msg := "Slack refused the message (HTTP 400: invalid_payload for " + slackPath + ")"
	b.ReportAllocs()
	for b.Loop() {
		_ = c.red.redact(msg)
	}
}
