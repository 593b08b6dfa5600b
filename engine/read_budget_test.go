package engine_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/testing/checktest"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/loopback"
)

// sixtyPages is a site whose sitemap lists 60 pages in three sections,
// the blog first and largest in order; three blog URLs redirect once.
func sixtyPages(t *testing.T) *fixture.Site {
	t.Helper()
	page := func(title string) string {
		return "<!doctype html><html lang=en><title>" + title + "</title><main><h1>" + title + "</h1><p>" + strings.Repeat("Words about "+title+". ", 20) + "</p></main></html>"
	}
	files := map[string]string{"index.html": page("Home")}
	var sm strings.Builder
	sm.WriteString("<urlset>")
	routes := []string{}
	for _, sec := range []struct {
		name string
		n    int
	}{{"blog", 40}, {"docs", 12}, {"shop", 8}} {
		for i := 0; i < sec.n; i++ {
			path := fmt.Sprintf("/%s/p%d", sec.name, i)
			if sec.name == "blog" && i < 3 {
				routes = append(routes, fmt.Sprintf(`"%s": {"status": 301, "location": "%s/"}`, path, path))
			}
			fmt.Fprintf(&sm, "<url><loc>{{ORIGIN}}%s</loc></url>", path)
			files[path+"/index.html"] = page(path)
		}
	}
	sm.WriteString("</urlset>")
	files["sitemap.xml"] = sm.String()
	files["_site.json"] = `{"routes": {` + strings.Join(routes, ",") + `}}`
	s, err := fixture.Start(checktest.WriteSite(t, files))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// The read sample costs at most one child sitemap, three requests a page,
// the missing page and the declaration, plus the redirects the site makes
// it follow; and it spreads over the sitemap's sections.
func TestReadSampleBudget(t *testing.T) {
	for _, c := range []struct{ opt, want int }{{0, 10}, {10, 10}, {50, 50}, {200, engine.MaxReadPages}} {
		t.Run(fmt.Sprint(c.opt), func(t *testing.T) {
			site := sixtyPages(t)
			sc := engine.New(engine.Options{ReadPages: c.opt, Deadline: 30 * time.Second,
				Fetch: fetch.Config{Policy: loopback.Policy()}, Now: func() time.Time { return checktest.Now }})
			res, stats, err := sc.ScanWithStats(context.Background(), site.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Read == nil {
				t.Fatal("no read suite")
			}
			if res.Read.Limit != c.want || len(res.Read.Pages) != c.want || res.Read.Candidates != 60 {
				t.Fatalf("limit %d pages %d candidates %d, want %d of 60", res.Read.Limit, len(res.Read.Pages), res.Read.Candidates, c.want)
			}
			if asked := readRequestsAsked(stats); asked > maxReadRequests(c.want) {
				t.Errorf("the read suite asked for %d URLs, budget %d", asked, maxReadRequests(c.want))
			}
			if stats.ReadRequests < 3*c.want || res.Read.Requests != stats.ReadRequests {
				t.Errorf("%d read requests (report says %d) for %d pages read three ways", stats.ReadRequests, res.Read.Requests, c.want)
			}
			sections := map[string]int{}
			for _, p := range res.Read.Pages {
				u, _ := url.Parse(p.URL)
				sec, _, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
				sections[sec]++
			}
			if len(sections) != 3 {
				t.Errorf("sample sections %v, want all three", sections)
			}
			// Round-robin: the small sections are taken whole before the blog fills the rest.
			if c.want == 10 && (sections["blog"] != 4 || sections["docs"] != 3 || sections["shop"] != 3) {
				t.Errorf("10 pages spread as %v, want blog 4, docs 3, shop 3", sections)
			}
			if c.want == 50 && (sections["docs"] != 12 || sections["shop"] != 8) {
				t.Errorf("50 pages spread as %v, want every docs and shop page", sections)
			}
			// No page is asked for twice in the same representation.
			assertNoDuplicateFetch(t, site.Hits())
		})
	}
}
