package stack

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

func TestClientAddrBehindTrustedProxies(t *testing.T) {
	proxies, err := parseTrustedProxies("10.0.0.0/8, 172.17.0.1, fd00::/8")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, peer string
		xff        []string
		want       string // "" : the peer's own address
	}{
		{"direct caller, header ignored", "203.0.113.9:5000", []string{"198.51.100.1"}, ""},
		{"through the proxy", "172.17.0.1:40000", []string{"198.51.100.7"}, "198.51.100.7"},
		{"a client's own entry left of the real one is not read", "172.17.0.1:40000", []string{"1.2.3.4, 198.51.100.7"}, "198.51.100.7"},
		{"two trusted hops", "10.1.2.3:1", []string{"198.51.100.7, 10.9.9.9"}, "198.51.100.7"},
		{"split over two header lines", "10.1.2.3:1", []string{"1.2.3.4, 198.51.100.7", "10.9.9.9"}, "198.51.100.7"},
		{"port written by the proxy", "10.1.2.3:1", []string{"198.51.100.7:51234"}, "198.51.100.7"},
		{"IPv6 client", "[fd00::5]:1", []string{"2001:db8::1"}, "2001:db8::1"},
		{"IPv6 client with port", "10.1.2.3:1", []string{"[2001:db8::1]:443"}, "2001:db8::1"},
		{"IPv4-mapped proxy", "[::ffff:172.17.0.1]:1", []string{"198.51.100.7"}, "198.51.100.7"},
		{"garbage ends the walk at the proxy that wrote it", "10.1.2.3:1", []string{"198.51.100.7, unknown"}, "10.1.2.3"},
		{"garbage behind a trusted hop", "10.1.2.3:1", []string{"nonsense, 10.9.9.9"}, "10.9.9.9"},
		{"no header", "172.17.0.1:40000", nil, "172.17.0.1"},
		{"only trusted hops", "10.1.2.3:1", []string{"10.0.0.1"}, "10.0.0.1"},
		{"zone in an entry", "10.1.2.3:1", []string{"fe80::1%eth0"}, "10.1.2.3"},
	} {
		got := clientAddr(proxies, tc.peer, tc.xff)
		want := netip.Addr{}
		if tc.want != "" {
			want = netip.MustParseAddr(tc.want)
		}
		if got != want {
			t.Errorf("%s: clientAddr(%s, %q) = %v, want %v", tc.name, tc.peer, tc.xff, got, want)
		}
	}

	r, _ := http.NewRequest("GET", "/", nil)
	r.RemoteAddr, r.Header = "172.17.0.1:40000", http.Header{"X-Forwarded-For": {"198.51.100.7"}}
	fromProxy(proxies, r)
	if r.RemoteAddr != "198.51.100.7:0" {
		t.Errorf("RemoteAddr after fromProxy: %s", r.RemoteAddr)
	}
	r.RemoteAddr = "203.0.113.9:5000"
	fromProxy(proxies, r)
	if r.RemoteAddr != "203.0.113.9:5000" {
		t.Errorf("an untrusted peer's address changed to %s", r.RemoteAddr)
	}
}

func TestParseTrustedProxies(t *testing.T) {
	got, err := parseTrustedProxies(" 127.0.0.1 ,,::1, 10.1.2.3/8 ")
	if err != nil || len(got) != 3 || got[2].String() != "10.0.0.0/8" || got[1].String() != "::1/128" {
		t.Errorf("parseTrustedProxies: %v, %v", got, err)
	}
	for _, bad := range []string{"proxy.internal", "10.0.0.0/33", "fe80::1%eth0", strings.Repeat("10.0.0.1,", 65)} {
		if _, err := parseTrustedProxies(bad); err == nil {
			t.Errorf("parseTrustedProxies(%.40q) accepted it", bad)
		}
	}
}

// Whatever a client sends, the address is one of the header's entries or
// the peer, and a peer that is not trusted is never replaced.
func FuzzClientAddr(f *testing.F) {
	f.Add("172.17.0.1:1", "198.51.100.7, 10.0.0.1")
	f.Add("203.0.113.9:5000", "1.2.3.4")
	f.Add("[fd00::1]:1", "[2001:db8::1]:443,garbage")
	proxies, _ := parseTrustedProxies("10.0.0.0/8,172.17.0.1,fd00::/8")
	f.Fuzz(func(t *testing.T, peer, xff string) {
		got := clientAddr(proxies, peer, []string{xff})
		p, err := netip.ParseAddrPort(peer)
		if err != nil || !trusted(proxies, p.Addr()) {
			if got.IsValid() {
				t.Fatalf("untrusted peer %q replaced by %v", peer, got)
			}
			return
		}
		if got == p.Addr().Unmap() {
			return
		}
		for _, e := range strings.Split(xff, ",") {
			if a, ok := forwardedAddr(strings.TrimSpace(e)); ok && a == got {
				return
			}
		}
		t.Fatalf("clientAddr(%q, %q) = %v: neither the peer nor an entry", peer, xff, got)
	})
}
