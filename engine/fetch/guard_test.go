package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Every address form the attacker tried, and the ranges around them. hosted is
// the service's policy (public only); dev is the CLI's --allow-private.
func TestAddressForms(t *testing.T) {
	cases := []struct {
		addr        string
		hosted, dev bool // allowed?
		why         string
	}{
		// Public, in every notation.
		{"93.184.216.34", true, true, "public IPv4"},
		{"2606:2800:220:1:248:1893:25c8:1946", true, true, "public IPv6"},
		{"::ffff:93.184.216.34", true, true, "IPv4-mapped public"},
		{"64:ff9b::8.8.8.8", true, true, "NAT64 of a public address"},
		{"2002:0808:0808::1", true, true, "6to4 of 8.8.8.8"},
		{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", true, true, "Teredo, server 65.54.227.120, client 8.8.8.8"},
		{"2a00:1450:4001:81b:200:5efe:808:808", true, true, "ISATAP of 8.8.8.8"},

		// Loopback and private: refused, admitted by --allow-private.
		{"127.0.0.1", false, true, "loopback"},
		{"127.255.255.254", false, true, "loopback /8"},
		{"10.1.2.3", false, true, "RFC 1918"},
		{"172.16.0.1", false, true, "RFC 1918"},
		{"192.168.1.1", false, true, "RFC 1918"},
		{"100.64.0.1", false, true, "CGNAT"},
		{"100.127.255.255", false, true, "CGNAT upper edge"},
		{"::1", false, true, "IPv6 loopback"},
		{"fd00::1", false, true, "ULA"},
		{"fd00::5efe:808:808", false, true, "ULA with an ISATAP identifier of a public address"},

		// IPv6 spellings of loopback: the four forms that passed the guard.
		{"::127.0.0.1", false, false, "IPv4-compatible loopback (deprecated form: refused in dev mode too)"},
		{"::7f00:1", false, false, "IPv4-compatible loopback, hex"},
		{"::10.0.0.1", false, false, "IPv4-compatible private"},
		{"::8.8.8.8", true, true, "IPv4-compatible public"},
		{"::ffff:0:127.0.0.1", false, false, "IPv4-translated loopback (translator-only form)"},
		{"::ffff:0:7f00:1", false, false, "IPv4-translated loopback, hex"},
		{"::ffff:0:8.8.8.8", true, true, "IPv4-translated public"},
		{"::ffff:127.0.0.1", false, true, "IPv4-mapped loopback"},
		{"::ffff:7f00:1", false, true, "IPv4-mapped loopback, hex"},
		{"0:0:0:0:0:ffff:7f00:0001", false, true, "IPv4-mapped loopback, long form"},
		{"64:ff9b::7f00:1", false, true, "NAT64 of loopback"},
		{"2002:7f00:1::", false, true, "6to4 of loopback"},
		{"2001:0:4136:e378::80ff:fffe", false, true, "Teredo, client 127.0.0.1"},
		{"2a00:1450:4001:81b::5efe:7f00:1", false, true, "ISATAP of loopback"},
		{"64:ff9b:1::a00:1", false, true, "local-use NAT64"},

		// Refused even with --allow-private.
		{"fec0::1", false, false, "site-local (deprecated)"},
		{"feff:ffff::1", false, false, "site-local upper edge"},
		{"169.254.169.254", false, false, "link-local / cloud metadata"},
		{"::ffff:169.254.169.254", false, false, "IPv4-mapped metadata"},
		{"::169.254.169.254", false, false, "IPv4-compatible metadata"},
		{"::ffff:0:169.254.169.254", false, false, "IPv4-translated metadata"},
		{"::ffff:0:a9fe:a9fe", false, false, "IPv4-translated metadata, hex"},
		{"64:ff9b::a9fe:a9fe", false, false, "NAT64 of metadata"},
		{"2002:a9fe:a9fe::", false, false, "6to4 of metadata"},
		{"2001:0:a9fe:a9fe::1", false, false, "Teredo with a link-local server"},
		{"fd00:ec2::254", false, false, "AWS metadata over IPv6"},
		{"100.100.100.200", false, false, "Alibaba metadata"},
		{"168.63.129.16", false, false, "Azure WireServer"},
		{"fe80::1", false, false, "IPv6 link-local"},
		{"fe80::1%eth0", false, false, "IPv6 link-local with a zone"},
		{"0.0.0.0", false, false, "unspecified"},
		{"0.1.2.3", false, false, "0.0.0.0/8"},
		{"::", false, false, "IPv6 unspecified"},
		{"::0.0.0.2", false, false, "IPv4-compatible 0.0.0.0/8"},
		{"224.0.0.1", false, false, "multicast"},
		{"239.255.255.250", false, false, "multicast (SSDP)"},
		{"ff02::1", false, false, "IPv6 multicast"},
		{"ff05::1:3", false, false, "IPv6 site multicast"},
		{"::ffff:224.0.0.1", false, false, "IPv4-mapped multicast"},
		{"255.255.255.255", false, false, "broadcast"},
		{"240.0.0.1", false, false, "reserved"},
		{"192.0.0.1", false, false, "IETF protocol assignments"},
		{"192.0.2.1", false, false, "TEST-NET-1"},
		{"198.51.100.1", false, false, "TEST-NET-2"},
		{"203.0.113.1", false, false, "TEST-NET-3"},
		{"198.18.0.1", false, false, "benchmarking"},
		{"198.19.255.255", false, false, "benchmarking upper edge"},
		{"192.88.99.1", false, false, "6to4 relay anycast (deprecated)"},
		{"2001:db8::1", false, false, "IPv6 documentation"},
		{"3fff::1", false, false, "IPv6 documentation (RFC 9637)"},
		{"2001:2::1", false, false, "IPv6 benchmarking"},
		{"2001:20::1", false, false, "ORCHIDv2"},
		{"100::1", false, false, "discard-only"},
		{"5f00::1", false, false, "SRv6 SIDs, outside 2000::/3"},
		{"4000::1", false, false, "unallocated, outside 2000::/3"},
	}
	hosted := AddressPolicy{}
	dev := AddressPolicy{AllowPrivate: true}
	for _, c := range cases {
		a := netip.MustParseAddr(c.addr)
		for _, p := range []struct {
			name   string
			policy AddressPolicy
			ok     bool
		}{{"hosted", hosted, c.hosted}, {"allow-private", dev, c.dev}} {
			err := p.policy.CheckAddr(a)
			if (err == nil) != p.ok {
				t.Errorf("%s %s (%s): allowed=%v, want %v (%v)", p.name, c.addr, c.why, err == nil, p.ok, err)
			}
			if err != nil && !errors.Is(err, ErrBlockedAddress) {
				t.Errorf("%s %s: %v does not wrap ErrBlockedAddress", p.name, c.addr, err)
			}
		}
	}
	if hosted.CheckPort(8080) == nil || hosted.CheckPort(443) != nil || hosted.CheckPort(80) != nil || (AddressPolicy{AllowAnyPort: true}).CheckPort(8080) != nil {
		t.Error("ports: only 80 and 443 unless any port is allowed")
	}
}

// The guard refuses what an IPv6 address carries whenever the IPv4 address it
// carries would be refused, and --allow-private only ever admits more.
func FuzzCheckAddr(f *testing.F) {
	for _, s := range []string{"::7f00:1", "::ffff:0:7f00:1", "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::", "2001:0:4136:e378::80ff:fffe", "fec0::1", "2a00::5efe:7f00:1"} {
		f.Add(netip.MustParseAddr(s).AsSlice())
	}
	hosted, dev := AddressPolicy{}, AddressPolicy{AllowPrivate: true}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, ok := netip.AddrFromSlice(b)
		if !ok {
			return
		}
		if hosted.CheckAddr(a) == nil && dev.CheckAddr(a) != nil {
			t.Fatalf("%s: allowed by the hosted policy but not by allow-private", a)
		}
		if a.Is6() {
			for _, v4 := range embeddedV4(a) {
				if hosted.CheckAddr(v4) != nil && hosted.CheckAddr(a) == nil {
					t.Fatalf("%s embeds refused %s but is allowed", a, v4)
				}
				if dev.CheckAddr(v4) != nil && dev.CheckAddr(a) == nil {
					t.Fatalf("%s embeds %s (refused even with allow-private) but is allowed", a, v4)
				}
			}
		}
	})
}

