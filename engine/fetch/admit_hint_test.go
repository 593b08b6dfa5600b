package fetch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

// A refusal the one who runs agentready can lift says how (the
// allow-list entry naming the URL's own address and port, or
// --allow-private); the hosted service's words stay opaque, and what no
// setting admits gets no advice.
func TestRefusalSaysHowToAdmit(t *testing.T) {
	listed, err := ParseAllowList("127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	local := AddressPolicy{Allow: listed} // serve --allow 127.0.0.1:1
	hosted := AddressPolicy{Opaque: true}
	ctx := context.Background()
	res := newMapResolver()
	res.set("dev.example", "10.1.2.3")
	res.set("ntp.example", "224.0.0.1")
	check := func(p AddressPolicy, host string, port int) string {
		t.Helper()
		err := p.CheckHost(ctx, res, host, port)
		if err == nil {
			t.Fatalf("%s:%d admitted", host, port)
		}
		return p.Explain(err, host)
	}
	// What an API answer says of a URL's own IP literal: the same advice,
	// without the address or port it was given.
	target := func(p AddressPolicy, ap string) string {
		t.Helper()
		err := p.CheckAddrPort(netip.MustParseAddrPort(ap))
		if err == nil {
			t.Fatalf("%s admitted", ap)
		}
		return p.ExplainTarget(err)
	}
	for _, c := range []struct {
		name, got string
		want      []string
		not       []string
	}{
		{"a loopback literal on a port not listed", check(local, "127.0.0.1", 4000),
			[]string{"127.0.0.1 is a loopback address", "add 127.0.0.1:4000 to --allow or AGENTREADY_ALLOW", "--allow-private"}, nil},
		{"an IPv6 loopback literal", check(local, "[::1]", 4000),
			[]string{"add [::1]:4000 to --allow or AGENTREADY_ALLOW", "--allow-private"}, nil},
		{"a name: its address is not told", check(local, "dev.example", 8080),
			[]string{"dev.example resolves to a private address", "its IP address with the port (IP:8080)", "--allow-private"}, []string{"10.1.2.3"}},
		{"multicast: only an allow-list entry admits it", check(local, "ntp.example", 80),
			[]string{"add its IP address with the port (IP:80) to --allow"}, []string{"--allow-private", "224.0.0.1"}},
		{"a port of a public address", check(local, "93.184.216.34", 8443),
			[]string{"port 8443 is not scanned", "add 93.184.216.34:8443 to --allow or AGENTREADY_ALLOW", "--allow-private"}, nil},
		{"cloud metadata: never scanned, no advice", check(local, "169.254.169.254", 80),
			[]string{"never scanned"}, []string{"--allow", "AGENTREADY_ALLOW"}},
		{"the hosted service: nothing to advise its visitors", check(hosted, "127.0.0.1", 4000),
			[]string{"is not a public address the service can reach"}, []string{"--allow", "AGENTREADY_ALLOW"}},
		{"an API answer about a loopback literal", target(local, "127.0.0.1:4000"),
			[]string{"its host is a loopback address", "add the address with its port (IP:port) to --allow or AGENTREADY_ALLOW", "--allow-private"}, []string{"127.0.0.1", "4000"}},
		{"an API answer about a metadata literal", target(local, "169.254.169.254:80"),
			[]string{"its host is"}, []string{"--allow", "169.254"}},
		{"the hosted service's API answer", target(hosted, "10.1.2.3:80"),
			[]string{"its host is a private address"}, []string{"--allow", "10.1.2.3"}},
		{"the hosted service's port refusal", check(hosted, "93.184.216.34", 8443),
			[]string{"port 8443 is not scanned"}, []string{"--allow", "AGENTREADY_ALLOW"}},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.got, w) {
				t.Errorf("%s: %q does not say %q", c.name, c.got, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(c.got, n) {
				t.Errorf("%s: %q says %q", c.name, c.got, n)
			}
		}
	}
	// The advice is right: the entry it names admits the target.
	entry, err := ParseAllowList("127.0.0.1:4000")
	if err != nil {
		t.Fatal(err)
	}
	if err := (AddressPolicy{Allow: entry}).CheckAddrPort(netip.MustParseAddrPort("127.0.0.1:4000")); err != nil {
		t.Errorf("the advised entry does not admit the target: %v", err)
	}
}

// At the dialer, as a scan meets it: a session's error says the same.
func TestScanRefusalSaysHowToAdmit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	listed, err := ParseAllowList("127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(Config{Policy: AddressPolicy{Allow: listed}})
	r := c.NewSession().Do(context.Background(), Request{URL: srv.URL + "/"})
	if r.Err == nil {
		t.Fatal("a loopback port off the allow-list was fetched")
	}
	if msg := r.Err.Error(); !strings.Contains(msg, "add 127.0.0.1:"+port+" to --allow or AGENTREADY_ALLOW") || !strings.Contains(msg, "--allow-private") {
		t.Errorf("the refusal does not say what to allow: %q", msg)
	}
}
