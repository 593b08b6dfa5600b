package payment

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/fetch"
)

// A facilitator that fails is unavailable, in words that name neither our
// network nor a library; one that answers a refusal is not an outage.
func TestFacilitatorFailures(t *testing.T) {
	release := make(chan struct{}) // lets the hanging handler go once the client has given up
	for _, c := range []struct {
		name    string
		handler http.HandlerFunc
		down    bool
		says    string
	}{
		{"refusal with 400 and the API's JSON", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(400)
			w.Write([]byte(`{"isValid":false,"invalidReason":"insufficient_funds"}`))
		}, false, ""},
		{"server error", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(502) }, true, "answered 502"},
		{"not the API's JSON", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>login</html>")) }, true, "without the x402 JSON"},
		{"a redirect is not followed", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://169.254.169.254/latest", http.StatusFound)
		}, true, "without the x402 JSON"},
		{"hangs", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}, true, ""},
	} {
		srv := httptest.NewServer(c.handler)
		f := NewFacilitator(srv.URL, fetch.AddressPolicy{AllowPrivate: true}, 300*time.Millisecond)
		// The caller's deadline is long: a hanging facilitator must be cut
		// by the client's own 300 ms timeout, within half of it.
		const callerDeadline = 30 * time.Second
		ctx, cancel := context.WithTimeout(context.Background(), callerDeadline)
		start := time.Now()
		v, err := f.Verify(ctx, 2, []byte(`{}`), map[string]string{})
		took := time.Since(start)
		cancel()
		if c.name == "hangs" {
			close(release)
		}
		srv.Close()
		switch {
		case c.down && !errors.Is(err, ErrUnavailable):
			t.Errorf("%s: %v, want unavailable", c.name, err)
		case !c.down && (err != nil || v.IsValid || v.InvalidReason != "insufficient_funds"):
			t.Errorf("%s: %+v %v", c.name, v, err)
		case c.down && c.says != "" && !strings.Contains(err.Error(), c.says):
			t.Errorf("%s: %q, want it to say %q", c.name, err, c.says)
		case err != nil && (strings.Contains(err.Error(), "127.0.0.1") || strings.Contains(err.Error(), "dial tcp")):
			t.Errorf("%s: the cause names an address or a library: %q", c.name, err)
		}
		if took >= callerDeadline/2 {
			t.Errorf("%s: took %s: the client's 300 ms timeout did not end it", c.name, took)
		}
	}
	// A facilitator on a private address is refused unless allowed.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"kinds":[]}`)) }))
	defer srv.Close()
	if _, err := NewFacilitator(srv.URL, fetch.AddressPolicy{}, time.Second).Supported(context.Background()); !errors.Is(err, ErrUnavailable) {
		t.Errorf("a loopback facilitator without allowPrivate: %v", err)
	}
}