// mapResolver answers from a table that a test can change between requests:
// rebinding without a DNS server.
type mapResolver struct {
	mu    sync.Mutex
	names map[string][]netip.Addr
	err   map[string]error
	calls atomic.Int32
}

func (r *mapResolver) set(name string, addrs ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var as []netip.Addr
	for _, s := range addrs {
		as = append(as, netip.MustParseAddr(s))
	}
	r.names[name] = as
}

func (r *mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.calls.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.err[host]; err != nil {
		return nil, err
	}
	if as, ok := r.names[host]; ok {
		return as, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, Server: "10.9.8.7:53", IsNotFound: true}
}

func newMapResolver() *mapResolver {
	return &mapResolver{names: map[string][]netip.Addr{}, err: map[string]error{}}
}

// countingServer is a loopback server that closes every connection after one
// answer, so each request dials (and resolves) again.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32, string) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Connection", "close")
		if h != nil {
			h(w, r)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return srv, &hits, port
}

// A name that resolved to an allowed address and then to a refused one
// (DNS rebinding) is refused at the second dial, before any byte is sent,
// and the message names the kind of address but not the address.
func TestRebindingIsRefusedAtDial(t *testing.T) {
	_, hits, port := countingServer(t, nil)
	res := newMapResolver()
	res.set("rebind.test", "127.0.0.1")
	c := NewClient(Config{Resolver: res, Policy: AddressPolicy{AllowPrivate: true, AllowAnyPort: true}})
	defer c.CloseIdle()
	ctx := context.Background()
	target := "http://rebind.test:" + port + "/"

	if r := c.NewSession().Do(ctx, Request{URL: target}); r.Status != 200 {
		t.Fatalf("first resolution (loopback, allowed in dev mode): %d %v", r.Status, r.Err)
	}
	res.set("rebind.test", "169.254.169.254")
	r := c.NewSession().Do(ctx, Request{URL: target})
	if !errors.Is(r.Err, ErrBlockedAddress) {
		t.Fatalf("after rebinding to metadata: %v, want a refusal", r.Err)
	}
	msg := r.Err.Error()
	if !strings.Contains(msg, "rebind.test resolves to a cloud metadata address (link-local), which is never scanned") || strings.Contains(msg, "169.254") {
		t.Errorf("message %q: should name the host and the kind of address, not the address", msg)
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("server saw %d requests, want 1 (the rebound one must not connect)", n)
	}
	if res.calls.Load() < 2 {
		t.Errorf("resolver called %d times: the second dial did not resolve again", res.calls.Load())
	}

	// Several answers: refused ones are skipped, an allowed one is used.
	res.set("mixed.test", "169.254.169.254", "::ffff:0:169.254.169.254", "127.0.0.1")
	if r := c.NewSession().Do(ctx, Request{URL: "http://mixed.test:" + port + "/"}); r.Status != 200 {
		t.Errorf("mixed answers: %d %v, want the loopback address used", r.Status, r.Err)
	}
	// Only refused answers: refused, nothing sent.
	before := hits.Load()
	res.set("allbad.test", "169.254.169.254", "fe80::1", "::7f00:1")
	if r := c.NewSession().Do(ctx, Request{URL: "http://allbad.test:" + port + "/"}); !errors.Is(r.Err, ErrBlockedAddress) {
		t.Errorf("only refused answers: %v", r.Err)
	}
	if hits.Load() != before {
		t.Error("a request went out although every answer was refused")
	}
}

