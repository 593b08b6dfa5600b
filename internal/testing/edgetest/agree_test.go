package edgetest

import (
	"net/url"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/agentready/agentready/edge"
	"github.com/agentready/agentready/engine/weburl"
)

// originPath is the path the origin's router sees for a request target.
func originPath(target string) string {
	var req fasthttp.Request
	req.Header.SetHost("edge.test") // as a server parses it: the Host header, then the target
	req.SetRequestURI(target)
	return string(req.URI().Path())
}

// The path the edge signs is the path the origin verifies, whichever form a
// platform forwards: the normalised path (native, Workers), or the request
// as the client spelled it (the wazero host proxies its own copy, which Go
// writes with URL.EscapedPath).
func FuzzCanonicalPathMatchesOrigin(f *testing.F) {
	for _, s := range []string{"/api/scan", "//api/scan", "/api/./scan", "/api/x/../scan", "/api/%2e%2e/api/scan", "/api/%73can",
		"/..", "/a/b/../../../c", "/a/.", "/a/./", "/a/..", "/./..//./x", "/a%2fb", "/%252F", "/a b", "/é", "/a%00b", "/a#b", "/a/%2e%2E/", "/.%2e/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !strings.HasPrefix(s, "/") || strings.ContainsAny(s, "?\r\n") {
			return
		}
		u, err := url.ParseRequestURI(s)
		if err != nil {
			return // net/http refuses the request before the edge sees it
		}
		canon, ok := edge.CanonicalPath(u)
		if !ok {
			return // refused with 400 invalid_path
		}
		if got := originPath(u.EscapedPath()); got != canon {
			t.Errorf("%q: the edge signs %q, the origin routes the client's spelling %q as %q", s, canon, u.EscapedPath(), got)
		}
		fwd := (&url.URL{Path: canon}).EscapedPath()
		if got := originPath(fwd); got != canon {
			t.Errorf("%q: the edge signs %q, the origin routes the forwarded %q as %q", s, canon, fwd, got)
		}
		if again, _ := edge.CanonicalPath(&url.URL{Path: canon}); again != canon {
			t.Errorf("%q: not a fixed point: %q → %q", s, canon, again)
		}
	})
}

// The edge's url check never refuses what the origin accepts (that would
// turn a valid scan away), and when it refuses, the origin agrees on why.
func FuzzScanURLNeverStricter(f *testing.F) {
	for _, s := range []string{"example.com", "https://example.com/x?y#z", "http://127.0.0.1:8080/", "localhost", "exa_mple.com", "-a.com", "a-.com",
		"ab--c.com", "xn--abc.com", "xn--.com", "é.com", "a..b", "0x7f.1", "2130706433", "1.2.3", "ftp://x.com", "mailto:x@y.com", "x.com:0",
		"x.com:99999", "http://user@x.com", "http://[::1]/", "http://[fe80::1%25eth0]/", " ", "\u00a0x.com", "x.com\u200b", "EXAMPLE.COM.", "a.b-",
		"http://:80", "//x.com", "https:x.com", "a/b.com", "x.com:80/a", "ﬀ.com", "Ⅸ.com", "a\u3002com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		refused := edge.CheckScanURL(s)
		_, err := weburl.Normalize(s)
		if refused == nil {
			return
		}
		if err == nil {
			t.Fatalf("%q: the edge refuses (%s) what the origin accepts", s, refused.Message)
		}
		if missing := strings.TrimSpace(s) == ""; missing != (refused.Code == "missing_url") {
			t.Errorf("%q: the edge says %s, the origin missing=%v", s, refused.Code, missing)
		}
	})
}
