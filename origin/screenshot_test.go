package origin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/origin"
	"github.com/agentready/agentready/origin/browser"
)

// GET /api/screenshot serves a stored capture with its validators, under the
// scan's URL normalisation, and answers honestly when there is none; every
// answer is checked against /openapi.json.
func TestScreenshotEndpoint(t *testing.T) {
	// A pool whose "Chromium" is /bin/true: found, so the component is not
	// unavailable, and never started, because this endpoint starts nothing.
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1) binary")
	}
	pool := browser.New(browser.Config{ExecPath: truePath})
	o := startOrigin(t, origin.Config{Browser: pool}, nil)

	png := []byte("\x89PNG\r\n\x1a\nnot really an image")
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	if err := o.store.Screenshots().Put(context.Background(), "https://example.com/", png, at, time.Hour); err != nil {
		t.Fatal(err)
	}

	shot := func(target string, hdr ...string) (*http.Response, []byte) {
		return get(t, o.URL+"/api/screenshot?url="+url.QueryEscape(target), hdr...)
	}
	resp, b := shot("example.com")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" || !bytes.Equal(b, png) {
		t.Fatalf("stored screenshot: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	etag := resp.Header.Get("ETag")
	if !strings.HasPrefix(etag, `"`) || len(etag) < 10 {
		t.Errorf("ETag %q", etag)
	}
	if lm := resp.Header.Get("Last-Modified"); lm != "Wed, 04 Mar 2026 05:06:07 GMT" {
		t.Errorf("Last-Modified %q, want the capture time", lm)
	}
	if cc := resp.Header.Get("Cache-Control"); !strings.Contains(cc, "max-age=") || !strings.HasPrefix(cc, "public") {
		t.Errorf("Cache-Control %q", cc)
	}
	// The same site spelled as the scan API would normalise it.
	for _, spelling := range []string{"https://example.com/", "EXAMPLE.com", "https://example.com"} {
		if r, b := shot(spelling); r.StatusCode != 200 || r.Header.Get("ETag") != etag || !bytes.Equal(b, png) {
			t.Errorf("%s: %d etag %q", spelling, r.StatusCode, r.Header.Get("ETag"))
		}
	}
	// Revalidation.
	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
		r, b := shot("example.com", "If-None-Match", inm)
		if r.StatusCode != 304 || len(b) != 0 || r.Header.Get("ETag") != etag {
			t.Errorf("If-None-Match %s: %d, %d bytes, etag %q", inm, r.StatusCode, len(b), r.Header.Get("ETag"))
		}
	}
	if r, _ := shot("example.com", "If-None-Match", `"other"`); r.StatusCode != 200 {
		t.Errorf("a stale If-None-Match answered %d, want 200", r.StatusCode)
	}
	if r, _ := shot("example.com", "If-Modified-Since", at.Format(http.TimeFormat)); r.StatusCode != 304 {
		t.Errorf("If-Modified-Since the capture time: %d, want 304", r.StatusCode)
	}
	if r, _ := shot("example.com", "If-Modified-Since", at.Add(-time.Minute).Format(http.TimeFormat)); r.StatusCode != 200 {
		t.Errorf("If-Modified-Since before the capture: %d, want 200", r.StatusCode)
	}

	// No screenshot: 404, and nothing was scanned or captured for asking.
	r, b := shot("other.example")
	if r.StatusCode != 404 || envelope(t, b).Code != "no_screenshot" || !strings.Contains(string(b), "scan the site") {
		t.Errorf("unknown site: %d %s", r.StatusCode, b)
	}
	if strings.Contains(string(b), "other.example") {
		t.Errorf("the error echoes the request: %s", b)
	}
	if metricValue(t, o, "agentready_scan_cache_misses_total") != "0" || pool.Health().Started {
		t.Error("asking for a screenshot scanned or started the browser")
	}

	// Invalid input: the scan API's rules and codes.
	for target, code := range map[string]string{"": "missing_url", "ftp://example.com/": "invalid_url", "http://exa mple.com/": "invalid_url"} {
		if r, b := get(t, o.URL+"/api/screenshot?url="+url.QueryEscape(target)); r.StatusCode != 400 || string(envelope(t, b).Code) != code {
			t.Errorf("url=%q: %d %s, want 400 %s", target, r.StatusCode, b, code)
		}
	}
	if r, _ := get(t, o.URL+"/api/screenshot"); r.StatusCode != 400 {
		t.Errorf("no url: %d", r.StatusCode)
	}

	// /healthz reports the component without starting it.
	r, b = get(t, o.URL+"/healthz")
	var h struct {
		Status  string `json:"status"`
		Browser struct {
			State    string `json:"state"`
			Restarts *int   `json:"restarts"`
		} `json:"browser"`
	}
	if err := json.Unmarshal(b, &h); err != nil || r.StatusCode != 200 || h.Status != "ok" || h.Browser.State != "idle" || h.Browser.Restarts == nil {
		t.Errorf("healthz: %d %s", r.StatusCode, b)
	}
}

// Without Chromium the service works and says what to install: /healthz
// stays 200 with the component "unavailable", and a screenshot that cannot
// exist is 503 browser_unavailable, not a 404 promising one after a scan.
func TestScreenshotWithoutChromium(t *testing.T) {
	for name, pool := range map[string]*browser.Pool{
		"absent":         browser.New(browser.Config{ExecPath: "/nonexistent/chromium"}),
		"not configured": nil,
	} {
		t.Run(name, func(t *testing.T) {
			o := startOrigin(t, origin.Config{Browser: pool}, nil)
			r, b := get(t, o.URL+"/api/screenshot?url=example.com")
			if r.StatusCode != 503 || envelope(t, b).Code != "browser_unavailable" || !strings.Contains(string(b), "CHROME_PATH") || r.Header.Get("Retry-After") == "" {
				t.Errorf("%d %s", r.StatusCode, b)
			}
			r, b = get(t, o.URL+"/healthz")
			want := `"browser":{"state":"unavailable"`
			if pool == nil {
				want = `"browser":{"state":"disabled"`
			}
			if r.StatusCode != 200 || !strings.Contains(string(b), want) {
				t.Errorf("healthz %d %s, want %s", r.StatusCode, b, want)
			}
			// A scan still works, and tries no capture it cannot make.
			s := site(t, "empty")
			if r, b := get(t, scanURL(o, s.URL, "&format=json")); r.StatusCode != 200 {
				t.Errorf("scan without Chromium: %d %s", r.StatusCode, b)
			}
		})
	}
}