// The hosted policy refuses a public-looking name that resolves to loopback,
// and a redirect to a name that resolves to metadata.
func TestHostedPolicyRefusesResolvedPrivate(t *testing.T) {
	res := newMapResolver()
	srv, hits, port := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://metadata.test/latest/", http.StatusFound)
	})
	res.set("public-looking.example", "127.0.0.1")
	res.set("metadata.test", "169.254.169.254")
	hosted := NewClient(Config{Resolver: res, Policy: AddressPolicy{AllowAnyPort: true}})
	r := hosted.NewSession().Do(context.Background(), Request{URL: "http://public-looking.example:" + port + "/"})
	if !errors.Is(r.Err, ErrBlockedAddress) || hits.Load() != 0 {
		t.Fatalf("loopback behind a name: %v, %d hits", r.Err, hits.Load())
	}
	if msg := r.Err.Error(); strings.Contains(msg, "127.0.0.1") || !strings.Contains(msg, "loopback") {
		t.Errorf("message %q should say loopback without the address", msg)
	}

	dev := NewClient(Config{Resolver: res, Policy: AddressPolicy{AllowPrivate: true, AllowAnyPort: true}})
	r = dev.NewSession().Do(context.Background(), Request{URL: srv.URL + "/"})
	if !errors.Is(r.Err, ErrBlockedAddress) || len(r.Redirects) != 1 {
		t.Errorf("redirect to a name resolving to metadata: %v after %v", r.Err, r.Redirects)
	}
}

