package engine_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/internal/testing/checktest"
	"github.com/agentready/agentready/internal/testing/fixture"
)

const sitesDir = "../testdata/sites"

// loopbackScanner is the fixture tests' engine (checktest.Scanner).
var loopbackScanner = checktest.Scanner

func startSite(t testing.TB, name string, opts ...fixture.Option) *fixture.Site {
	t.Helper()
	s, err := fixture.Start(filepath.Join(sitesDir, name), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Every fixture site with an _expect.json gets exactly the verdicts it lists.
func TestFixtureSiteVerdicts(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(sitesDir, "*", "_expect.json"))
	if len(dirs) < 1 {
		t.Fatalf("found %d fixture sites with expectations, want at least 5", len(dirs))
	}
	sc := loopbackScanner(20 * time.Second)
	for _, exp := range dirs {
		name := filepath.Base(filepath.Dir(exp))
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want := checktest.Expect(t, filepath.Dir(exp))
			site := startSite(t, name)
			res, stats, err := sc.ScanWithStats(context.Background(), site.URL, nil)
			if err != nil {
				t.Fatalf("scan: %v", err)
			}
			assertNoDuplicateFetch(t, site.Hits())
			if stats.Rounds > 5 {
				t.Errorf("%d dependent rounds, budget is 5", stats.Rounds)
			}
			checkRequests, checkRounds := stats.Requests-stats.ReadRequests, 0
			for _, r := range stats.Records {
				if !r.ReadSuite {
					checkRounds = max(checkRounds, r.Round)
				}
			}
			if b, ok := siteBudgets[name]; ok && (checkRequests > b.requests || checkRounds > b.rounds) {
				t.Errorf("%d requests for the checks in %d rounds, pinned at most %d in %d", checkRequests, checkRounds, b.requests, b.rounds)
			}
			if asked := readRequestsAsked(stats); asked > maxReadRequests(gather.DefaultReadPages) {
				t.Errorf("the read suite asked for %d URLs, budget %d", asked, maxReadRequests(gather.DefaultReadPages))
			}
			if len(res.Checks) != 48 || res.Read == nil || len(res.Read.Checks) != len(checks.Read()) {
				t.Fatalf("%d checks and read suite %v, want 48 and %d read checks", len(res.Checks), res.Read != nil, len(checks.Read()))
			}
			for _, d := range checktest.Diff(res, want) {
				t.Error(d)
			}
			if n := 48 + len(checks.Read()) + 1; len(want) != n {
				t.Errorf("_expect.json lists %d keys, want all 48 checks, the %d read checks and the profile (%d)", len(want), len(checks.Read()), n)
			}
		})
	}
}

// siteBudgets pins each fixture site's request count and dependent rounds
// as measured when the gatherers became a plan derived from Requires, so a
// new gatherer cannot quietly add requests or a round. The hand-written
// sequence before it made the same requests; it labelled the docs and
// error-probe requests round 2 although they waited for the round-2 OpenAPI
// probes, which the derived rounds now count (empty, hostile, soft404: 3;
// go run ./bench/planbench shows the same wall time before and after). A
// site added later is held to the design budget of 5 rounds above. The
// identity and commerce signals added three first-round requests to every
// site (the webbotauth, ucp and acp documents) and no round
// (docs/benchmarks.md, "Identity and commerce signals: requests and wall
// time").
var siteBudgets = map[string]struct{ requests, rounds int }{
	"empty":   {39 + 3, 3},
	"full":    {25 + 3, 3},
	"hostile": {45 + 3, 3},
	"partial": {27 + 3, 3},
	"peer":    {30 + 3, 2},
	"soft404": {39 + 3, 3},
}

// maxReadRequests is the read suite's request budget for a sample of n
// pages: one child sitemap, each page three ways (HTML, Accept:
// text/markdown, its .md twin), one missing page and the site's declaration.
func maxReadRequests(n int) int { return 1 + 3*n + 1 + 1 }

// readRequestsAsked is the read suite's requests but the redirects they
// followed: the hops of a site's redirect chains are the site's doing.
func readRequestsAsked(stats *engine.Stats) int {
	n := 0
	for _, r := range stats.Records {
		if r.ReadSuite && (r.Status < 300 || r.Status > 399) {
			n++
		}
	}
	return n
}

// assertNoDuplicateFetch fails when the server saw the same request twice: the
// same method, path and query, Accept header and conditional-ness. (The
// homepage is legitimately asked for three representations: HTML, markdown,
// and a conditional revalidation.)
func assertNoDuplicateFetch(t *testing.T, hits []fixture.Hit) {
	t.Helper()
	seen := map[fixture.Hit]int{}
	for _, h := range hits {
		seen[h]++
	}
	for h, n := range seen {
		if n > 1 {
			t.Errorf("fetched %d times: %s %s (Accept %q, conditional %v)", n, h.Method, h.Path, h.Accept, h.Conditional)
		}
	}
}
