package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseAllowList(t *testing.T) {
	ok := map[string]string{
		"":                                       "",
		" , ,":                                   "",
		"127.0.0.1:8080":                         "127.0.0.1:8080",
		" 10.0.0.7 , 10.1.0.0/16 ":               "10.0.0.7,10.1.0.0/16",
		"10.1.2.3/16":                            "10.1.0.0/16", // masked
		"::1":                                    "::1",
		"[::1]:8443":                             "[::1]:8443",
		"fd00::/8":                               "fd00::/8",
		"::ffff:127.0.0.1":                       "127.0.0.1", // an IPv4 address however spelt
		"[::ffff:127.0.0.1]:80":                  "127.0.0.1:80",
		"::ffff:10.0.0.0/104":                    "10.0.0.0/8",
		"169.0.0.0/8":                            "169.0.0.0/8", // holds link-local space, which stays refused
		"fe00::/7":                               "fe00::/7",    // holds fe80::/10, likewise
		"192.0.2.10,192.0.2.10:9000,[fe00::1]:1": "192.0.2.10,192.0.2.10:9000,[fe00::1]:1",
	}
	for in, want := range ok {
		l, err := ParseAllowList(in)
		if err != nil || l.String() != want {
			t.Errorf("ParseAllowList(%q) = %q, %v; want %q", in, l.String(), err, want)
		}
	}
	bad := map[string]string{
		"localhost":              "host names are not accepted",
		"localhost:8080":         "host names are not accepted",
		"fixture.test:443":       "host names are not accepted",
		"127.1":                  "is not an IP address",
		"0x7f000001":             "is not an IP address",
		"127.0.0.1:0":            "port 0",
		"127.0.0.1:65536":        "not a valid address with a port",
		"127.0.0.1:http":         "not a valid address with a port",
		"[::1]":                  "not a valid address with a port",
		"10.0.0.0/33":            "not a valid CIDR",
		"10.0.0.0/":              "not a valid CIDR",
		"fe80::1%eth0":           "zone",
		"[fe80::1%eth0]:80":      "zone",
		"169.254.169.254":        "is a cloud metadata address",
		"169.254.169.254:80":     "is a cloud metadata address",
		"169.254.169.254/32":     "is a cloud metadata address",
		"::ffff:169.254.169.254": "is a cloud metadata address",
		"64:ff9b::a9fe:a9fe":     "is an IPv6 form of a cloud metadata address",
		"fd00:ec2::254":          "is a cloud metadata address",
		"[fd20:ce::254]:80":      "is a cloud metadata address",
		"fd00:c1::a9fe:a9fe":     "is a cloud metadata address",
		"100.100.100.200":        "is a cloud metadata address",
		"192.0.0.192":            "is a cloud metadata address",
		"169.254.1.1":            "is a link-local address",
		"[fe80::1]:1":            "is a link-local address",
		"169.254.0.0/16":         "holds only link-local addresses",
		"169.254.8.0/24":         "holds only link-local addresses",
		"fe80::/10":              "holds only link-local addresses",
		"127.0.0.1;10.0.0.1":     "is not an IP address",
	}
	for in, want := range bad {
		_, err := ParseAllowList(in)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "write an IP address") {
			t.Errorf("ParseAllowList(%q) error %v, want one saying %q and what to write", in, err, want)
		}
		if strings.Contains(want, "metadata") || strings.Contains(want, "link-local") {
			if err == nil || !strings.Contains(err.Error(), "are never scanned, whatever the allow-list says") {
				t.Errorf("ParseAllowList(%q) error %v: it should say that these addresses are never scanned", in, err)
			}
		}
	}
	if _, err := ParseAllowList(strings.Repeat("10.0.0.1,", MaxAllowEntries+1)); err == nil || !strings.Contains(err.Error(), "CIDR") {
		t.Errorf("too many entries: %v", err)
	}
}

