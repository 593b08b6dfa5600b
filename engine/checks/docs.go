package checks

import (
	"fmt"
	"strings"

	"github.com/agentready/agentready/engine/report"
)

// Markdown renders the catalog as docs/checks.md; a test keeps the file equal
// to this output, so the documentation cannot drift from the code.
func Markdown() string {
	var b strings.Builder
	b.WriteString("# The checks\n\n")
	b.WriteString("<!-- Generated from engine/checks by `make docs`; do not edit by hand. -->\n\n")
	b.WriteString("58 checks in 5 levels. The web scan (`agentready scan`, `GET /api/scan`) runs the 48 checks of levels 1–4; ")
	b.WriteString("the 10 level-5 checks run over a local codebase in the command-line tool. Scoring is described in [scoring.md](scoring.md).\n\n")
	b.WriteString("Every result carries `id, name, passed, status, level, category, message, recommendation, details, foundAt`; ")
	b.WriteString("`passed` is exactly `status == \"pass\"`, `recommendation` is empty on pass and na, `details` is compact JSON evidence.\n\n")
	b.WriteString("Rules every check obeys:\n\n")
	for _, r := range []string{
		"Each URL is fetched at most once per scan (the homepage is asked for three representations: HTML, markdown, and a conditional revalidation), concurrently, in at most 5 dependent rounds.",
		"A machine-readable document answered by a 2xx HTML page (by Content-Type or by sniffing) counts as absent: a soft 404. So does a 2xx whose body never finished arriving.",
		"Follow-up URLs taken from a site's own documents (catalog, server card, links) are fetched only on the same registrable domain.",
		"A homepage that cannot be fetched at all ends the scan with `site_unreachable` instead of a report.",
		"Requests that cannot change a verdict are not made: the conditional revalidation (3.6) is sent only when the homepage has Cache-Control, and /api/docs (1.5) is probed only for an API served under /api.",
	} {
		b.WriteString("- " + r + "\n")
	}
	b.WriteString(howToAdd)
	for _, lv := range report.Levels {
		b.WriteString(fmt.Sprintf("\n## Level %d — %s\n\n%s", lv.Number, lv.Name, lv.Description))
		if lv.Number == 5 {
			b.WriteString(" Command-line tool only (`agentready repo`).")
		}
		b.WriteString("\n")
		for _, c := range All() {
			if c.Level != lv.Number {
				continue
			}
			b.WriteString(fmt.Sprintf("\n### %s %s\n\n", c.ID, c.Name))
			b.WriteString("- **Looks at:** " + c.LooksFor + "\n")
			b.WriteString("- **Verdict:** " + c.Rule + "\n")
			b.WriteString("- **Fix:** " + c.Fix + "\n")
			b.WriteString("- **Effort:** " + string(c.Effort) + " (" + effortMeans[c.Effort] + ")\n")
			if st := c.Starter(docsSite); st != "" {
				// A fence longer than any backtick run inside keeps the starter verbatim.
				fence := "```"
				for strings.Contains(st, fence) {
					fence += "`"
				}
				b.WriteString("- **Starter** (for " + docsSite + "):\n\n" + indent(fence+"\n"+strings.TrimRight(st, "\n")+"\n"+fence, "  ") + "\n")
			}
		}
	}
	b.WriteString(readMarkdown())
	b.WriteString(signalsMarkdown())
	return b.String()
}

