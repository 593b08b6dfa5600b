package engine_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/testing/loopback"
)

// Admits answers before a scan, without a request to the site, whether a
// scan could begin: a site that listens is admitted and sees no request;
// an address the policy refuses, a port nothing listens on and a URL that
// is not one are refused as the scan would fail.
func TestAdmits(t *testing.T) {
	var hits atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer up.Close()
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedURL := "http://" + closed.Addr().String() + "/"
	closed.Close()

	local := engine.New(engine.Options{Fetch: fetch.Config{RequestTimeout: 2 * time.Second, Policy: loopback.Policy()}})
	hosted := engine.New(engine.Options{})
	for _, c := range []struct {
		name string
		sc   *engine.Scanner
		url  string
		code apierr.Code
		docs string
	}{
		{"a site that listens", local, up.URL, "", ""},
		{"a port nothing listens on", local, closedURL, apierr.SiteUnreachable, ""},
		{"loopback, refused by the hosted policy", hosted, up.URL, apierr.SiteUnreachable, apierr.LocalScansDocs},
		{"cloud metadata", local, "http://169.254.169.254/", apierr.SiteUnreachable, apierr.LocalScansDocs},
		{"not a URL", local, "http://exa mple.com/", apierr.InvalidURL, ""},
	} {
		err := c.sc.Admits(context.Background(), c.url)
		e, ok := apierr.As(err)
		switch {
		case c.code == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.code != "" && (!ok || e.Code != c.code):
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		case c.docs != "" && e.Docs != c.docs:
			t.Errorf("%s: docs %q, want %q", c.name, e.Docs, c.docs)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the site received %d requests", n)
	}
}
