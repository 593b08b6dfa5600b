package edge

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/agentready/agentready/edge/mdtext"
)

// The report's blocks beside the 48 checks, as /api/report sends them:
// the findings that only show across checks (above the checks, like Fix
// next), the kind of site the report is judged as (a line by the score, a
// section with the evidence, what does not apply and the score as each
// other kind, each a link to ?profile=), and the read suite (its checks
// and a compact table of the sampled pages). None changes the score.

// kindWords names a profile as a site's kind, with its article.
var kindWords = map[string]string{"content": "a content site", "docs": "a docs site", "api": "an API", "commerce": "a shop", "application": "an application"}

func kindOf(id string) string {
	if w := kindWords[id]; w != "" {
		return w
	}
	return id
}

// sourceWords says where the profile came from, for the line by the score.
func sourceWords(p *pageProfile) string {
	switch p.Source {
	case "requested":
		return "as asked; detected: " + p.Detected
	case "declared":
		return "as the site declares; detected: " + p.Detected
	}
	if len(p.Evidence) > 0 {
		return "detected: " + p.Evidence[0]
	}
	return "detected"
}

// writeProfileLine is the line by the score (on a phone it is read out but
// not shown, as the tally is: Fix next keeps the first screen, and the
// Profile section says it all a little lower).
func writeProfileLine(b *strings.Builder, rep *pageReport) {
	p := rep.Profile
	if p == nil {
		return
	}
	put(b, `<p class="prof" id="profile-line">Judged as <strong>`, esc(kindOf(p.ID)), `</strong> (`, esc(sourceWords(p)), `). As `, esc(p.ID), `: <strong>`, strconv.Itoa(p.Score.Value), `</strong> (`, esc(p.Grade), `).</p>
`)
}

// writeInteractions lists the cross-check findings, each with its fix.
func writeInteractions(b *strings.Builder, rep *pageReport) {
	if len(rep.Interactions) == 0 {
		return
	}
	put(b, `<section class="card inter" id="interactions" aria-labelledby="inter-h">
<h2 id="inter-h">Across checks</h2>
<p class="lead">What only shows when the checks are read together.</p>
<ol class="steps" id="interaction-list">
`)
	for _, in := range rep.Interactions {
		put(b, `<li class="step partial" data-id="`, esc(in.ID), `"><p class="sh">`, esc(in.Title))
		for _, id := range in.Checks {
			put(b, ` <a class="cid" href="#check-`, esc(id), `">`, esc(id), `</a>`)
		}
		put(b, `</p>
<p class="sfix">`, inlineCode(in.Message), `</p>
<p class="sfix"><strong>Fix:</strong> `, inlineCode(in.Fix), `</p>
</li>
`)
	}
	put(b, "</ol>\n</section>\n")
}

// writeProfile is the profile's own section.
func writeProfile(b *strings.Builder, rep *pageReport) {
	p := rep.Profile
	if p == nil {
		return
	}
	put(b, `<section class="card profile" id="profile" aria-labelledby="profile-h">
<h2 id="profile-h">Profile: `, esc(kindOf(p.ID)), `</h2>
<p class="lead">`)
	switch p.Source {
	case "requested":
		put(b, `Judged as `, esc(kindOf(p.ID)), ` because this page asked for it; detected as `, esc(kindOf(p.Detected)), `. <a href="`, esc(rep.pageLink("")), `#profile">See it as its own kind</a>.`)
	case "declared":
		put(b, `Judged as `, esc(kindOf(p.ID)), ` because the site declares it in /.well-known/agentready.json; detected as `, esc(kindOf(p.Detected)), `.`)
	default:
		put(b, `Judged as `, esc(kindOf(p.ID)), `, as detected.`)
	}
	put(b, "</p>\n")
	if len(p.Evidence) > 0 {
		put(b, `<p class="ev"><strong>Detected as `, esc(kindOf(p.Detected)), ` because</strong> `)
		for i, e := range p.Evidence {
			if i > 0 {
				put(b, "; ")
			}
			put(b, esc(e))
		}
		put(b, ".</p>\n")
	}
	if len(p.DeclarationProblems) > 0 {
		put(b, `<p class="ev" id="declaration-problems"><strong>Skipped in the site's /.well-known/agentready.json:</strong> `)
		for i, e := range p.DeclarationProblems {
			if i > 0 {
				put(b, "; ")
			}
			put(b, esc(e))
		}
		put(b, `. <a href="/docs#declare">How to write it</a>.</p>
`)
	}
	put(b, `<p class="ev">As `, esc(p.ID), `: <strong>`, strconv.Itoa(p.Score.Value), `</strong> out of 100 (grade `, esc(p.Grade), `), `, strconv.Itoa(p.Score.Passed), ` passed, `, strconv.Itoa(p.Score.NA), ` not applicable of `, strconv.Itoa(p.Score.Total), ` checks. The score above stays the 48 checks' as scanned.</p>
`)
	if len(p.NotApplicable) > 0 {
		put(b, `<h3>Checks that do not apply</h3>
<ul class="na-list" id="profile-na">
`)
		for _, g := range naGroups(p) {
			put(b, `<li>`, esc(naReason(g)), `: `)
			for i, n := range g.checks {
				if i > 0 {
					put(b, ", ")
				}
				put(b, `<a href="#check-`, esc(n.id), `">`, esc(n.id), ` `, esc(n.name), `</a>`)
			}
			put(b, "</li>\n")
		}
		put(b, "</ul>\n")
	}
	if len(p.Others) > 0 {
		put(b, `<h3>As another kind of site</h3>
<ul class="others" id="profile-others">
`)
		for _, o := range p.Others {
			put(b, `<li><a href="`, esc(rep.pageLink(o.ID)), `#profile">As `, esc(kindOf(o.ID)), `</a>: `, strconv.Itoa(o.Value), ` (`, esc(o.Grade), `)</li>
`)
		}
		put(b, "</ul>\n")
	}
	put(b, "</section>\n")
}

