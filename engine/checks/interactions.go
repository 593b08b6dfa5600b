package checks

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/parse/htmlpage"
	"github.com/agentready/agentready/engine/report"
)

// Interactions are the findings that only show across checks: each check
// alone can pass while together they leave agents stranded. They read the
// judged report and the read sample, and are listed most costly first.
func Interactions(set *gather.Set, res *report.Result) []report.Interaction {
	if !gather.Has(set, gather.ReadSample) {
		return nil
	}
	doc := gather.Get(set, gather.ReadSample)
	status := func(id string) report.Status {
		if c, ok := res.Check(id); ok {
			return c.Status
		}
		if c, ok := res.ReadCheck(id); ok {
			return c.Status
		}
		return report.NA
	}
	var out []report.Interaction
	add := func(i report.Interaction) { out = append(out, i) }

	// Pages that are empty shells, and no markdown anywhere to read instead.
	shells, html := Shells(doc)
	noMarkdown := status("1.17") != report.Pass && status("R.5") != report.Pass && status("R.5") != report.Partial && status("R.6") != report.Pass && status("R.6") != report.Partial
	if html > 0 && 2*shells >= html && noMarkdown {
		add(report.Interaction{ID: "shell-without-markdown", Title: "Agents that do not run JavaScript read nothing",
			Message: fmt.Sprintf("%d of %d sampled pages are application shells (R.4), and no page offers markdown instead (1.17, R.5, R.6).", shells, html),
			Fix:     "Render the pages on the server, or serve each page's markdown at its .md URL and on Accept: text/markdown, so agents get the content without a browser.",
			Checks:  []string{"R.4", "R.5", "R.6", "1.17"}})
	}

	// The API's documentation answers only behind a sign-in.
	if walled := docsBehindSignIn(set, doc); walled != "" && status("1.3") != report.Pass {
		add(report.Interaction{ID: "api-behind-auth", Title: "The API is documented only behind a sign-in",
			Message: walled + ", and no OpenAPI description is public (1.3): an agent cannot learn the API without an account.",
			Fix:     "Publish the API reference, or at least an OpenAPI description, without a sign-in; keep the sign-in for the API itself.",
			Checks:  []string{"1.3", "1.5", "R.8"}})
	}

	// Markdown at .md URLs that nothing tells an agent about.
	twins, linkedTwins := 0, 0
	for _, p := range doc.Pages {
		if TwinServed(p) {
			twins++
		}
	}
	for _, l := range doc.LlmsLinks {
		if u, err := url.Parse(l); err == nil && strings.HasSuffix(strings.ToLower(u.Path), ".md") {
			linkedTwins++
		}
	}
	if twins > 0 && linkedTwins == 0 && !markdownAlternateLinked(set, doc) && status("R.6") != report.Pass && status("R.6") != report.Partial && status("1.17") != report.Pass {
		add(report.Interaction{ID: "md-undiscoverable", Title: "Markdown that no agent can find",
			Message: fmt.Sprintf("%d sampled pages serve markdown at their .md URL (R.5), but llms.txt links no .md URL, no page links its twin with <link rel=\"alternate\" type=\"text/markdown\">, and Accept: text/markdown gets HTML (R.6, 1.17).", twins),
			Fix:     "Link the .md URLs from llms.txt, add <link rel=\"alternate\" type=\"text/markdown\" href=\"….md\"> to each page, or answer Accept: text/markdown with the same markdown.",
			Checks:  []string{"R.5", "R.6", "1.1", "1.17"}})
	}

	// An llms.txt whose links all redirect.
	sampled, redirected := 0, 0
	for _, p := range doc.Pages {
		if r := LlmsAnswer(p); r != nil && r.Err == nil {
			sampled++
			if len(r.Redirects) > 0 {
				redirected++
			}
		}
	}
	if sampled >= 2 && redirected == sampled {
		add(report.Interaction{ID: "llms-links-redirect", Title: "Every llms.txt link redirects",
			Message: fmt.Sprintf("All %d sampled llms.txt links answer with a redirect first (R.11, R.9): each costs an agent an extra round trip, and some agents stop at the redirect.", sampled),
			Fix:     "Regenerate llms.txt with the final URLs the redirects lead to.",
			Checks:  []string{"R.11", "R.9", "1.1"}})
	}

	// llms.txt lists pages robots.txt closes to the agents that read it.
	if blocked, token := llmsBlocked(set, doc); blocked > 0 {
		add(report.Interaction{ID: "llms-blocked-by-robots", Title: "llms.txt points agents at pages robots.txt closes to them",
			Message: fmt.Sprintf("robots.txt disallows %s for %d of llms.txt's links (1.4, 1.1): agents that honour robots.txt cannot follow the map the site gave them.", token, blocked),
			Fix:     "Allow the user-triggered AI agents (ChatGPT-User, Claude-User, Perplexity-User…) on the paths llms.txt lists, or drop those paths from llms.txt.",
			Checks:  []string{"1.1", "1.4"}})
	}
	return out
}

