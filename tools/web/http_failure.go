package web

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jarvis-workbench/jarvis/tools"
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
	if parent.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || isTimeout(err)) {
		t := secondsText(a.limits.timeout)
		switch {
		case a.sent.wrote.Load():
			return fail("The request to %s%s was sent, but no answer came within the %s timeout.%s %s", a.current, a.via(), t, a.mayHaveActed(), a.limits.advice())
		case a.sent.connected.Load():
			return fail("Connected to %s%s, but the request could not be sent within the %s timeout; it was not sent. %s", host, a.via(), t, a.limits.advice())
		}
		return fail("Could not connect to %s%s within the %s timeout; the request was not sent. %s", host, a.via(), t, a.limits.advice())
	}
	if a.sent.wrote.Load() {
		return fail("The request to %s%s was sent, but no answer came: %s.%s", a.current, a.via(), connectionTrouble(err), a.mayHaveActed())
	}
	return fail("The request to %s%s could not be sent: %s.", a.current, a.via(), connectionTrouble(err))
}

// tooManyRedirects ends a chain of more than MaxRedirects redirects.
type tooManyRedirects struct{ from, to string }

func (e *tooManyRedirects) Error() string {
	return fmt.Sprintf("Stopped after %d redirects: each request was answered with another redirect (the last one from %s to %s), so the URL redirects too often or in a loop; the last redirect was not followed.", MaxRedirects, e.from, e.to)
}

// connectionTrouble words a network error: the common ones in plain
// terms, followed by the error itself; others as they are.
func connectionTrouble(err error) string {
	inner := unwrapURLError(err)
	var unknownCA x509.UnknownAuthorityError
	var badHost x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("the connection was refused: nothing listens on that port (%v)", inner)
	case errors.Is(err, syscall.ECONNRESET):
		return fmt.Sprintf("the server reset the connection (%v)", inner)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("the server closed the connection (%v)", inner)
	case errors.As(err, &unknownCA), errors.As(err, &badHost), errors.As(err, &invalid), errors.As(err, &verify):
		return fmt.Sprintf("the server's TLS certificate could not be verified (%v)", inner)
	}
	return inner.Error()
}

// secondsText writes a timeout the way the configuration does: 0.2s, 30s.
func secondsText(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// unwrapURLError drops the "Get \"URL\": " prefix of a *url.Error (the
// message names the URL already) and the "dial tcp" noise of an *OpError.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err
	}
	return err
}
