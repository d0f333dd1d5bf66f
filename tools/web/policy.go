package web

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Policy decides which destinations http_request may connect to. It is
// consulted three times for every request: on the URL before anything is
// sent, on every redirect target, and on every address the dialer is about
// to connect to (after DNS resolution, in the socket's Control hook), so a
// name that resolves to a private address, or starts to after a first
// harmless answer, is refused too.
//
// Only globally routable unicast addresses pass. Embedded IPv4 addresses
// (IPv4-mapped, NAT64, 6to4, Teredo) are unpacked and judged as IPv4.
type Policy struct {
	hosts    map[string]bool
	prefixes []netip.Prefix
	// setAside is the allow-list a policy from withoutAllowList does not
	// apply, kept to say so when it refuses a destination listed there.
	setAside *Policy
}

// NewPolicy builds a policy that also allows the given host names,
// addresses and networks (the allow_hosts setting).
func NewPolicy(allow []string) (*Policy, error) {
	p := &Policy{hosts: map[string]bool{}}
	for _, raw := range allow {
		entry := strings.TrimSpace(raw)
		if entry == "" {
			continue
		}
		if strings.Contains(entry, "/") {
			pfx, err := netip.ParsePrefix(entry)
			if err != nil {
				return nil, fmt.Errorf("[web.http] allow_hosts entry %q is not a valid network (want e.g. 192.168.1.0/24): %v", raw, err)
			}
			p.prefixes = append(p.prefixes, pfx.Masked())
			continue
		}
		if ip, err := netip.ParseAddr(strings.Trim(entry, "[]")); err == nil {
			p.prefixes = append(p.prefixes, netip.PrefixFrom(ip.WithZone(""), ip.BitLen()))
			continue
		}
		name := normalizeHost(entry)
		if _, numeric := parseLegacyIPv4(name); numeric {
			return nil, fmt.Errorf("[web.http] allow_hosts entry %q is a non-standard IPv4 form; write the address as four decimal numbers", raw)
		}
		if strings.ContainsAny(name, " :/@?#") {
			return nil, fmt.Errorf("[web.http] allow_hosts entry %q must be a host name, an address or a network, not a URL", raw)
		}
		p.hosts[name] = true
	}
	return p, nil
}

// withoutAllowList returns a policy that refuses every non-public
// destination, listed in allow_hosts or not. http_request applies it to
// redirects that do not come from an allow-listed destination: allow_hosts
// is the user's consent to reach those hosts when asked to, not consent for
// any public site to send an approved request (and its body) there.
func (p *Policy) withoutAllowList() *Policy {
	return &Policy{hosts: map[string]bool{}, setAside: p}
}

// HostAllowed reports whether host is an allow-listed name.
func (p *Policy) HostAllowed(host string) bool { return p.hosts[normalizeHost(host)] }

// AddrAllowed reports whether ip lies in an allow-listed network.
func (p *Policy) AddrAllowed(ip netip.Addr) bool {
	ip = ip.WithZone("")
	for _, pfx := range p.prefixes {
		if pfx.Contains(ip) || (ip.Is4In6() && pfx.Contains(ip.Unmap())) {
			return true
		}
	}
	return false
}

// CheckAddr returns nil when ip may be dialled for host (the name in the
// URL, for messages), or a *BlockedError saying why not.
func (p *Policy) CheckAddr(host string, ip netip.Addr) error {
	if p.HostAllowed(host) || p.AddrAllowed(ip) {
		return nil
	}
	if reason := classify(ip); reason != "" {
		listed := p.setAside != nil && (p.setAside.HostAllowed(host) || p.setAside.AddrAllowed(ip))
		return &BlockedError{Host: host, Addr: ip.WithZone("").String(), Reason: reason, AllowListed: listed}
	}
	return nil
}

// CheckURL checks what can be checked of u before any connection: the
// scheme, the presence of a host, and a host written as an address.
// Names are checked later, on each address they resolve to.
func (p *Policy) CheckURL(u *url.URL) error {
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return &BlockedError{URL: u.String(), Reason: "it has no scheme", Unsupported: true}
	default:
		return &BlockedError{URL: u.String(), Reason: fmt.Sprintf("its scheme %q is not http or https", u.Scheme), Unsupported: true}
	}
	host := normalizeHost(u.Hostname())
	if host == "" {
		return &BlockedError{URL: u.String(), Reason: "it has no host", Unsupported: true}
	}
	if p.HostAllowed(host) {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if err := p.CheckAddr(host, ip); err != nil {
			be := err.(*BlockedError)
			be.URL = u.Redacted()
			return be
		}
		return nil
	}
	if v4, numeric := parseLegacyIPv4(host); numeric {
		return &BlockedError{URL: u.Redacted(), Host: host, Addr: v4.String(), Numeric: true}
	}
	return nil
}

