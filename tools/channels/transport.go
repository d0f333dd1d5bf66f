package channels

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/jarvis-workbench/jarvis/tools/internal/networds"
)

// answer is a service's HTTP answer, with the body capped.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// maxAnswer caps what is read of a service's answer.
const maxAnswer = 64 << 10

// sendError is a request that got no answer. Sent says whether it left:
// a request that was written and then got no answer may have been acted
// on (a message posted), and saying "could not reach" would make the
// model post it again.
type sendError struct {
	msg  string
	sent bool
}

func (e *sendError) Error() string { return e.msg }

// maybeDelivered reports whether err is a request that was sent but got
// no answer, so the service may have acted on it.
func maybeDelivered(err error) bool {
	var se *sendError
	return errors.As(err, &se) && se.sent
}

// do sends one request. A network failure is described by host only (the
// URL may be a secret, and the *url.Error that carries it is unwrapped),
// and says whether the request was sent before it failed.
func do(ctx context.Context, c *http.Client, method string, u *url.URL, header http.Header, body []byte) (answer, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	var connected, wrote atomic.Bool
	trace := &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { connected.Store(true) },
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				wrote.Store(true)
			}
		},
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), method, u.String(), r)
	if err != nil {
		return answer{}, errors.New("the request could not be built")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		return answer{}, describeSendError(ctx, err, u.Host, c.Timeout, connected.Load(), wrote.Load())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	return answer{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// describeSendError says how far a request to host got before err.
func describeSendError(ctx context.Context, err error, host string, timeout time.Duration, connected, wrote bool) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	timedOut := ctx.Err() == nil && isTimeout(err)
	within := "within " + networds.Seconds(timeout)
	switch {
	case wrote && ctx.Err() != nil:
		return &sendError{sent: true, msg: fmt.Sprintf("the request was sent to %s, but the call ended before an answer came", host)}
	case wrote && timedOut:
		return &sendError{sent: true, msg: fmt.Sprintf("the request was sent to %s, but no answer came %s", host, within)}
	case wrote:
		return &sendError{sent: true, msg: fmt.Sprintf("the request was sent to %s, but the connection failed before an answer came (%v)", host, networds.Unwrap(err))}
	case ctx.Err() != nil:
		return &sendError{msg: fmt.Sprintf("the request to %s was cancelled before it was sent", host)}
	case connected && timedOut:
		return &sendError{msg: fmt.Sprintf("connected to %s, but the request could not be sent %s; it was not sent", host, within)}
	case connected:
		return &sendError{msg: fmt.Sprintf("the connection to %s failed before the request was sent (%v)", host, networds.Unwrap(err))}
	case timedOut:
		return &sendError{msg: fmt.Sprintf("could not connect to %s %s", host, within)}
	}
	return &sendError{msg: fmt.Sprintf("could not connect to %s: %s", host, networds.Trouble(err))}
}

// isTimeout reports a request that ran out of time, on the network or
// by its context.
func isTimeout(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || networds.IsTimeout(err)
}
