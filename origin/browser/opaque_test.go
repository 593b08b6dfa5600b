package browser

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/fetch"
)

// opaqueNames resolve to refused addresses; any other name does not exist.
var opaqueNames = mapResolver{"loopback.test": netip.MustParseAddr("127.0.0.2"), "linklocal.test": netip.MustParseAddr("169.254.10.10"),
	"private.test": netip.MustParseAddr("10.0.0.9")}

// With the hosted service's policy (Opaque), what the proxy answers a page
// for a name of a loopback, private or link-local address, a private
// literal and a name that does not resolve is the same, byte for byte:
// status, guard header and body. The precise policy tells them apart.
func TestOpaqueProxyAnswersAlike(t *testing.T) {
	answers := func(opaque bool) map[string]string {
		policy := fetch.AddressPolicy{Opaque: opaque}
		p := newProxy(policyCheck(policy), opaqueNames, 5*time.Second, 30*time.Second)
		p.guard.opaque = opaque
		e, err := p.listen(0)
		if err != nil {
			t.Fatal(err)
		}
		e.armed.Store(true)
		t.Cleanup(e.close)
		out := map[string]string{}
		for _, host := range []string{"loopback.test", "private.test", "linklocal.test", "nowhere.test", "10.0.0.1"} {
			resp, err := proxyClient(e).Get("http://" + host + "/x")
			if err != nil {
				t.Fatalf("%s: %v", host, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			out[host] = resp.Status + " " + resp.Header.Get(guardHeader) + " " + string(body)
		}
		return out
	}
	hosted := answers(true)
	want := hosted["nowhere.test"]
	for host, a := range hosted {
		if a != want {
			t.Errorf("hosted: %s is answered %q, a name that does not resolve %q", host, a, want)
		}
	}
	if want[:3] != "403" {
		t.Errorf("hosted answer %q, want a 403 refusal", want)
	}
	precise := answers(false)
	if precise["nowhere.test"] == precise["loopback.test"] || precise["loopback.test"] == precise["linklocal.test"] {
		t.Errorf("the precise policy should tell the kinds apart: %v", precise)
	}
}

// A render of a page on such a host fails alike too (a paid report's
// rendered.error), without starting the browser.
func TestOpaqueRenderErrorsAlike(t *testing.T) {
	hosted := fetch.AddressPolicy{Opaque: true}
	p := newTestPool(t, Config{Policy: hosted, Check: policyCheck(hosted), Resolver: opaqueNames})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var first string
	for _, u := range []string{"http://nowhere.test/", "http://loopback.test/", "http://private.test/", "http://linklocal.test/", "http://10.0.0.1/", "http://[::1]/"} {
		_, err := p.Render(ctx, u)
		if !errors.Is(err, ErrBlocked) {
			t.Errorf("%s: %v, want ErrBlocked", u, err)
			continue
		}
		if first == "" {
			first = err.Error()
		} else if err.Error() != first {
			t.Errorf("%s: %q, the first refusal said %q", u, err, first)
		}
	}
	if h := p.Health(); h.Started {
		t.Errorf("refused URLs started the browser: %+v", h)
	}
}