// BlockedError is a destination http_request refuses. Its message says what
// was refused, why, and how to allow it when that makes sense.
type BlockedError struct {
	// URL is the refused URL (credentials removed), when known.
	URL string
	// From is the URL whose redirect led to URL, for redirect refusals.
	From string
	// Host is the host name as written; Addr the address it points to.
	Host, Addr string
	// Reason is the kind of address ("a loopback address").
	Reason string
	// Numeric marks a host written in a non-standard numeric form.
	Numeric bool
	// Unsupported marks a URL that is not http(s) or has no host: no
	// allow-list entry can change that.
	Unsupported bool
	// AllowListed marks a destination allow_hosts lists that a redirect
	// from a destination it does not list pointed to.
	AllowListed bool
	// Status is the status of the answer that redirected (302), for
	// redirect refusals; 0 when unknown.
	Status int
}

func (e *BlockedError) Error() string {
	subject := e.URL
	if e.From != "" {
		subject = fmt.Sprintf("the redirect from %s to %s", e.From, orUnknown(e.URL))
	}
	var b strings.Builder
	b.WriteString("Refused: ")
	switch {
	case e.Unsupported:
		fmt.Fprintf(&b, "%s cannot be fetched: %s. http_request only fetches http:// and https:// URLs", orUnknown(subject), e.Reason)
		b.WriteString(e.outcome())
		return b.String()
	case e.Numeric:
		fmt.Fprintf(&b, "%s names its host as %q, a non-standard numeric form that some resolvers read as the address %s. Write IPv4 addresses as four decimal numbers (like 93.184.215.14)", orUnknown(subject), e.Host, e.Addr)
		b.WriteString(e.outcome())
		return b.String()
	case e.Host != "" && e.Host != e.Addr:
		if subject != "" {
			b.WriteString(subject + ": ")
		}
		if _, err := netip.ParseAddr(e.Host); err == nil {
			// An address written in another form ([::ffff:7f00:1],
			// fe80::1%eth0): nothing was resolved.
			fmt.Fprintf(&b, "the address %s (%s) is %s", e.Host, e.Addr, e.Reason)
		} else {
			fmt.Fprintf(&b, "the host %s resolves to %s, %s", e.Host, e.Addr, e.Reason)
		}
	default:
		fmt.Fprintf(&b, "%s points to %s, %s", orUnknown(subject), e.Addr, e.Reason)
	}
	if e.AllowListed {
		b.WriteString(". allow_hosts lists it, but http_request follows a redirect to an allow-listed destination only from another allow-listed one, so that a public site cannot send an approved request, and its body, into this machine or its network")
		b.WriteString(e.outcome())
		b.WriteString(" Request that URL directly if it is meant to be fetched.")
		return b.String()
	}
	b.WriteString(". http_request does not connect to loopback, private, link-local or other non-public addresses, so that a model cannot reach services on this machine or its network")
	b.WriteString(e.outcome())
	b.WriteString(" If this destination is meant to be reachable, add its host name or address to allow_hosts under [web.http] in the config file.")
	return b.String()
}

// outcome says what was sent: nothing at all, or, for a refused redirect,
// the first request (which the redirect answered) and not the next one.
func (e *BlockedError) outcome() string {
	if e.From == "" {
		return "; the request was not sent."
	}
	answer := "a redirect"
	if e.Status != 0 {
		answer = fmt.Sprintf("a redirect (HTTP %d %s)", e.Status, http.StatusText(e.Status))
	}
	return fmt.Sprintf("; the request to %s was sent and answered with %s, which was not followed: nothing was sent to %s.", e.From, answer, orUnknown(e.URL))
}

func orUnknown(s string) string {
	if s == "" {
		return "the destination"
	}
	return s
}

// normalizeHost lower-cases a host and drops the trailing dot of a fully
// qualified name and IPv6 brackets, so "LOCALHOST." and "localhost" match.
func normalizeHost(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	h = strings.TrimPrefix(h, "[")
	h = strings.TrimSuffix(h, "]")
	return strings.TrimSuffix(h, ".")
}

// rangeReason is one refused range and what to call an address in it.
type rangeReason struct {
	prefix netip.Prefix
	reason string
}

func ranges(pairs ...string) []rangeReason {
	out := make([]rangeReason, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, rangeReason{netip.MustParsePrefix(pairs[i]), pairs[i+1]})
	}
	return out
}