// An entry admits exactly what it names: an IP:port entry that port only
// (whatever ports the policy admits), an IP or CIDR entry its addresses on
// the ports the policy admits. Metadata addresses stay refused in every
// spelling, and so is the rest of link-local space, even under an entry
// that holds everything.
func TestAllowListAdmitsExactlyWhatItNames(t *testing.T) {
	list, err := ParseAllowList("127.0.0.1:8080, 10.1.0.0/16, ::1, 169.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	strict := AddressPolicy{Allow: list}
	anyPort := AddressPolicy{Allow: list, AllowAnyPort: true}
	cases := []struct {
		ap              string
		strict, anyPort bool
	}{
		{"127.0.0.1:8080", true, true},
		{"[::ffff:127.0.0.1]:8080", true, true},
		{"127.0.0.1:8081", false, false},
		{"127.0.0.1:80", false, false}, // the entry names 8080 only
		{"127.0.0.2:8080", false, false},
		{"[::1]:8080", false, true},
		{"[::1]:443", true, true},
		{"10.1.2.3:443", true, true},
		{"10.1.2.3:8080", false, true},
		{"10.2.0.1:443", false, false},
		{"169.253.1.1:80", true, true}, // public anyway
		{"169.254.1.1:80", false, false},
		{"169.254.169.254:80", false, false},
		{"169.254.170.2:80", false, false},
		{"[::ffff:169.254.169.254]:80", false, false},
		{"93.184.216.34:443", true, true}, // public: the rules admit it anyway
		{"93.184.216.34:8080", false, true},
	}
	for _, c := range cases {
		ap := netip.MustParseAddrPort(c.ap)
		for _, p := range []struct {
			name   string
			policy AddressPolicy
			want   bool
		}{{"strict ports", strict, c.strict}, {"any port", anyPort, c.anyPort}} {
			err := p.policy.CheckAddrPort(ap)
			if (err == nil) != p.want {
				t.Errorf("%s, %s: admitted=%v, want %v (%v)", p.name, c.ap, err == nil, p.want, err)
			}
			if err != nil && !errors.Is(err, ErrBlockedAddress) {
				t.Errorf("%s, %s: %v does not wrap ErrBlockedAddress", p.name, c.ap, err)
			}
		}
	}
	// CheckAddr has no port: only port-free entries apply.
	if strict.CheckAddr(netip.MustParseAddr("10.1.2.3")) != nil || strict.CheckAddr(netip.MustParseAddr("127.0.0.1")) == nil {
		t.Error("CheckAddr: a CIDR entry admits its addresses, an IP:port entry needs its port")
	}

	everything, err := ParseAllowList("0.0.0.0/0, ::/0")
	if err != nil {
		t.Fatal(err)
	}
	open := AddressPolicy{Allow: everything, AllowPrivate: true, AllowAnyPort: true}
	for _, m := range []string{"169.254.169.254", "169.254.170.2", "169.254.170.23", "100.100.100.200", "168.63.129.16", "fd00:ec2::254", "fd00:ec2::23",
		"::ffff:169.254.169.254", "::169.254.169.254", "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::", "::ffff:0:a9fe:a9fe"} {
		if err := open.CheckAddrPort(netip.AddrPortFrom(netip.MustParseAddr(m), 80)); err == nil {
			t.Errorf("%s: a metadata address admitted by an allow-list", m)
		}
	}
	if open.CheckAddrPort(netip.MustParseAddrPort("10.9.9.9:1234")) != nil {
		t.Error("0.0.0.0/0 admits a private address")
	}
}

// Real connections: the listed fixture answers; the same address on another
// port and another loopback address are refused before anything is sent,
// through a scan's session and through the guarded client alike.
func TestAllowListOnTheWire(t *testing.T) {
	fixture, fixtureHits, _ := countingServer(t, nil)
	other, otherHits, _ := countingServer(t, nil)
	list, err := ParseAllowList(strings.TrimPrefix(fixture.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	policy := AddressPolicy{Allow: list}
	targets := []string{other.URL + "/"}
	if ln, err := net.Listen("tcp4", "127.0.0.2:0"); err == nil {
		var sentinelHits atomic.Int32
		srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { sentinelHits.Add(1) })}
		go srv.Serve(ln)
		defer srv.Close()
		targets = append(targets, "http://"+ln.Addr().String()+"/")
		defer func() {
			if n := sentinelHits.Load(); n != 0 {
				t.Errorf("the sentinel on 127.0.0.2 was reached %d times", n)
			}
		}()
	}

	c := NewClient(Config{Policy: policy})
	defer c.CloseIdle()
	if r := c.NewSession().Do(context.Background(), Request{URL: fixture.URL + "/"}); r.Status != 200 {
		t.Fatalf("the listed fixture: %d %v", r.Status, r.Err)
	}
	hc := GuardedClient(policy, nil, 5*time.Second, 1)
	resp, err := hc.Get(fixture.URL + "/")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the listed fixture through GuardedClient: %v", err)
	}
	resp.Body.Close()
	for _, u := range targets {
		if r := c.NewSession().Do(context.Background(), Request{URL: u}); !errors.Is(r.Err, ErrBlockedAddress) {
			t.Errorf("%s: %d %v, want a refusal", u, r.Status, r.Err)
		}
		if _, err := hc.Get(u); !errors.Is(err, ErrBlockedAddress) {
			t.Errorf("GuardedClient %s: %v, want a refusal", u, err)
		}
	}
	if fixtureHits.Load() != 2 || otherHits.Load() != 0 {
		t.Errorf("fixture hits %d (want 2), other port hits %d (want 0)", fixtureHits.Load(), otherHits.Load())
	}
}