// naGroup is the checks that do not apply for one reason.
type naGroup struct {
	by, reason string
	checks     []struct{ id, name string }
}

// naGroups groups the profile's not-applicable checks by their reason, in
// the order the reasons first come: a profile gives one reason to many
// checks, said once.
func naGroups(p *pageProfile) []naGroup {
	var out []naGroup
	at := map[string]int{}
	for _, n := range p.NotApplicable {
		k := n.By + "\x00" + n.Reason
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, naGroup{by: n.By, reason: n.Reason})
		}
		out[i].checks = append(out[i].checks, struct{ id, name string }{n.ID, n.Name})
	}
	return out
}

// naReason is a group's reason as a sentence: the profile's, or the
// waiver's, which says so.
func naReason(g naGroup) string {
	r := g.reason
	if g.by == "waiver" {
		return "Waived: " + r
	}
	if r != "" && r[0] >= 'a' && r[0] <= 'z' {
		r = string(r[0]-'a'+'A') + r[1:]
	}
	return r
}

// renderingWords names a page's rendering.
var renderingWords = map[string]string{"server": "server", "shell": "app shell", "not html": "not HTML"}

// pagePath is a sampled page's address as the table shows it: its path
// (and query) on the scanned site.
func pagePath(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Path == "" {
		return raw
	}
	if u.RawQuery != "" {
		return u.Path + "?" + u.RawQuery
	}
	return u.Path
}

// pageMarkdown says how a page offers markdown: at its .md twin, by
// negotiation, or not at all.
func pageMarkdown(p pageRPage) string {
	var how []string
	if p.MarkdownURL != "" {
		how = append(how, ".md")
	}
	if p.Negotiated {
		how = append(how, "negotiated")
	}
	if len(how) == 0 {
		return "none"
	}
	return strings.Join(how, ", ") + " (" + strconv.Itoa(p.MarkdownTokens) + " tokens)"
}

// writeRead is the read suite: its score, its checks as rows like the 48,
// and the sampled pages as a table.
func writeRead(b *strings.Builder, rep *pageReport) {
	r := rep.Read
	if r == nil {
		return
	}
	put(b, `<section class="read" id="read" aria-labelledby="read-h">
<h2 id="read-h">Read suite <span class="lt">`, strconv.Itoa(r.Score.Value), ` out of 100</span></h2>
<p class="levdesc">`, plural(len(r.Pages), "page", "pages"))
	if r.Source != "" {
		put(b, ` from `, esc(r.Source))
	}
	put(b, `, each read as an agent reads it: its size, whether it is rendered on the server, its markdown, status codes, redirects and cache headers. Scored apart: it never changes the score above.</p>
<ul class="list" id="read-checks">
`)
	for _, c := range r.Checks {
		writeCheck(b, c, "", "", false)
	}
	put(b, "</ul>\n")
	if len(r.Pages) > 0 {
		put(b, `<div class="tablewrap" tabindex="0" role="region" aria-labelledby="read-pages-cap"><table class="score-table read-pages" id="read-pages">
<caption id="read-pages-cap">The sampled pages</caption>
<thead><tr><th scope="col">Page</th><th scope="col">Status</th><th scope="col">Text tokens</th><th scope="col">Markdown</th><th scope="col">Rendering</th><th scope="col">Fails</th></tr></thead>
<tbody>
`)
		for _, p := range r.Pages {
			w := readRow(p)
			put(b, `<tr><td class="pg"><a href="`, esc(p.URL), `" rel="nofollow noopener">`, esc(w.path), `</a></td><td>`, esc(w.status), `</td><td>`, w.tokens, `</td><td>`, esc(w.markdown), `</td><td>`, esc(w.rendering), `</td><td>`, esc(w.fails), `</td></tr>
`)
		}
		put(b, "</tbody>\n</table></div>\n")
	}
	put(b, "</section>\n")
}

