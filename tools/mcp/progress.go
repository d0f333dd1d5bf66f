package mcp

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressBook holds the calls waiting for progress notifications, by
// the token each call sent. A notification for a token nobody holds (a
// call that has ended, a token the server made up) is dropped.
type progressBook struct {
	next  atomic.Int64
	calls sync.Map // token string -> func(line string)
}

// track gives a call a progress token; report sends that token's
// notifications to show, one line each, until stop.
func (b *progressBook) track(show func(line string)) (token string, stop func()) {
	token = "jarvis-" + strconv.FormatInt(b.next.Add(1), 10)
	b.calls.Store(token, show)
	return token, func() { b.calls.Delete(token) }
}

func (b *progressBook) report(p *sdk.ProgressNotificationParams) {
	if p == nil {
		return
	}
	token, _ := p.ProgressToken.(string)
	if show, ok := b.calls.Load(token); ok {
		show.(func(string))(progressLine(p))
	}
}

// progressLine is a notification as a line of a call's output: how far
// ("2 of 5", "40%" when the total is 100, or the count alone) and the
// server's message. The text is the server's: front ends strip it of
// escape sequences, as they do all of a tool's output.
func progressLine(p *sdk.ProgressNotificationParams) string {
	var done string
	switch {
	case p.Total == 100:
		done = fmt.Sprintf("%g%%", p.Progress)
	case p.Total > 0:
		done = fmt.Sprintf("%g of %g", p.Progress, p.Total)
	default:
		done = fmt.Sprintf("%g", p.Progress)
	}
	if msg := strings.TrimSpace(p.Message); msg != "" {
		return "progress " + done + ": " + strings.ReplaceAll(msg, "\n", " ") + "\n"
	}
	return "progress " + done + "\n"
}