// docsBehindSignIn describes documentation that answered with a sign-in
// ("" when none did): the docs page the scan found, or sampled docs pages
// whose markdown is not public either.
func docsBehindSignIn(set *gather.Set, doc *gather.ReadDoc) string {
	if !gather.Has(set, gather.Docs) {
		return ""
	}
	if d := gather.Get(set, gather.Docs); d != nil && d.Resp != nil && d.Resp.Err == nil {
		switch r := d.Resp; {
		case r.Status == 401 || r.Status == 403:
			return fmt.Sprintf("The documentation at %s answers %d", firstOf(at(r)), r.Status)
		case r.OK() && len(r.Redirects) > 0 && loginPath.MatchString(r.FinalURL):
			return fmt.Sprintf("The documentation at %s redirects to a sign-in page", firstOf(r.RequestURL))
		}
	}
	walled := 0
	first := ""
	for _, p := range doc.Pages {
		if !gather.IsDocsURL(p.URL) || p.HTML == nil || p.HTML.Err != nil {
			continue
		}
		if SignInWall(p) != "" && !ReadableMarkdown(p) { // its markdown is a way around (R.20)
			walled++
			if first == "" {
				first = firstOf(p.URL)
			}
		}
	}
	if walled > 0 {
		return fmt.Sprintf("%s of the sampled documentation pages (%s first) answer with a sign-in", plural(walled, "page", "pages"), first)
	}
	return ""
}

// markdownAlternateLinked reports a <link rel="alternate" type="text/markdown">
// on the homepage or a sampled page.
func markdownAlternateLinked(set *gather.Set, doc *gather.ReadDoc) bool {
	if !gather.Has(set, gather.Home) {
		return false
	}
	home := gather.Get(set, gather.Home)
	if home != nil && home.Page != nil && alternateMarkdown(home.Page.Links) {
		return true
	}
	for _, p := range doc.Pages {
		if p.Page != nil && alternateMarkdown(p.Page.Links) {
			return true
		}
	}
	return false
}

// llmsBlocked counts llms.txt's links that robots.txt disallows for the
// first user-triggered agent it closes them to.
func llmsBlocked(set *gather.Set, doc *gather.ReadDoc) (int, string) {
	if !gather.Has(set, gather.Robots) {
		return 0, ""
	}
	rb := gather.Get(set, gather.Robots)
	if rb == nil || rb.File == nil || len(doc.LlmsLinks) == 0 {
		return 0, ""
	}
	for _, c := range Crawlers {
		if c.Class != "user" {
			continue
		}
		n := 0
		for _, l := range doc.LlmsLinks {
			if u, err := url.Parse(l); err == nil && !rb.File.Check(c.Token, u.EscapedPath()).Allowed {
				n++
			}
		}
		if n > 0 {
			return n, c.Token
		}
	}
	return 0, ""
}

func alternateMarkdown(links []htmlpage.Link) bool {
	for _, l := range links {
		if hasRel(l.Rels, "alternate") && (l.Type == "text/markdown" || strings.HasSuffix(strings.ToLower(l.Href), ".md")) {
			return true
		}
	}
	return false
}
