package channels

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jarvis-workbench/jarvis/tools"
)

// httpChannels are the channel types that post over HTTP, each aimed at a
// fake service.
func httpChannels(url string) Config {
	return Config{
		"slack":    {Type: "slack", URL: url + slackPath},
		"discord":  {Type: "discord", URL: url + discordPath},
		"telegram": {Type: "telegram", Token: telegramToken, ChatID: "42", APIURL: url},
		"webhook":  {Type: "webhook", URL: url + webhookPath, Token: webhookToken},
		"ntfy":     {Type: "ntfy", URL: url, Topic: ntfyTopicName, Token: ntfyToken},
	}
}

// sendWithin sends through a channel whose client gives up after timeout.
func sendWithin(cfg Config, channel, message string, timeout time.Duration) tools.Result {
	s := NewSend(cfg)
	s.set.client.Timeout = timeout
	return s.Execute(context.Background(), tools.Args{"channel": channel, "message": message})
}

// A service that takes the post and answers after the timeout may have
// posted it: the result says so, and not that the service was unreachable,
// so that the model does not post the message twice.
func TestSlowAnswerMayHaveBeenDelivered(t *testing.T) {
	release := make(chan struct{})
	srv := newFake(t, func(w http.ResponseWriter, _ request) {
		<-release
		w.WriteHeader(http.StatusOK)
	})
	t.Cleanup(func() { close(release) }) // before the server closes
	host := strings.TrimPrefix(srv.URL, "http://")
	cfg := httpChannels(srv.URL)
	for _, name := range []string{"slack", "discord", "telegram", "webhook", "ntfy"} {
		t.Run(name, func(t *testing.T) {
			before := len(srv.requests())
			r := sendWithin(cfg, name, "deploy finished", 200*time.Millisecond)
			want := `The message to channel "` + name + `" (` + name + `) may have been delivered: the request was sent to ` + host +
				`, but no answer came within 0.2s. Check the channel before sending it again, so that it is not posted twice.`
			if r.Success || r.Content != want || r.Metadata["delivery"] != "unknown" || r.Metadata["parts_sent"] != 0 {
				t.Errorf("\n got %q (%v)\nwant %q", r.Content, r.Metadata, want)
			}
			if got := srv.requests(); len(got) != before+1 || !strings.Contains(got[len(got)-1].Body, "deploy finished") {
				t.Errorf("the service did not receive the post: %+v", got[before:])
			}
			assertNoSecret(t, r, slackToken, discordToken, telegramToken, webhookToken, ntfyToken, ntfyTopicName)
		})
	}

	// A split message whose second part gets no answer: one part is known
	// to be posted, the second may be.
	s := NewSend(Config{"chat": {Type: "discord", URL: srv.URL + discordPath}})
	s.set.client.Timeout = 200 * time.Millisecond
	var calls atomic.Int32
	srv.setReply(func(w http.ResponseWriter, _ request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		<-release
	})
	r := s.Execute(context.Background(), tools.Args{"channel": "chat", "message": strings.Repeat("word ", 500)})
	if !strings.HasPrefix(r.Content, `Sent 1 of 2 parts to channel "chat" (discord); part 2 may have been delivered too: the request was sent to `) ||
		!strings.HasSuffix(r.Content, "Check the channel before sending the rest, so that nothing is posted twice.") || r.Metadata["parts_sent"] != 1 {
		t.Errorf("split: %q %v", r.Content, r.Metadata)
	}
}

// A service nobody listens for: nothing was sent, for every channel type.
func TestUnreachableServiceWasNotSent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := httpChannels("http://" + addr)
	for _, name := range []string{"slack", "discord", "telegram", "webhook", "ntfy"} {
		r := sendWithin(cfg, name, "x", 5*time.Second)
		want := `Sending to channel "` + name + `" (` + name + `) failed: could not connect to ` + addr + `: the connection was refused: nothing listens on that port (connect: connection refused); the message was not sent`
		if r.Success || r.Content != want || r.Metadata["delivery"] != "failed" {
			t.Errorf("%s:\n got %q\nwant %q", name, r.Content, want)
		}
	}
}

// channel_status says the same about its probes.
func TestStatusProbeWithoutAnswer(t *testing.T) {
	release := make(chan struct{})
	srv := newFake(t, func(http.ResponseWriter, request) { <-release })
	t.Cleanup(func() { close(release) })
	st := NewStatus(Config{"hook": {Type: "webhook", URL: srv.URL + webhookPath}})
	st.set.client.Timeout = 200 * time.Millisecond
	r := st.Execute(context.Background(), tools.Args{"channel": "hook"})
	assertContains(t, r, false, "- HEAD "+srv.URL+"/: FAILED, the request was sent to "+strings.TrimPrefix(srv.URL, "http://")+", but no answer came within 0.2s")
}