// readRowText is one sampled page's row as both the page and its
// markdown twin word it.
type readRowText struct {
	path, status, tokens, markdown, rendering, fails string
}

// readRow words a sampled page for its row: its path on the site (clipped),
// its status (why there was none, when the read says), its text tokens, its
// markdown, its rendering and the read checks it failed.
func readRow(p pageRPage) readRowText {
	status := strconv.Itoa(p.Status)
	switch {
	case p.Error != "":
		status = p.Error
	case p.Status == 0:
		status = "none"
	}
	fails := "none"
	if len(p.Failed) > 0 {
		fails = strings.Join(p.Failed, ", ")
	}
	rendering := renderingWords[p.Rendering]
	if rendering == "" {
		rendering = p.Rendering
	}
	return readRowText{
		path:      clipAddress(pagePath(p.URL)),
		status:    status,
		tokens:    strconv.Itoa(p.TextTokens),
		markdown:  pageMarkdown(p),
		rendering: rendering,
		fails:     fails,
	}
}

// interactionsMarkdown is the markdown twin of writeInteractions: the
// cross-check findings, each with its fix, after Fix next.
func interactionsMarkdown(b *strings.Builder, rep *pageReport) {
	if len(rep.Interactions) == 0 {
		return
	}
	put(b, "## Across checks\n\n")
	for i, in := range rep.Interactions {
		put(b, strconv.Itoa(i+1), ". **", mdtext.Text(in.Title), "** (", strings.Join(in.Checks, ", "), "): ", mdtext.Message(in.Message), " Fix: ", mdtext.Message(in.Fix), "\n")
	}
	put(b, "\n")
}

// profileMarkdown is the markdown twin of writeProfile: the evidence, what
// does not apply and the score as each other kind. The judgement itself is
// the line by the score (reportMarkdown), said once.
func profileMarkdown(b *strings.Builder, rep *pageReport) {
	p := rep.Profile
	if p == nil {
		return
	}
	put(b, "## Profile: ", kindOf(p.ID), "\n\n")
	put(b, "The score above stays the 48 checks' as scanned.")
	if len(p.Evidence) > 0 {
		put(b, " Detected because ", mdtext.Text(strings.Join(p.Evidence, "; ")), ".")
	}
	if len(p.DeclarationProblems) > 0 {
		put(b, " Skipped in the site's /.well-known/agentready.json: ", mdtext.Text(strings.Join(p.DeclarationProblems, "; ")), ".")
	}
	put(b, "\n\n")
	if len(p.NotApplicable) > 0 {
		put(b, "Checks that do not apply:\n\n")
		for _, g := range naGroups(p) {
			put(b, "- ", mdtext.Message(naReason(g)), ": ")
			for i, n := range g.checks {
				if i > 0 {
					put(b, ", ")
				}
				put(b, "**", n.id, " ", mdtext.Text(n.name), "**")
			}
			put(b, "\n")
		}
		put(b, "\n")
	}
	if len(p.Others) > 0 {
		put(b, "As another kind of site: ")
		for i, o := range p.Others {
			if i > 0 {
				put(b, ", ")
			}
			put(b, o.ID, " ", strconv.Itoa(o.Value), " (", o.Grade, ")")
		}
		put(b, ".\n\n")
	}
}

// readMarkdown is the markdown twin of writeRead: the read suite's checks
// as rows like the 48, and the sampled pages.
func readMarkdown(b *strings.Builder, rep *pageReport) {
	r := rep.Read
	if r == nil {
		return
	}
	put(b, "## Read suite (", strconv.Itoa(r.Score.Value), "/100, not in the score)\n\n")
	put(b, plural(len(r.Pages), "page", "pages"))
	if r.Source != "" {
		put(b, " from ", mdtext.Text(r.Source))
	}
	put(b, ", each read as an agent reads it.\n\n")
	for _, c := range r.Checks {
		checkMarkdown(b, c)
	}
	if len(r.Pages) > 0 {
		// A list, not a table: the twin renders no markup beyond lists,
		// emphasis, code and links, so that nothing a site wrote can pass
		// for ours (internal/stack's markup test).
		put(b, "\nThe sampled pages:\n\n")
		for _, p := range r.Pages {
			w := readRow(p)
			put(b, "- ", mdtext.Message("`"+w.path+"`"), ": ", mdtext.Text(w.status), ", ", w.tokens, " text tokens, markdown: ", w.markdown, ", rendering: ", w.rendering, ", fails ", w.fails, "\n")
		}
	}
	put(b, "\n")
}