// readMarkdown documents the read suite.
func readMarkdown() string {
	var b strings.Builder
	b.WriteString("\n## Read suite — Readable: can an agent read the pages, one by one\n\n")
	b.WriteString("Every web scan report also carries a top-level `read` block: the checks R.1–" + readChecks[len(readChecks)-1].ID + " over a sample of the site's pages. ")
	b.WriteString("The sample takes up to 10 distinct same-site pages (`--pages N` up to 50; `--pages 0` turns it off) from llms.txt's links and the sitemap (/sitemap.xml or robots.txt's Sitemap:, one child of a sitemap index), alternating between them and round-robin over the site's sections (first path segment); the homepage's links when neither lists a page. ")
	b.WriteString("Each page is fetched three ways in one round (as HTML, with `Accept: text/markdown`, and at its .md twin), plus one sibling of the first page that cannot exist and the site's `/.well-known/agentready.json`: at most 1 + 3 × pages + 2 requests, beside the 48 checks' and never judged by them. ")
	b.WriteString("A redirect onto a URL the scan already asked for reuses that answer.\n\n")
	b.WriteString("Verdicts are proportional: a check counts the pages it applies to and the pages that pass; it passes when all do, is partial when at least half do, fails below, and is na when it applies to none. ")
	b.WriteString("`details` has `ok`, `of`, `percent` and `failing` (each failing page's `url` and `why`); `read.counts` repeats `ok`/`of` per check and `read.pages` has a row per page. ")
	b.WriteString("The read suite has its own score (`read.score`), in which each applicable check counts the share of pages that passed; it never changes `score`, `levels` or the badge ([scoring.md](scoring.md)). ")
	b.WriteString("The SSE stream sends a `read_check` event per check after the 48 checks.\n")
	for _, c := range Read() {
		b.WriteString(fmt.Sprintf("\n### %s %s\n\n", c.ID, c.Name))
		b.WriteString("- **Looks at:** " + c.LooksFor + "\n")
		b.WriteString("- **Verdict:** " + c.Rule + "\n")
		b.WriteString("- **Fix:** " + c.Fix + "\n")
		b.WriteString("- **Effort:** " + string(c.Effort) + " (" + effortMeans[c.Effort] + ")\n")
	}
	return b.String()
}

// signalsMarkdown documents the identity and commerce signals.
func signalsMarkdown() string {
	var b strings.Builder
	b.WriteString("\n## Identity and commerce signals (not scored)\n\n")
	b.WriteString("Every web scan report also carries a top-level `signals` array: opt-in standards an agent may look for, reported beside the checks but never scored. ")
	b.WriteString("Each entry has the fields of a check result (`id, name, passed, status, message, recommendation, details, foundAt`) with `group` (`identity` or `commerce`) in place of level and category; `details` is plain text, findings separated by `; `. ")
	b.WriteString("`status` is `pass`, `partial` or `na`, never `fail`: a site that publishes nothing (404, another status, an empty body or an HTML soft 404) is `na`. ")
	b.WriteString("No signal changes `score`, `currentLevel`, `levels` or the badge. They cost at most three requests (webbotauth, ucp, acp), all in the first round; ap2 and mpp read what the scan already fetched. ")
	b.WriteString("The SSE stream sends a `signal` event per entry before `scan.completed`.\n")
	for _, s := range Signals() {
		b.WriteString(fmt.Sprintf("\n### %s %s\n\n", s.ID, s.Name))
		b.WriteString("- **Group:** " + s.Group + "\n")
		b.WriteString("- **Looks at:** " + s.LooksFor + "\n")
		b.WriteString("- **Verdict:** " + s.Rule + "\n")
		b.WriteString("- **Fix:** " + s.Fix + "\n")
	}
	return b.String()
}

// docsSite is the site the documented starters are filled in for.
const docsSite = "https://example.com"

var effortMeans = map[Effort]string{
	Small:  "a static file, or a line in robots.txt or the page head",
	Medium: "a discovery document, a response header or server configuration",
	Large:  "a change to the application, its API, its content or its code",
}

func indent(s, by string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = by + l
		}
	}
	return strings.Join(lines, "\n")
}

