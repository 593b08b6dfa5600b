package stack_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin"
)

var permalinkRe = regexp.MustCompile(`<a href="([^"]+)" rel="bookmark" id="permalink">Permanent link</a>`)

// A shared page outlives the scan cache: once the cache (1 ns here) has
// forgotten the report, /report?url= shows the site's kept latest report,
// its score, its date and a permanent link to it (the markdown twin too),
// and following the link shows that same scan. A bad at answers the 400
// page; an at of no scan says the report is no longer kept.
// keptPage is the report page at target once the origin keeps the report:
// it is kept off the scan's answer, as the cache is written, and a page
// without a report is not cached, so it is read again until it is there.
func keptPage(t *testing.T, target string, headerKV ...string) []byte {
	t.Helper()
	var b []byte
	testenv.Eventually(t, 5*time.Second, "the page of the kept report", func() bool {
		var resp *http.Response
		resp, b = testenv.Get(t, target, headerKV...)
		return resp.StatusCode == 200
	})
	return b
}

func TestResultPageOutlivesTheCache(t *testing.T) {
	svc := start(t, stack.Options{Env: pageEnv, Origin: origin.Config{CacheTTL: time.Nanosecond}})
	s := site(t, "full")
	q := url.QueryEscape(s.URL)
	rep := scanSite(t, svc, s.URL, false)
	at := strconv.FormatInt(rep.Timestamp.Unix(), 10)
	when := `datetime="` + rep.Timestamp.UTC().Format(time.RFC3339) + `"`

	b := keptPage(t, svc.URL+"/report?url="+q)
	m := scoreRe.FindSubmatch(b)
	if m == nil || string(m[1]) != strconv.Itoa(rep.Score.Value) || !strings.Contains(string(b), when) {
		t.Fatalf("the kept report's page: score %q (want %d), %s: %.400s", m, rep.Score.Value, when, b)
	}
	link := permalinkRe.FindSubmatch(b)
	if link == nil || html.UnescapeString(string(link[1])) != "/report?url="+q+"&at="+at {
		t.Fatalf("permanent link %q, want /report?url=%s&at=%s", link, q, at)
	}
	resp, b := testenv.Get(t, svc.URL+html.UnescapeString(string(link[1])))
	if m := scoreRe.FindSubmatch(b); resp.StatusCode != 200 || m == nil || string(m[1]) != strconv.Itoa(rep.Score.Value) || !strings.Contains(string(b), when) || !permalinkRe.Match(b) {
		t.Errorf("the permanent link's page: %d %.400s", resp.StatusCode, b)
	}
	resp, b = testenv.Get(t, svc.URL+"/report?url="+q+"&at="+at, "Accept", "text/markdown")
	if want := "Permanent link: " + svc.URL + "/report?url=" + q + "&at=" + at; resp.StatusCode != 200 || !strings.Contains(string(b), want) || !strings.Contains(string(b), "Score **"+strconv.Itoa(rep.Score.Value)+"/100**") {
		t.Errorf("the permanent link's markdown: %d, want %q in %.400s", resp.StatusCode, want, b)
	}

	for _, bad := range []string{"9z7q", "-1", "1234567890123", ""} {
		resp, b = testenv.Get(t, svc.URL+"/report?url="+q+"&at="+bad)
		if resp.StatusCode != 400 || !strings.Contains(string(b), "at must be") || scoreRe.Match(b) || (bad != "" && strings.Contains(string(b), bad)) {
			t.Errorf("at=%q: %d %.400s", bad, resp.StatusCode, b)
		}
	}
	resp, b = testenv.Get(t, svc.URL+"/report?url="+q+"&at="+strconv.FormatInt(rep.Timestamp.Unix()-1, 10))
	if resp.StatusCode != 404 || !strings.Contains(string(b), "no longer kept") || scoreRe.Match(b) {
		t.Errorf("at a second of no scan: %d %.400s", resp.StatusCode, b)
	}
}
