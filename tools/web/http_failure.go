package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/jarvis-workbench/jarvis/tools"
	"github.com/jarvis-workbench/jarvis/tools/internal/networds"
)

// What http_request says when a request fails. Each message says how far
// the request got (refused before sending, not connected, sent without an
// answer), because a model deciding whether to try again needs to know
// whether the server may already have acted, and what may help.

// sendState follows the request being made (the first, or the latest
// redirect): whether a connection was made and the request written, which
// decides whether a failure may have reached the server.
type sendState struct {
	connected, wrote atomic.Bool
}

func (s *sendState) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GetConn: func(string) {
			s.connected.Store(false)
			s.wrote.Store(false)
		},
		GotConn: func(httptrace.GotConnInfo) { s.connected.Store(true) },
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				s.wrote.Store(true)
			}
		},
	}
}

// limits are a call's timeout and what it was derived from.
type limits struct {
	timeout time.Duration
	asked   float64 // the timeout the call asked for, 0 when none
	max     float64 // max_timeout
}

// advice says what may help a request that ran out of time: a larger
// timeout while there is room for one, else that the cap was reached.
func (l limits) advice() string {
	maxD := seconds(l.max)
	switch {
	case l.timeout < maxD:
		return fmt.Sprintf("Try again later, or pass a larger 'timeout' (up to %g).", l.max)
	case l.asked > l.max:
		return fmt.Sprintf("The call asked for %gs, but %gs is the most allowed (max_timeout under [web.http] in the config), so a longer wait is not possible; try again later, or the server may be too slow for http_request.", l.asked, l.max)
	}
	return fmt.Sprintf("%gs is already the most allowed (max_timeout under [web.http] in the config), so a longer wait is not possible; try again later, or the server may be too slow for http_request.", l.max)
}

// attempt is what a failure report needs to know about the request: the
// URL asked for, the one being fetched when it failed and the one whose
// redirect led there, and how far sending got.
type attempt struct {
	requested, current, previous string
	redirectStatus               int
	method                       string
	sent                         *sendState
	limits                       limits
}

// via says how the current URL was reached, when by a redirect.
func (a attempt) via() string {
	if a.previous == "" {
		return ""
	}
	if a.redirectStatus != 0 {
		return fmt.Sprintf(" (reached by a redirect, HTTP %d, from %s)", a.redirectStatus, a.previous)
	}
	return fmt.Sprintf(" (reached by a redirect from %s)", a.previous)
}

// mayHaveActed warns, for a request that changes things, that the server
// may have acted on it although no answer came.
func (a attempt) mayHaveActed() string {
	switch a.method {
	case http.MethodGet, http.MethodHead:
		return ""
	}
	return fmt.Sprintf(" The server may still have acted on the %s; check before sending it again.", a.method)
}

// failure turns a client error into a failed result that says what
// happened in words a model (and a person) can act on: what was refused,
// or how far the request got (not sent, sent without an answer) and why.
func (h *HTTPRequest) failure(parent context.Context, err error, a attempt) tools.Result {
	var blocked *BlockedError
	if errors.As(err, &blocked) {
		if blocked.URL == "" && blocked.From == "" {
			blocked.URL, blocked.From, blocked.Status = a.current, a.previous, a.redirectStatus
		}
		return tools.Fail("%v", blocked).WithMeta("blocked", true).WithMeta("url", a.requested)
	}
	var loop *tooManyRedirects
	if errors.As(err, &loop) {
		return tools.Fail("%v", loop).WithMeta("url", a.requested)
	}
	fail := func(format string, args ...any) tools.Result {
		return tools.Fail(format, args...).WithMeta("url", a.requested).WithMeta("sent", a.sent.wrote.Load())
	}
	host := a.current
	if u, perr := url.Parse(a.current); perr == nil && u.Host != "" {
		host = u.Host
	}
	if parent.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || networds.IsTimeout(err)) {
		t := networds.Seconds(a.limits.timeout)
		switch {
		case a.sent.wrote.Load():
			return fail("The request to %s%s was sent, but no answer came within the %s timeout.%s %s", a.current, a.via(), t, a.mayHaveActed(), a.limits.advice())
		case a.sent.connected.Load():
			return fail("Connected to %s%s, but the request could not be sent within the %s timeout; it was not sent. %s", host, a.via(), t, a.limits.advice())
		}
		return fail("Could not connect to %s%s within the %s timeout; the request was not sent. %s", host, a.via(), t, a.limits.advice())
	}
	if a.sent.wrote.Load() {
		return fail("The request to %s%s was sent, but no answer came: %s.%s", a.current, a.via(), networds.Trouble(err), a.mayHaveActed())
	}
	return fail("The request to %s%s could not be sent: %s.", a.current, a.via(), networds.Trouble(err))
}

// tooManyRedirects ends a chain of more than MaxRedirects redirects.
type tooManyRedirects struct{ from, to string }

func (e *tooManyRedirects) Error() string {
	return fmt.Sprintf("Stopped after %d redirects: each request was answered with another redirect (the last one from %s to %s), so the URL redirects too often or in a loop; the last redirect was not followed.", MaxRedirects, e.from, e.to)
}