// The parser never panics, reads its own output back to the same list, and
// no list it accepts admits a metadata address.
func FuzzParseAllowList(f *testing.F) {
	for _, s := range []string{"127.0.0.1:8080", "10.0.0.0/8,::1", "[::1]:8443", "::ffff:10.0.0.0/104", "169.254.0.0/16", "localhost:80", "1.2.3.4:0", "[fe80::1%x]:1", ",,", "0.0.0.0/0"} {
		f.Add(s)
	}
	metadataSpellings := []netip.Addr{netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("::ffff:169.254.169.254"),
		netip.MustParseAddr("fd00:ec2::254"), netip.MustParseAddr("64:ff9b::a9fe:a9fe"), netip.MustParseAddr("100.100.100.200")}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseAllowList(s)
		if err != nil {
			if l != nil {
				t.Fatalf("%q: a list and an error", s)
			}
			return
		}
		again, err := ParseAllowList(l.String())
		if err != nil || again.String() != l.String() || len(again) != len(l) {
			t.Fatalf("%q → %q does not read back: %q, %v", s, l.String(), again.String(), err)
		}
		p := AddressPolicy{Allow: l, AllowPrivate: true, AllowAnyPort: true}
		for _, m := range metadataSpellings {
			for _, port := range []uint16{80, 443, 8080} {
				if p.CheckAddrPort(netip.AddrPortFrom(m, port)) == nil {
					t.Fatalf("%q admits %s:%d", s, m, port)
				}
			}
		}
		for _, e := range l {
			if e.Port != 0 && p.CheckAddrPort(netip.AddrPortFrom(e.Prefix.Addr(), e.Port)) != nil {
				t.Fatalf("%q: entry %s does not admit what it names", s, e)
			}
		}
	})
}

// The hosted service's policy (Opaque) says one thing of every refused
// address and every name that does not resolve, whatever the kind of
// address; the precise policy keeps telling them apart.
func TestOpaqueRefusalsSayOneThing(t *testing.T) {
	res := newMapResolver()
	res.set("loopback.test", "127.0.0.1")
	res.set("private.test", "10.0.0.5")
	res.set("linklocal.test", "169.254.10.10")
	res.set("metadata.test", "169.254.169.254")
	res.set("mapped.test", "::ffff:127.0.0.1")
	res.err["servfail.test"] = &net.DNSError{Err: "server misbehaving", Name: "servfail.test", Server: "10.9.8.7:53", IsTemporary: true}
	hosts := []string{"loopback.test", "private.test", "linklocal.test", "metadata.test", "mapped.test", "servfail.test", "nxdomain.test",
		"10.0.0.1", "127.0.0.1", "169.254.169.254", "[::1]", "[fd00::1]", "2130706433"}
	opaque := NewClient(Config{Resolver: res, Policy: AddressPolicy{Opaque: true}})
	precise := NewClient(Config{Resolver: res, Policy: AddressPolicy{}})
	seen := map[string]bool{}
	for _, h := range hosts {
		r := opaque.NewSession().Do(context.Background(), Request{URL: "https://" + h + "/"})
		bare := strings.Trim(h, "[]")
		assertClean(t, h, r.Err, KindNotPublic, fmt.Sprintf(notPublic, bare))
		if got := strings.Replace(r.Err.Error(), bare, "HOST", 1); got != strings.Replace(fmt.Sprintf(notPublic, bare), bare, "HOST", 1) {
			t.Errorf("%s: %q", h, got)
		}
		p := precise.NewSession().Do(context.Background(), Request{URL: "https://" + h + "/"})
		seen[strings.Replace(p.Err.Error(), bare, "HOST", 1)] = true
	}
	if len(seen) < 5 {
		t.Errorf("the precise policy says only %d different things of these hosts: %v", len(seen), seen)
	}
	// A port refusal is about the URL, not the resolver: it keeps its words.
	if r := opaque.NewSession().Do(context.Background(), Request{URL: "https://93.184.216.34:8443/"}); !strings.Contains(Describe(r.Err), "port 8443") {
		t.Errorf("port refusal: %v", r.Err)
	}
	// Explain words the dialer's own errors (the webhook sender's) alike.
	hc := GuardedClient(AddressPolicy{Opaque: true, AllowAnyPort: true}, res, time.Second, 1)
	for _, h := range []string{"loopback.test", "nxdomain.test", "10.0.0.1"} {
		_, err := hc.Get("https://" + h + "/")
		if got, want := (AddressPolicy{Opaque: true}).Explain(err, h), fmt.Sprintf(notPublic, h); got != want {
			t.Errorf("Explain(%s) = %q, want %q", h, got, want)
		}
	}
}

