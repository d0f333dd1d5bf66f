// Package networds words network errors for people and models: what went
// wrong in plain terms (the connection was refused, the name was not
// found, the certificate could not be verified), followed by the error
// itself. The tools that reach servers (http_request, web_search, the
// channels) say it the same way.
package networds

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"syscall"
	"time"
)

// Trouble words a network error: the common ones in plain terms, followed
// by the error itself; others as they are.
func Trouble(err error) string {
	inner := Unwrap(err)
	var dnsErr *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var badHost x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return fmt.Sprintf("the name %s was not found (DNS)", dnsErr.Name)
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

// Unwrap drops the "Get \"URL\": " prefix of a *url.Error (the message
// names the URL already) and the "dial tcp ADDR:" of a *net.OpError.
func Unwrap(err error) error {
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

// IsTimeout reports a network operation that timed out.
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Seconds writes a duration the way the configuration does: 0.2s, 30s.
func Seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}
