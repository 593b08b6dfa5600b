package origin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/loopback"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin"
	"github.com/agentready/agentready/origin/store"
)

// A site's reports outlive the scan cache: with a cache that forgets at
// once, /api/report still answers the site's latest report (with its
// timestamp), &at=<its second> answers the same report, and after a
// second scan at= of the first still answers the first while no at
// answers the second. A bad at is refused without being repeated; an at
// of no scan is 404. On every backend.
func TestReportOutlivesTheCache(t *testing.T) {
	for name, open := range stateBackends(t) {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			if r, ok := st.(*store.Redis); ok {
				t.Cleanup(func() { r.DeleteAll(context.Background()) })
			}
			// Each scan a minute after the one before, an hour ago: two scans
			// are two seconds, and the cache (1 ns) has forgotten each at once.
			base := time.Now().Add(-time.Hour).Truncate(time.Second)
			var n atomic.Int64
			now := func() time.Time { return base.Add(time.Duration(n.Add(1)) * time.Minute) }
			sc := engine.New(engine.Options{Deadline: 10 * time.Second, Now: now, Fetch: fetch.Config{Policy: loopback.Policy()}})
			o := serveOrigin(t, origin.Config{AllowPrivate: true, CacheTTL: time.Nanosecond}, st, sc)
			s := site(t, "partial")
			q := url.QueryEscape(s.URL)
			reportOf := func(extra string) string { return o.URL + "/api/report?url=" + q + extra }

			first := scanOnce(t, o, q)
			latest := keptReport(t, reportOf(""), first.Timestamp)
			if len(latest.History) != 1 || !latest.History[0].Timestamp.Equal(first.Timestamp) || len(latest.Plan) < 2 {
				t.Errorf("the kept report's history %+v, plan %.100s", latest.History, latest.Plan)
			}
			atFirst := reportOf("&at=" + strconv.FormatInt(first.Timestamp.Unix(), 10))
			resp, b := get(t, atFirst)
			if resp.StatusCode != 200 || resp.Header.Get("X-Scanned-At") != first.Timestamp.Format(time.RFC3339) {
				t.Fatalf("at the first scan: %d %s %.300s", resp.StatusCode, resp.Header.Get("X-Scanned-At"), b)
			}
			if _, again := get(t, reportOf("")); !bytes.Equal(b, again) {
				t.Errorf("at the first scan differs from the latest report, which is the first:\n%.300s\n%.300s", b, again)
			}

			second := scanOnce(t, o, q)
			if second.Timestamp.Equal(first.Timestamp) {
				t.Fatalf("both scans are of %s", first.Timestamp)
			}
			if r := keptReport(t, reportOf(""), second.Timestamp); len(r.History) != 2 || !r.History[1].Timestamp.Equal(second.Timestamp) {
				t.Errorf("the latest report's history: %+v", r.History)
			}
			if r := keptReport(t, atFirst, first.Timestamp); len(r.History) != 1 {
				t.Errorf("the first scan's history holds a later scan: %+v", r.History)
			}
			keptReport(t, reportOf("&at="+strconv.FormatInt(second.Timestamp.Unix(), 10)), second.Timestamp)

			for _, bad := range []string{"9z7q", "-17", "1234567890123", "", "17.5", "+17", "%EF%BC%91"} {
				resp, b := get(t, reportOf("&at="+bad))
				e := envelope(t, b)
				if resp.StatusCode != 400 || e.Code != "bad_request" || !strings.Contains(e.Message, "at must be") {
					t.Errorf("at=%q: %d %s", bad, resp.StatusCode, b)
				}
				if v, _ := url.QueryUnescape(bad); len(v) > 1 && strings.Contains(string(b), v) {
					t.Errorf("at=%q: the answer repeats it: %s", bad, b)
				}
			}
			resp, b = get(t, reportOf("&at="+strconv.FormatInt(first.Timestamp.Unix()+1, 10)))
			if e := envelope(t, b); resp.StatusCode != 404 || e.Code != "not_found" || !strings.Contains(e.Message, "no longer kept") || !strings.Contains(e.Message, "30 days") {
				t.Errorf("at a second of no scan: %d %s", resp.StatusCode, b)
			}
		})
	}
}

func scanOnce(t *testing.T, o *testOrigin, q string) report.Result {
	t.Helper()
	var r report.Result
	resp, b := get(t, o.URL+"/api/scan?format=json&url="+q)
	if resp.StatusCode != 200 || json.Unmarshal(b, &r) != nil || resp.Header.Get("X-Cache") != "MISS" {
		t.Fatalf("scan: %d %s %.300s", resp.StatusCode, resp.Header.Get("X-Cache"), b)
	}
	return r
}

// keptReport reads u until it answers the report scanned at at: the
// reports are kept off the scan's answer, as the cache is written.
func keptReport(t *testing.T, u string, at time.Time) cachedReport {
	t.Helper()
	var r cachedReport
	testenv.Eventually(t, 5*time.Second, "the report of "+at.String(), func() bool {
		resp, b := get(t, u)
		r = cachedReport{}
		return resp.StatusCode == 200 && json.Unmarshal(b, &r) == nil && r.Timestamp.Equal(at) &&
			resp.Header.Get("X-Scanned-At") == at.UTC().Format(time.RFC3339)
	})
	return r
}
