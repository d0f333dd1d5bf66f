package web

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

func TestClassifyRefusesNonPublicAddresses(t *testing.T) {
	cases := map[string]string{
		"127.0.0.1":       "loopback",
		"127.255.0.9":     "loopback",
		"10.1.2.3":        "private",
		"172.16.0.1":      "private",
		"172.31.255.255":  "private",
		"192.168.1.1":     "private",
		"169.254.169.254": "link-local",
		"100.64.0.1":      "carrier-grade NAT",
		"100.127.255.254": "carrier-grade NAT",
		"0.0.0.0":         "unspecified",
		"0.1.2.3":         "unspecified",
		"255.255.255.255": "broadcast",
		"224.0.0.1":       "multicast",
		"239.255.255.250": "multicast",
		"240.0.0.1":       "reserved",
		"192.0.0.8":       "protocol-assignment",
		"192.0.2.1":       "documentation",
		"198.51.100.7":    "documentation",
		"203.0.113.9":     "documentation",
		"198.18.0.1":      "benchmarking",
		"198.19.255.1":    "benchmarking",
		"::":              "unspecified",
		"::1":             "loopback",
		"fe80::1":         "link-local",
		"fe80::1%eth0":    "link-local",
		"fc00::1":         "unique-local",
		"fd12:3456::1":    "unique-local",
		"fec0::1":         "site-local",
		"ff02::1":         "multicast",
		"2001:db8::1":     "documentation",
		"2001:2::1":       "benchmarking",
		"100::1":          "discard-only",
		"64:ff9b:1::1":    "local-use NAT64",
		// IPv4 addresses hidden in IPv6 forms.
		"::ffff:127.0.0.1":                     "IPv4-mapped form of 127.0.0.1, a loopback",
		"::ffff:10.0.0.1":                      "IPv4-mapped form of 10.0.0.1, a private",
		"::ffff:169.254.169.254":               "IPv4-mapped form of 169.254.169.254, a link-local",
		"::127.0.0.1":                          "IPv4-compatible form of 127.0.0.1",
		"::8.8.8.8":                            "IPv4-compatible form of 8.8.8.8",
		"64:ff9b::7f00:1":                      "NAT64 address embedding 127.0.0.1, a loopback",
		"64:ff9b::a9fe:a9fe":                   "NAT64 address embedding 169.254.169.254",
		"64:ff9b::192.168.0.1":                 "NAT64 address embedding 192.168.0.1, a private",
		"2002:7f00:1::1":                       "6to4 address embedding 127.0.0.1, a loopback",
		"2002:c0a8:101::1":                     "6to4 address embedding 192.168.1.1",
		"2001:0:4136:e378:8000:63bf:80ff:fffe": "Teredo address embedding 127.0.0.1",
		"4000::1":                              "outside the global unicast range",
	}
	for addr, want := range cases {
		ip := netip.MustParseAddr(addr)
		got := classify(ip)
		if !strings.Contains(got, want) {
			t.Errorf("classify(%s) = %q, want it to mention %q", addr, got, want)
		}
	}
}

func TestClassifyAllowsPublicAddresses(t *testing.T) {
	for _, addr := range []string{
		"93.184.215.14", "8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.1", "172.32.0.1",
		"2606:4700:4700::1111", "2a00:1450:4001:80b::200e",
		"::ffff:8.8.8.8",                       // mapped public
		"64:ff9b::808:808",                     // NAT64 of a public address
		"2002:808:808::1",                      // 6to4 of a public address
		"2001:0:4136:e378:8000:63bf:f7f7:f7f7", // Teredo of 8.8.8.8
	} {
		if got := classify(netip.MustParseAddr(addr)); got != "" {
			t.Errorf("classify(%s) = %q, want public", addr, got)
		}
	}
}

func TestParseLegacyIPv4(t *testing.T) {
	numeric := map[string]string{
		"2130706433":   "127.0.0.1",
		"017700000001": "127.0.0.1",
		"0x7f000001":   "127.0.0.1",
		"0X7F000001":   "127.0.0.1",
		"0177.0.0.1":   "127.0.0.1",
		"0x7f.0.0.1":   "127.0.0.1",
		"0x7f.1":       "127.0.0.1",
		"127.1":        "127.0.0.1",
		"127.0.1":      "127.0.0.1",
		"10.0.0.010":   "10.0.0.8",
		"3232235777":   "192.168.1.1",
		"0":            "0.0.0.0",
		"0x":           "0.0.0.0",
		"1.2.3.04":     "1.2.3.4",
	}
	for host, want := range numeric {
		ip, ok := parseLegacyIPv4(host)
		if !ok || ip.String() != want {
			t.Errorf("parseLegacyIPv4(%q) = %v, %v; want %s, true", host, ip, ok, want)
		}
	}
	for _, host := range []string{"127.0.0.1", "8.8.8.8", "example.com", "dead.beef", "cafe", "1.2.3.4.5", "256.1.1.1", "4294967296", "127..1", "1.2.3.0x100", ""} {
		if ip, ok := parseLegacyIPv4(host); ok {
			t.Errorf("parseLegacyIPv4(%q) = %v, true; want not a non-standard numeric form", host, ip)
		}
	}
}

func TestNewPolicyRejectsBadEntries(t *testing.T) {
	for _, entry := range []string{"10.0.0.0/33", "http://example.com", "0x7f000001", "user@host"} {
		if _, err := NewPolicy([]string{entry}); err == nil {
			t.Errorf("NewPolicy(%q) succeeded; want an error", entry)
		} else if !strings.Contains(err.Error(), "allow_hosts") {
			t.Errorf("NewPolicy(%q) error %q does not name the setting", entry, err)
		}
	}
}

