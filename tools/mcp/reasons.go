package mcp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"strings"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK reports failures in its own terms ("connection closed: calling
// "initialize": client is closing: invalid message version tag """, "Not
// Found", "killed"). The reasons people read say instead what happened and
// what to do about it, and end with the original text as "(detail: ...)"
// for whoever needs to dig further.

// withDetail appends the original error text to a reason.
func withDetail(reason string, err error) string {
	if err == nil {
		return reason
	}
	return reason + " (detail: " + describeErr(err) + ")"
}

// badOutput is what made a stdio server's stdout unreadable: the read
// error and the line that caused it, when it could be found.
type badOutput struct {
	err  error
	line string
}

func (b *badOutput) reason() string {
	if strings.Contains(b.err.Error(), "maximum line length") {
		return withDetail(fmt.Sprintf("the server sent a message larger than %s, more than jarvis reads", byteSize(sdk.DefaultMaxLineLength)), b.err)
	}
	what := "the server printed something other than MCP messages on stdout"
	if b.line != "" {
		what += `: "` + b.line + `"`
	}
	return withDetail(what+"; check that the command is an MCP server that speaks over stdio, and that it writes its logs to stderr, not stdout", b.err)
}

// describeExit says how a server process ended, from the error of
// exec.Cmd.Wait.
func describeExit(err error) string {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "the server process exited with status 0 although nothing asked it to stop"
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return describeSignal(ws.Signal())
		}
		msg := fmt.Sprintf("the server process exited with status %d", ee.ExitCode())
		switch ee.ExitCode() {
		case 126:
			msg += " (a shell's code for a command it found but could not run)"
		case 127:
			msg += " (a shell's code for a command it could not find)"
		}
		return msg
	}
	return "the server process ended: " + err.Error()
}

// describeSignal says what a signal that ended a server process means:
// jarvis's own signals never get here (see process.exitReason).
func describeSignal(sig syscall.Signal) string {
	name := signalName(sig)
	switch name {
	case "SIGKILL":
		return "the server process was killed (SIGKILL) by something outside jarvis, often the system's out-of-memory killer"
	case "SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT":
		return fmt.Sprintf("the server process was stopped by %s from outside jarvis", name)
	case "SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE", "SIGABRT", "SIGSYS", "SIGTRAP":
		return fmt.Sprintf("the server process crashed (%s, %s)", name, sig)
	}
	return fmt.Sprintf("the server process was ended by %s (%s)", name, sig)
}

// httpReason explains a failure to talk to an HTTP server: an answer that
// was not MCP (an error status, a web page), or a connection that could
// not be made. It returns "" when it has nothing better than err's text.
func httpReason(host string, seen *httpAnswers, err error) string {
	if a := seen.problem(); a != nil {
		return withDetail(a.reason(host), err)
	}
	if err == nil {
		return ""
	}
	var dnsErr *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var badHost x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var ne net.Error
	msg := err.Error()
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return withDetail(fmt.Sprintf("the host name %s was not found (DNS); check url for this server", dnsErr.Name), err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return withDetail(fmt.Sprintf("nothing is listening at %s (connection refused); is the server running, and is url right?", host), err)
	case errors.As(err, &unknownCA), errors.As(err, &badHost), errors.As(err, &invalid), errors.As(err, &verify):
		return withDetail(fmt.Sprintf("the TLS certificate of %s could not be verified, so nothing was sent to it", host), err)
	case errors.As(err, &ne) && ne.Timeout():
		return withDetail(fmt.Sprintf("%s did not answer in time", host), err)
	case strings.Contains(msg, "unsupported content type"),
		strings.Contains(msg, "invalid message version tag"),
		strings.Contains(msg, "failed to decode response"),
		strings.Contains(msg, "looking for beginning of value"):
		return withDetail(fmt.Sprintf("%s answered with something that is not an MCP message; check that url is the server's MCP endpoint", host), err)
	}
	return ""
}

// wireReason describes a JSON-RPC error the server answered with.
func wireReason(wire *jsonrpc.Error) string {
	return fmt.Sprintf("%s (code %d%s)", wire.Message, wire.Code, wireCodeName(wire.Code))
}

// wireCodeName names the standard JSON-RPC error codes.
func wireCodeName(code int64) string {
	switch code {
	case jsonrpc.CodeParseError:
		return ", the server could not parse the request"
	case jsonrpc.CodeInvalidRequest:
		return ", invalid request"
	case jsonrpc.CodeMethodNotFound:
		return ", the server does not offer this method"
	case jsonrpc.CodeInvalidParams:
		return ", invalid arguments"
	case jsonrpc.CodeInternalError:
		return ", an internal error of the server"
	}
	return ""
}

// hostOf is the host of an HTTP server's URL, for reasons ("the server"
// when the URL cannot be read).
func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return "the server"
}
