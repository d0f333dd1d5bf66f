package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// Resolver looks host names up. *net.Resolver satisfies it; tests inject a
// fake one to make any name resolve to any address.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// guardedDialer connects only to addresses the policy accepts. It resolves
// names itself and dials the addresses it checked, so there is no second
// lookup an attacker's DNS server could answer differently; the socket's
// Control hook then checks the address the kernel is about to connect to,
// which also covers any path that bypasses the resolution step.
type guardedDialer struct {
	policy   *Policy
	resolver Resolver
	timeout  time.Duration
	// dial, when set, makes the connection to an address that passed the
	// checks, given the dialer (with its socket hook) to use. Tests set it
	// to reach a loopback stand-in for a public address; it is nil in use.
	dial func(ctx context.Context, d *net.Dialer, network string, to netip.AddrPort) (net.Conn, error)
}

// checkedConn is a connection the dialer made, with what it knew: whether
// the destination was reachable only because allow_hosts lists it. A
// redirect from such a destination may lead to other allow-listed ones;
// a redirect from anywhere else may not (see redirectGuard).
type checkedConn struct {
	net.Conn
	allowListed bool
}

// allowListedConn reports whether c, or the connection under it (TLS), was
// dialled to an allow-listed destination.
func allowListedConn(c net.Conn) bool {
	for c != nil {
		switch v := c.(type) {
		case *checkedConn:
			return v.allowListed
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return false
		}
	}
	return false
}

// DialContext implements http.Transport's DialContext.
func (g *guardedDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, fmt.Errorf("network %q is not supported", network)
	}
	rawHost, rawPort, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(rawPort, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("invalid port %q", rawPort)
	}
	host := normalizeHost(rawHost)
	trusted := g.policy.HostAllowed(host)

	addrs, err := g.lookup(ctx, host, trusted)
	if err != nil {
		return nil, err
	}
	addrs = filterFamily(addrs, network)
	if len(addrs) == 0 {
		return nil, fmt.Errorf("host %s has no %s address", host, network)
	}
	if !trusted {
		// One refused address refuses them all: a name that mixes public
		// and private answers is the shape of a rebinding attack.
		for _, a := range addrs {
			if err := g.policy.CheckAddr(host, a); err != nil {
				return nil, err
			}
		}
	}

	d := net.Dialer{Timeout: g.timeout, KeepAlive: 30 * time.Second, ControlContext: g.control(host, trusted)}
	var firstErr error
	for _, a := range addrs {
		to := netip.AddrPortFrom(a, uint16(port))
		var conn net.Conn
		var err error
		if g.dial != nil {
			conn, err = g.dial(ctx, &d, network, to)
		} else {
			conn, err = d.DialContext(ctx, network, to.String())
		}
		if err == nil {
			return &checkedConn{Conn: conn, allowListed: trusted || g.policy.AddrAllowed(a)}, nil
		}
		var blocked *BlockedError
		if errors.As(err, &blocked) || ctx.Err() != nil {
			return nil, err
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

// control returns the socket hook that checks the address the kernel is
// about to connect to, the last point before a packet leaves.
func (g *guardedDialer) control(host string, trusted bool) func(context.Context, string, string, syscall.RawConn) error {
	return func(_ context.Context, _, hostport string, _ syscall.RawConn) error {
		if trusted {
			return nil
		}
		ap, err := netip.ParseAddrPort(hostport)
		if err != nil {
			return &BlockedError{Host: host, Addr: hostport, Reason: "an address that could not be checked"}
		}
		return g.policy.CheckAddr(host, ap.Addr())
	}
}

// lookup returns the addresses host stands for: itself when it is an
// address, else what the resolver answers. Non-standard numeric spellings
// are refused before any lookup, since resolvers disagree on them.
func (g *guardedDialer) lookup(ctx context.Context, host string, trusted bool) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	if v4, numeric := parseLegacyIPv4(host); numeric && !trusted {
		return nil, &BlockedError{Host: host, Addr: v4.String(), Numeric: true}
	}
	answers, err := g.resolver.LookupIPAddr(ctx, host)
	if err != nil {
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			return nil, fmt.Errorf("host %s was not found (DNS)", host)
		}
		return nil, fmt.Errorf("could not resolve %s: %w", host, err)
	}
	out := make([]netip.Addr, 0, len(answers))
	for _, a := range answers {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok {
			continue
		}
		// net.IP keeps IPv4 addresses in 16 bytes; judge and dial them as
		// the IPv4 addresses they are.
		out = append(out, ip.Unmap().WithZone(a.Zone))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("host %s has no address", host)
	}
	return out, nil
}

// filterFamily keeps the addresses network can reach.
func filterFamily(addrs []netip.Addr, network string) []netip.Addr {
	if network == "tcp" {
		return addrs
	}
	out := addrs[:0:0]
	for _, a := range addrs {
		if (network == "tcp4") == (a.Is4() || a.Is4In6()) {
			out = append(out, a)
		}
	}
	return out
}

// newGuardedTransport returns a transport that dials through the policy and
// never uses a proxy: a proxy from the environment would make the proxy,
// not this process, connect to the destination, and nothing here could
// check where it went.
func newGuardedTransport(g *guardedDialer) *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           g.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       60 * time.Second,
		TLSHandshakeTimeout:   15 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}