// The order matters: the first matching range names the reason.
var (
	refused4 = ranges(
		"255.255.255.255/32", "the broadcast address",
		"0.0.0.0/8", "an unspecified (\"this network\") address",
		"10.0.0.0/8", "a private address (RFC 1918)",
		"100.64.0.0/10", "a carrier-grade NAT address (100.64.0.0/10)",
		"127.0.0.0/8", "a loopback address",
		"169.254.0.0/16", "a link-local address (cloud metadata services live here)",
		"172.16.0.0/12", "a private address (RFC 1918)",
		"192.0.0.0/24", "an IETF protocol-assignment address (192.0.0.0/24)",
		"192.0.2.0/24", "a documentation address (192.0.2.0/24)",
		"192.88.99.0/24", "a 6to4 relay anycast address",
		"192.168.0.0/16", "a private address (RFC 1918)",
		"198.18.0.0/15", "a benchmarking address (198.18.0.0/15)",
		"198.51.100.0/24", "a documentation address (198.51.100.0/24)",
		"203.0.113.0/24", "a documentation address (203.0.113.0/24)",
		"224.0.0.0/4", "a multicast address",
		"240.0.0.0/4", "a reserved address (240.0.0.0/4)",
	)
	refused6 = ranges(
		"::/128", "the unspecified address",
		"::1/128", "a loopback address",
		"64:ff9b:1::/48", "a local-use NAT64 address",
		"100::/64", "a discard-only address",
		"2001:2::/48", "a benchmarking address (2001:2::/48)",
		"2001:db8::/32", "a documentation address (2001:db8::/32)",
		"3fff::/20", "a documentation address (3fff::/20)",
		"fc00::/7", "a unique-local (private) IPv6 address",
		"fe80::/10", "a link-local address",
		"fec0::/10", "a site-local address",
		"ff00::/8", "a multicast address",
	)
	ipv4Compatible = netip.MustParsePrefix("::/96")
	nat64          = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour      = netip.MustParsePrefix("2002::/16")
	teredo         = netip.MustParsePrefix("2001::/32")
	globalUnicast6 = netip.MustParsePrefix("2000::/3")
)

// classify returns why ip must not be dialled, or "" when it is public.
func classify(ip netip.Addr) string {
	ip = ip.WithZone("")
	if !ip.IsValid() {
		return "an invalid address"
	}
	if ip.Is4In6() {
		inner := ip.Unmap()
		if r := classify(inner); r != "" {
			return fmt.Sprintf("the IPv4-mapped form of %s, %s", inner, r)
		}
		return ""
	}
	if ip.Is4() {
		for _, r := range refused4 {
			if r.prefix.Contains(ip) {
				return r.reason
			}
		}
		return ""
	}
	for _, r := range refused6 {
		if r.prefix.Contains(ip) {
			return r.reason
		}
	}
	b := ip.As16()
	switch {
	case ipv4Compatible.Contains(ip):
		inner := netip.AddrFrom4([4]byte(b[12:16]))
		return fmt.Sprintf("the deprecated IPv4-compatible form of %s", inner)
	case nat64.Contains(ip):
		inner := netip.AddrFrom4([4]byte(b[12:16]))
		if r := classify(inner); r != "" {
			return fmt.Sprintf("a NAT64 address embedding %s, %s", inner, r)
		}
		return ""
	case sixToFour.Contains(ip):
		inner := netip.AddrFrom4([4]byte(b[2:6]))
		if r := classify(inner); r != "" {
			return fmt.Sprintf("a 6to4 address embedding %s, %s", inner, r)
		}
		return ""
	case teredo.Contains(ip):
		server := netip.AddrFrom4([4]byte(b[4:8]))
		client := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		for _, inner := range []netip.Addr{client, server} {
			if r := classify(inner); r != "" {
				return fmt.Sprintf("a Teredo address embedding %s, %s", inner, r)
			}
		}
		return ""
	case !globalUnicast6.Contains(ip):
		return "a reserved IPv6 address outside the global unicast range (2000::/3)"
	}
	return ""
}

// parseLegacyIPv4 reads host the way the C library's inet_aton does, which
// many resolvers still use: one to four parts, each decimal, octal (leading
// 0) or hexadecimal (0x), the last part filling the remaining bytes. So
// "2130706433", "0x7f000001", "0177.0.0.1" and "127.1" all mean 127.0.0.1.
// numeric is true when host is such a form but not the canonical dotted
// quad, which is the only spelling http_request accepts.
func parseLegacyIPv4(host string) (ip netip.Addr, numeric bool) {
	if host == "" || strings.Trim(host, "0123456789abcdefxABCDEFX.") != "" {
		return netip.Addr{}, false
	}
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, part := range parts {
		base, digits := 10, part
		switch {
		case len(part) > 1 && (part[:2] == "0x" || part[:2] == "0X"):
			base, digits = 16, part[2:]
			if digits == "" {
				digits = "0"
			}
		case len(part) > 1 && part[0] == '0':
			base, digits = 8, part[1:]
		}
		v, err := strconv.ParseUint(digits, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 0xff {
			return netip.Addr{}, false
		}
		n |= v << (8 * (3 - i))
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return netip.Addr{}, false
	}
	n |= last
	ip = netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
	return ip, ip.String() != host
}