// CheckHost refuses up front every spelling the dialer would refuse later,
// and resolves names through the resolver it is given.
func TestCheckHost(t *testing.T) {
	res := newMapResolver()
	res.set("receiver.example", "93.184.216.34")
	res.set("internal.example", "10.0.0.9")
	res.set("mixed.example", "93.184.216.34", "127.0.0.1")
	hosted := AddressPolicy{AllowAnyPort: true}
	ctx := context.Background()
	for _, host := range []string{"LOCALHOST", "localhost.", "api.localhost", "2130706434", "0x7f000002", "127.2", "0177.0.0.2", "0", "127.0.0.2.",
		"127.0.0.2", "[::1]", "::1", "[::ffff:127.0.0.2]", "[::ffff:7f00:2]", "[fc00::1]", "[fe80::1]", "[::]", "0.0.0.0", "169.254.169.254",
		"internal.example", "mixed.example", "nxdomain.example"} {
		if err := hosted.CheckHost(ctx, res, host, 443); err == nil {
			t.Errorf("%s: admitted", host)
		}
	}
	for _, host := range []string{"receiver.example", "93.184.216.34", "[2606:2800:220:1:248:1893:25c8:1946]"} {
		if err := hosted.CheckHost(ctx, res, host, 8443); err != nil {
			t.Errorf("%s: %v", host, err)
		}
	}
	if err := (AddressPolicy{}).CheckHost(ctx, res, "receiver.example", 8443); err == nil || !strings.Contains(Describe(err), "port 8443") {
		t.Errorf("a port the policy does not admit: %v", err)
	}
	dev := AddressPolicy{AllowPrivate: true, AllowAnyPort: true}
	if err := dev.CheckHost(ctx, res, "localhost", 3000); err != nil {
		t.Errorf("allow-private, localhost: %v", err)
	}
	list, _ := ParseAllowList("127.0.0.1:3000")
	listed := AddressPolicy{Allow: list}
	if listed.CheckHost(ctx, res, "localhost", 3000) != nil || listed.CheckHost(ctx, res, "localhost", 3001) == nil || listed.CheckHost(ctx, res, "127.0.0.2", 3000) == nil {
		t.Error("an allow-list entry admits exactly its address and port, by name or literal")
	}
	// Precise words for the CLI, one description when Opaque.
	if got := (AddressPolicy{}).Explain(hosted.CheckHost(ctx, res, "internal.example", 443), "internal.example"); !strings.Contains(got, "internal.example resolves to a private address") || strings.Contains(got, "10.0.0.9") {
		t.Errorf("precise: %q", got)
	}
	opaque := AddressPolicy{Opaque: true}
	for _, h := range []string{"internal.example", "nxdomain.example", "LOCALHOST", "127.2"} {
		if got := opaque.Explain(hosted.CheckHost(ctx, res, h, 443), h); got != fmt.Sprintf(notPublic, h) {
			t.Errorf("opaque %s: %q", h, got)
		}
	}
}