// Numeric hosts that some resolvers read as 127.0.0.1 are refused before
// resolution, and IPv6 spellings of loopback are refused after it; none of
// them reaches the loopback server.
func TestURLAddressNotations(t *testing.T) {
	_, hits, port := countingServer(t, nil)
	dev := NewClient(Config{Policy: AddressPolicy{AllowPrivate: true, AllowAnyPort: true}})
	hosted := NewClient(Config{Policy: AddressPolicy{AllowAnyPort: true}})
	cases := []struct {
		c    *Client
		host string
	}{
		{dev, "2130706433"},
		{dev, "0x7f000001"},
		{dev, "0x7f.1"},
		{dev, "0x7F.0.0.1"},
		{dev, "127.1"},
		{dev, "127.0.1"},
		{dev, "0177.0.0.1"},
		{dev, "017700000001"},
		{dev, "127.000.000.001"},
		{dev, "127.0.0.1."},
		{hosted, "127.0.0.1"},
		{hosted, "[::ffff:127.0.0.1]"},
		{hosted, "[::ffff:7f00:1]"},
		{hosted, "[::127.0.0.1]"},
		{hosted, "[::ffff:0:127.0.0.1]"},
		{hosted, "[::1]"},
		{hosted, "localhost"},
	}
	for _, c := range cases {
		u := "http://" + c.host + ":" + port + "/"
		r := c.c.NewSession().Do(context.Background(), Request{URL: u})
		if !errors.Is(r.Err, ErrBlockedAddress) {
			t.Errorf("%s: %d %v, want a refusal", u, r.Status, r.Err)
			continue
		}
		var fe *Error
		if !errors.As(r.Err, &fe) || fe.Kind != KindBlocked {
			t.Errorf("%s: %T %v, want *Error of kind blocked", u, r.Err, r.Err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests reached the loopback server", n)
	}
	// The same server is reachable the ordinary way (the refusals above are
	// the guard's, not a dead server's).
	if r := dev.NewSession().Do(context.Background(), Request{URL: "http://127.0.0.1:" + port + "/"}); r.Status != 200 {
		t.Errorf("plain loopback in dev mode: %d %v", r.Status, r.Err)
	}
}

func TestNumericHost(t *testing.T) {
	for host, want := range map[string]bool{
		"2130706433": true, "0x7f.1": true, "127.1": true, "1.2.3.0x4": true, "0x": true, "example.123": true,
		"example.com": false, "localhost": false, "0xdead.example": false, "a.b.c": false, "": false, "x.0xzz": false,
	} {
		if got := numericHost(host); got != want {
			t.Errorf("numericHost(%q) = %v, want %v", host, got, want)
		}
	}
	if u, _ := url.Parse("http://0x7f.1/"); !numericHost(u.Hostname()) {
		t.Error("url.Parse keeps 0x7f.1 as a name; the dialer must catch it")
	}
}

// GuardedDial is the scanner's dialer for other callers (the browser's
// proxy): the check sees every resolved address at connect time, a refused
// one is never connected to, and with the scanner's policy loopback is
// refused as it is for scans.
func TestGuardedDialSharesTheGuard(t *testing.T) {
	var accepted atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	r := newMapResolver()
	r.set("app.example", "127.0.0.1")
	ctx := context.Background()

	var be *BlockedError
	hosted := GuardedDial(AddressPolicy{AllowAnyPort: true}.CheckAddrPort, r, time.Second)
	if _, err := hosted(ctx, "tcp", "app.example:"+port); !errors.As(err, &be) || be.What != "a loopback address" {
		t.Fatalf("hosted policy, name resolving to loopback: %v", err)
	}
	if _, err := hosted(ctx, "tcp", "2130706433:"+port); !errors.As(err, &be) {
		t.Fatalf("numeric host: %v", err)
	}
	var seen []netip.AddrPort
	dev := GuardedDial(func(ap netip.AddrPort) error { seen = append(seen, ap); return nil }, r, time.Second)
	c, err := dev(ctx, "tcp", "app.example:"+port)
	if err != nil {
		t.Fatalf("admitted dial: %v", err)
	}
	c.Close()
	// Before the socket is made and again in the dialer's Control hook:
	// the resolved address each time.
	if len(seen) != 2 || seen[0].String() != "127.0.0.1:"+port || seen[1] != seen[0] {
		t.Errorf("the check saw %v, want the resolved address, before the socket and at the connection", seen)
	}
	deadline := time.Now().Add(5 * time.Second)
	for accepted.Load() < 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := accepted.Load(); n != 1 {
		t.Errorf("%d connections reached the listener, want 1 (only the admitted dial)", n)
	}
	if !NonStandardIPv4("0x7f.1") || NonStandardIPv4("127.0.0.1") || NonStandardIPv4("example.com") {
		t.Error("NonStandardIPv4 disagrees with the dialer's rule")
	}
}