func TestPolicyAllowList(t *testing.T) {
	p, err := NewPolicy([]string{"127.0.0.1", "192.168.1.0/24", "NAS.lan.", "[fd00::1]"})
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{"127.0.0.1", "::ffff:127.0.0.1", "192.168.1.77", "fd00::1"}
	for _, a := range allowed {
		if err := p.CheckAddr("x", netip.MustParseAddr(a)); err != nil {
			t.Errorf("CheckAddr(%s) = %v; want allowed", a, err)
		}
	}
	for _, a := range []string{"127.0.0.2", "192.168.2.1", "fd00::2"} {
		if err := p.CheckAddr("x", netip.MustParseAddr(a)); err == nil {
			t.Errorf("CheckAddr(%s) allowed; want refused", a)
		}
	}
	if err := p.CheckAddr("nas.lan", netip.MustParseAddr("10.0.0.5")); err != nil {
		t.Errorf("allow-listed name refused: %v", err)
	}
	u, _ := url.Parse("http://nas.LAN:8080/x")
	if err := p.CheckURL(u); err != nil {
		t.Errorf("CheckURL(allow-listed name) = %v", err)
	}
}

func TestCheckURLRefusesSchemesAndLiterals(t *testing.T) {
	p, _ := NewPolicy(nil)
	cases := map[string]string{
		"file:///etc/passwd":                    `scheme "file" is not http or https`,
		"gopher://example.com/":                 `scheme "gopher"`,
		"http:///path":                          "has no host",
		"http://127.0.0.1/":                     "points to 127.0.0.1, a loopback address",
		"http://[::1]:8080/":                    "points to ::1, a loopback address",
		"http://[::ffff:127.0.0.1]/":            "IPv4-mapped form of 127.0.0.1",
		"http://[::ffff:7f00:1]/":               "IPv4-mapped form of 127.0.0.1",
		"http://2130706433/":                    `"2130706433", a non-standard numeric form`,
		"http://0177.0.0.1/":                    "read as the address 127.0.0.1",
		"http://0x7f000001/":                    "read as the address 127.0.0.1",
		"http://127.1/":                         "read as the address 127.0.0.1",
		"https://user:hunter2@169.254.169.254/": "link-local",
	}
	for raw, want := range cases {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("url.Parse(%q): %v", raw, err)
		}
		err = p.CheckURL(u)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckURL(%s) = %v; want it to mention %q", raw, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("CheckURL(%s) leaked the URL's password: %v", raw, err)
		}
	}
	for _, raw := range []string{"https://example.com/", "http://93.184.215.14:8080/x", "HTTPS://Example.COM"} {
		u, _ := url.Parse(raw)
		if err := p.CheckURL(u); err != nil {
			t.Errorf("CheckURL(%s) = %v; want allowed", raw, err)
		}
	}
}

// An address written in another form is an address, not a name: the
// refusal says what it is rather than what it "resolves to".
func TestRefusalOfAddressLiteralsInOtherForms(t *testing.T) {
	p, _ := NewPolicy(nil)
	cases := map[string]string{
		"http://[::ffff:7f00:1]/":   "Refused: http://[::ffff:7f00:1]/: the address ::ffff:7f00:1 (::ffff:127.0.0.1) is the IPv4-mapped form of 127.0.0.1, a loopback address.",
		"http://[0:0:0:0:0:0:0:1]/": "Refused: http://[0:0:0:0:0:0:0:1]/: the address 0:0:0:0:0:0:0:1 (::1) is a loopback address.",
		"http://[::1]/":             "Refused: http://[::1]/ points to ::1, a loopback address.",
	}
	for raw, want := range cases {
		u, _ := url.Parse(raw)
		err := p.CheckURL(u)
		if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "resolves to") {
			t.Errorf("CheckURL(%s) = %v\nwant it to start with %q", raw, err, want)
		}
	}
	// The dialer judges the address it is given for a literal host, with
	// its zone, the same way.
	err := p.CheckAddr("fe80::1%eth0", netip.MustParseAddr("fe80::1%eth0"))
	if err == nil || !strings.HasPrefix(err.Error(), "Refused: the address fe80::1%eth0 (fe80::1) is a link-local address.") {
		t.Errorf("CheckAddr(zoned literal) = %v", err)
	}
}

// The socket hook is the last check before a connection: it must refuse a
// non-public address even when everything before it was bypassed.
func TestControlHookRefusesAddressBeingDialled(t *testing.T) {
	p, _ := NewPolicy(nil)
	g := &guardedDialer{policy: p}
	hook := g.control("innocent.example", false)
	err := hook(context.Background(), "tcp4", "127.0.0.1:80", nil)
	var be *BlockedError
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "innocent.example resolves to 127.0.0.1") {
		t.Fatalf("hook(127.0.0.1) = %v; want a BlockedError naming host and address", err)
	}
	if err := hook(context.Background(), "tcp6", "[::ffff:10.0.0.1]:443", nil); err == nil {
		t.Fatal("hook(mapped private) allowed")
	}
	if err := hook(context.Background(), "tcp4", "93.184.215.14:443", nil); err != nil {
		t.Fatalf("hook(public) = %v", err)
	}
	if err := g.control("trusted.lan", true)(context.Background(), "tcp4", "10.0.0.1:80", nil); err != nil {
		t.Fatalf("hook for an allow-listed name = %v", err)
	}
}
