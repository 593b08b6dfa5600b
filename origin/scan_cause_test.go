package origin_test

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/testing/loopback"
	"github.com/agentready/agentready/origin"
)

// resolverOf answers from a fixed table; other names do not exist, and the
// error names a resolver the way Go's does ("lookup x on 10.9.8.7:53").
type resolverOf map[string]string

func (r resolverOf) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if host == "servfail.example.com" {
		return nil, &net.DNSError{Err: "server misbehaving", Name: host, Server: "10.9.8.7:53", IsTemporary: true}
	}
	if a, ok := r[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, Server: "10.9.8.7:53", IsNotFound: true}
}

// A scan that cannot reach its site answers 422 site_unreachable with a cause
// a person can act on, and nothing of the scanner's own network: not the
// resolver's address, not the address an internal name resolved to, not Go's
// error text.
func TestUnreachableCauseIsClean(t *testing.T) {
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	_, closedPort, _ := net.SplitHostPort(closed.Addr().String())
	closed.Close()
	res := resolverOf{"intranet.example.com": "10.20.30.40", "refused.example.com": "127.0.0.1"}
	// The hosted policy (public addresses only), except for the port of the
	// closed listener, so that "refused" can be provoked on loopback.
	hosted := engine.New(engine.Options{Deadline: 5 * time.Second, Fetch: fetch.Config{Resolver: res, Policy: fetch.AddressPolicy{AllowAnyPort: true}}})
	dev := engine.New(engine.Options{Deadline: 5 * time.Second, Fetch: fetch.Config{Resolver: res, Policy: loopback.Policy()}})

	serve := func(sc *engine.Scanner, allowPrivate bool) string {
		srv := origin.New(origin.Config{AllowPrivate: allowPrivate}, embedded(t), sc)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go srv.Serve(ln)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			srv.Shutdown(ctx)
		})
		return "http://" + ln.Addr().String()
	}
	hostedURL, devURL := serve(hosted, false), serve(dev, true)

	cases := []struct {
		name, base, target, want string
	}{
		{"unresolvable name", hostedURL, "https://does-not-exist.example.com/", "the name does-not-exist.example.com does not resolve"},
		{"resolver failure", hostedURL, "https://servfail.example.com/", "servfail.example.com could not be resolved"},
		{"name of an internal address", hostedURL, "https://intranet.example.com/", "intranet.example.com resolves to a private address"},
		{"connection refused", devURL, "http://refused.example.com:" + closedPort + "/", "refused the connection"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, b := get(t, c.base+"/api/scan?format=json&url="+url.QueryEscape(c.target))
			e := envelope(t, b)
			if resp.StatusCode != 422 || e.Code != "site_unreachable" {
				t.Fatalf("%d %s, want 422 site_unreachable", resp.StatusCode, b)
			}
			if !strings.Contains(e.Message, c.want) {
				t.Errorf("message %q does not say %q", e.Message, c.want)
			}
			u, _ := url.Parse(c.target)
			for _, leak := range []string{"10.9.8.7", ":53", "lookup " + u.Hostname(), "10.20.30.40", "127.0.0.1", "dial tcp", "connect:"} {
				if strings.Contains(string(b), leak) {
					t.Errorf("body leaks %q: %s", leak, b)
				}
			}
		})
	}
}