// howToAdd is the contributor's guide to the check and gatherer model.
const howToAdd = `
## Adding a check or a gatherer

A **check** is a value in ` + "`engine/checks`" + `: its definition (id, level, name, what it looks at, the verdict rule, the fix, the fix's effort and, where one file or stanza makes it pass, a starter snippet), the artifacts it reads (` + "`Requires`" + `) and a pure function from those artifacts to an outcome. A new check is one ` + "`register`" + ` call, in a new file or beside its family:

` + "```go" + `
func init() {
	register(Definition{ID: "4.13", Level: 4, Name: "…", Effort: Small,
		LooksFor: "…", Rule: "…", Fix: "…", Snippet: "…{origin}…"},
		needs(gather.Home, gather.Robots), humansTxt)
}

func humansTxt(in gather.Source) Outcome {
	home, robots := gather.Get(in, gather.Home), gather.Get(in, gather.Robots)
	…
}
` + "```" + `

- Read artifacts only with ` + "`gather.Get`" + ` and the site with ` + "`gather.SiteOf`" + `. Reading a key the check did not declare panics, and ` + "`TestRequiresAreExact`" + ` runs every check over every fixture site and repository: it fails when a check reads an undeclared artifact or declares one it never reads.
- A check fetches and parses nothing. If it needs a document nobody gathers yet, or a field of it nobody parses, change or add a gatherer.
- A check whose inputs were not gathered is not run: it fails and names the missing input.
- ` + "`Effort`" + ` (Small, Medium, Large) and ` + "`Snippet`" + ` are what ` + "`engine/advice`" + ` orders and hands out: ` + "`agentready scan --recommend`" + ` and the MCP tool get_recommendations render its plan. A snippet may use {origin}, {name}, {slug} and {reverse}, filled in for the scanned site by ` + "`Definition.Starter`" + `.
- Level-5 checks read one artifact, ` + "`repo.Evidence`" + ` (the repository walk's findings); web checks read the web plan's. Both are judged by the same ` + "`Check.Judge`" + `, so results are built one way.
- A new check also needs its row in docs/check-rules.md, a verdict in every ` + "`testdata/sites/*/_expect.json`" + ` and the golden reports updated (` + "`go test ./engine -run TestGoldenReports -update`" + `); then ` + "`make docs`" + ` regenerates this page.

A **gatherer** is a value in ` + "`engine/gather`" + `: a key that names the artifact and fixes its type, and ` + "`Define(key, doc, requires, run)`" + `. The gatherer parses what it fetched, once, into the artifact's type:

` + "```go" + `
var Humans = NewKey[*HumansDoc]("humans-txt")

var humansGatherer = Define(Humans, "/humans.txt, parsed.", nil,
	func(c *Ctx) (*HumansDoc, error) {
		r := fetchDoc(c, "/humans.txt", acceptText)
		return &HumansDoc{Resp: r, Names: parseHumans(r)}, nil
	})
` + "```" + `

List it in ` + "`WebPlan`" + `. The driver (` + "`Plan.Run`" + `) derives order and rounds from ` + "`Requires`" + `: a gatherer starts when the artifacts it needs exist, its requests run one round after theirs (` + "`Round: After(resp)`" + ` for a request that needs an earlier answer of the same gatherer), independent gatherers run concurrently, and a URL two gatherers ask for is fetched once. Only the homepage gatherer may return an error: it ends the scan (` + "`site_unreachable`" + `). ` + "`engine/sites_test.go`" + ` pins each fixture site's requests and rounds, so a gatherer that costs a request or a round shows there.

A **signal** (identity or commerce, not scored) is an entry of the ` + "`signals`" + ` list in ` + "`engine/checks/signals.go`" + `: id, name, group, what it looks at, the rule, the fix, ` + "`Requires`" + ` and a pure ` + "`Run(in, now)`" + ` returning a ` + "`signal.Verdict`" + ` (pass, partial or na; ` + "`signal.Absent`" + ` turns a 404 or soft 404 into na). The parser and grader live in their own package (` + "`engine/parse/webbotauth`" + `, ` + "`engine/parse/commerce`" + `); a document of its own is fetched by a first-round gatherer in ` + "`engine/gather/signals.go`" + `. Its states are pinned by a fixture site under ` + "`testdata/signals/`" + ` in ` + "`engine/signals_test.go`" + `.
`
