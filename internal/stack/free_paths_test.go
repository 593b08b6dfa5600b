package stack_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin"
)

// call sends method to target and returns the status and the allowance
// left, as the answer says it.
func call(t *testing.T, method, target string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, target, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("RateLimit-Remaining")
}

// HEAD on every path that scans costs what GET costs, and HEAD on paths
// that never scan (the report page, screenshots, MCP) scans nothing: a
// caller at its allowance gets no scan out of HEAD (docs/edge.md,
// "Callers, allowances and 402").
func TestHeadScansNothingForFree(t *testing.T) {
	env := map[string]string{"AGENTREADY_FREE_DAILY": "2"}
	svc := start(t, stack.Options{Env: func(k string) string { return env[k] }})
	s := site(t, "full")
	q := url.QueryEscape(s.URL)
	for i, want := range []int{200, 200, 429} {
		status, _ := call(t, "HEAD", svc.URL+"/api/scan?format=json&fresh=1&url="+q)
		if status != want {
			t.Errorf("HEAD scan %d: %d, want %d", i+1, status, want)
		}
	}
	hits := len(s.Hits())
	for _, path := range []string{"/report?url=" + q, "/?url=" + q, "/api/screenshot?url=" + q, "/api/report?url=" + q, "/api/latest?url=" + q, "/api/mcp"} {
		call(t, "HEAD", svc.URL+path)
	}
	if status, _ := call(t, "HEAD", svc.URL+"/api/scan?format=json&fresh=1&url="+q); status != 429 {
		t.Errorf("HEAD scan over the allowance: %d", status)
	}
	if n := len(s.Hits()) - hits; n != 0 {
		t.Errorf("HEAD requests at the allowance reached the site %d times", n)
	}
}

// Badges are not free scans (docs/edge.md, "Callers, allowances and 402"):
// a badge shows the site's latest stored outcome, even
// once the scan cache has forgotten it, without a scan; it scans only a
// site never scanned, and that scan spends one of the caller's scans, so a
// caller with none left gets "not scanned" and the site no request.
func TestBadgeMissesAreNotFreeScans(t *testing.T) {
	env := map[string]string{"AGENTREADY_FREE_DAILY": "2"}
	svc := start(t, stack.Options{Env: func(k string) string { return env[k] }, Origin: origin.Config{CacheTTL: time.Millisecond}})
	scanned, fresh, third := site(t, "full"), site(t, "peer"), site(t, "empty")
	badge := func(target string) string {
		_, b := testenv.Get(t, svc.URL+"/api/badge?format=shields&url="+url.QueryEscape(target))
		return string(b)
	}
	if status, left := call(t, "GET", svc.URL+"/api/scan?format=json&url="+url.QueryEscape(scanned.URL)); status != 200 || left != "1" {
		t.Fatalf("the scan: %d, %s left", status, left)
	}
	hits := len(scanned.Hits())
	if b := badge(scanned.URL); !strings.Contains(b, `"message"`) || strings.Contains(b, "not scanned") || strings.Contains(b, "unknown") {
		t.Errorf("the badge of a scanned site: %s", b)
	}
	if len(scanned.Hits()) != hits {
		t.Errorf("the badge of a scanned site scanned it (%d requests)", len(scanned.Hits())-hits)
	}
	// A site never scanned: the badge scans it, with the last scan left.
	if b := badge(fresh.URL); strings.Contains(b, "not scanned") || len(fresh.Hits()) == 0 {
		t.Errorf("the badge of a site never scanned: %s (%d requests)", b, len(fresh.Hits()))
	}
	if status, _ := call(t, "GET", svc.URL+"/api/scan?format=json&url="+url.QueryEscape(third.URL)); status != 429 {
		t.Errorf("the badge's scan did not spend the caller's allowance: %d", status)
	}
	if b := badge(third.URL); !strings.Contains(b, "not scanned") || len(third.Hits()) != 0 {
		t.Errorf("a badge miss over the allowance: %s (%d requests)", b, len(third.Hits()))
	}
}
