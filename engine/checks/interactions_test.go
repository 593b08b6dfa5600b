package checks_test

import (
	"strings"
	"testing"

	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/checktest"
)

const shellPage = `<!doctype html><html lang=en><title>Trellis</title><script type=module src="/assets/app.js"></script><div id=root></div></html>`

const loginPage = `<!doctype html><html lang=en><title>Sign in</title><main><h1>Sign in</h1><form><input name=email><input type=password name=pw></form></main></html>`

// site is a homepage, three pages under section (each html) and a sitemap
// listing them, plus extra files.
func site(section, html string, extra map[string]string) map[string]string {
	files := map[string]string{
		"index.html":  checktest.ProsePage("Home", ""),
		"sitemap.xml": `<urlset><url><loc>{{ORIGIN}}/` + section + `/a</loc></url><url><loc>{{ORIGIN}}/` + section + `/b</loc></url><url><loc>{{ORIGIN}}/` + section + `/c</loc></url></urlset>`,
	}
	for _, p := range []string{"a", "b", "c"} {
		files[section+"/"+p+"/index.html"] = html
	}
	for k, v := range extra {
		files[k] = v
	}
	return files
}

func twins(section string) map[string]string {
	m := map[string]string{}
	for _, p := range []string{"a", "b", "c"} {
		m[section+"/"+p+".md"] = "# " + p + "\n\nLantern schedules jobs across a fleet of workers.\n"
	}
	return m
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func interactionIDs(res *report.Result) []string {
	var out []string
	for _, i := range res.Interactions {
		out = append(out, i.ID)
	}
	return out
}

// Each interaction shows on a site that has its situation and not on the
// same site without it.
func TestInteractions(t *testing.T) {
	llms := func(links ...string) map[string]string {
		var b strings.Builder
		b.WriteString("# Lantern\n\n> Job scheduler docs.\n\n## Pages\n\n")
		for _, l := range links {
			b.WriteString("- [" + l + "](" + l + "): page\n")
		}
		return map[string]string{"llms.txt": b.String()}
	}
	redirects := map[string]string{"_site.json": `{"routes": {
		"/old/a": {"status": 301, "location": "/guide/a"},
		"/old/b": {"status": 301, "location": "/guide/b"},
		"/old/c": {"status": 301, "location": "/guide/c"}}}`}
	publicTwins := func(section string) map[string]string {
		m := twins(section)
		for k := range m {
			m[k] += "\n" + strings.Repeat("Each job runs on the first free worker, and a failed run is retried with backoff. ", 10) + "\n"
		}
		return m
	}
	cases := []struct {
		id        string
		has, hasn map[string]string
	}{
		{"shell-without-markdown",
			site("app", shellPage, nil),
			site("app", checktest.ProsePage("Feature", ""), nil)},
		{"api-behind-auth",
			site("docs", loginPage, nil),
			site("docs", checktest.ProsePage("Guide", ""), nil)},
		// Behind a sign-in for people, but public as markdown (R.20): not only behind it.
		{"api-behind-auth",
			site("docs", loginPage, nil),
			site("docs", loginPage, publicTwins("docs"))},
		{"md-undiscoverable",
			site("guide", checktest.ProsePage("Guide", ""), twins("guide")),
			site("guide", checktest.ProsePage("Guide", ""), merge(twins("guide"), llms("/guide/a.md", "/guide/b.md", "/guide/c.md")))},
		{"llms-links-redirect",
			site("guide", checktest.ProsePage("Guide", ""), merge(redirects, llms("/old/a", "/old/b", "/old/c"))),
			site("guide", checktest.ProsePage("Guide", ""), merge(redirects, llms("/guide/a", "/guide/b", "/old/c")))},
		{"llms-blocked-by-robots",
			site("guide", checktest.ProsePage("Guide", ""), merge(llms("/guide/a", "/guide/b"), map[string]string{"robots.txt": "User-agent: *\nAllow: /\n\nUser-agent: Claude-User\nDisallow: /guide/\n"})),
			site("guide", checktest.ProsePage("Guide", ""), merge(llms("/guide/a", "/guide/b"), map[string]string{"robots.txt": "User-agent: *\nAllow: /\n\nUser-agent: GPTBot\nDisallow: /guide/\n"}))},
	}
	for _, c := range cases {
		t.Run(c.id, func(t *testing.T) {
			t.Parallel()
			res := checktest.Scan(t, checktest.WriteSite(t, c.has))
			var found *report.Interaction
			for i := range res.Interactions {
				if res.Interactions[i].ID == c.id {
					found = &res.Interactions[i]
				}
			}
			if found == nil {
				t.Fatalf("%s missing on the site that has it; got %v", c.id, interactionIDs(res))
			}
			if found.Title == "" || found.Message == "" || found.Fix == "" || len(found.Checks) == 0 {
				t.Errorf("incomplete: %+v", found)
			}
			res = checktest.Scan(t, checktest.WriteSite(t, c.hasn))
			for _, id := range interactionIDs(res) {
				if id == c.id {
					t.Errorf("%s on the site without it: %+v", c.id, res.Interactions)
				}
			}
		})
	}
}

// A report without a read sample (a repository scan) has no interactions;
// a well-behaved site has none.
func TestInteractionsNone(t *testing.T) {
	res := checktest.Scan(t, checktest.WriteSite(t, site("guide", checktest.ProsePage("Guide", ""), nil)))
	if len(res.Interactions) != 0 {
		t.Errorf("interactions on a plain site: %v", interactionIDs(res))
	}
}
