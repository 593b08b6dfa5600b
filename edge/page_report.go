package edge

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agentready/agentready/edge/mdtext"
)

// The report's body, as the edge renders it for /report?url=… (app.js draws
// the summary and the check rows with the same markup while a scan streams,
// then swaps in this rendering). What a site owner needs first fits the
// first screen at 1280×800 and 360×800: the score as a gauge, the level and
// its ladder, the first fixes of the plan with their starters, and the
// site's thumbnail; then what changed since the last scan, the checks by
// level (failed first, filtered without JavaScript by ?filter=), the
// signals and the badge.

// fixNextSteps is how many steps of the plan the first screen shows.
const fixNextSteps = 3

// checkFilters are the views of the checks, by ?filter= value.
var checkFilters = []struct{ key, status, word string }{
	{"all", "", "All"},
	{"failed", "fail", "Failed"},
	{"partial", "partial", "Partial"},
	{"passed", "pass", "Passed"},
	{"na", "na", "Not applicable"},
}

// checkFilter is a known filter; anything else shows all checks.
func checkFilter(s string) string {
	for _, f := range checkFilters {
		if f.key == s {
			return s
		}
	}
	return "all"
}

func filterStatus(filter string) string {
	for _, f := range checkFilters {
		if f.key == filter {
			return f.status
		}
	}
	return ""
}

// statusRank orders a level's checks: what to act on first.
var statusRank = map[string]int{"fail": 0, "partial": 1, "pass": 2, "na": 3}

// levelName is level n's name in this report ("" when it has none).
func (rep *pageReport) levelName(n int) string {
	for _, l := range rep.Levels {
		if l.Level.Number == n {
			return l.Level.Name
		}
	}
	return ""
}

// levelLabel is "2 · Usable" (the number alone for a level the report lacks).
func levelLabel(rep *pageReport, n int) string {
	if name := rep.levelName(n); name != "" {
		return strconv.Itoa(n) + " · " + name
	}
	return strconv.Itoa(n)
}

func dateTime(t time.Time) string {
	return `<time datetime="` + t.UTC().Format(time.RFC3339) + `">` + t.UTC().Format("2 Jan 2006") + `<span class="hm"> ` + t.UTC().Format("15:04 UTC") + `</span></time>`
}

func writeReportBody(b *strings.Builder, base, target string, rep *pageReport, filter string) {
	put(b, `<div class="first">
`)
	writeSummary(b, target, rep)
	writeFixNext(b, rep)
	put(b, "</div>\n")
	writeInteractions(b, rep)
	writeChanges(b, rep)
	writeProfile(b, rep)
	writeChecks(b, rep, filter)
	writeRead(b, rep)
	writeSignals(b, rep)
	writeBadges(b, base, rep.URL)
}

// permalink is the permanent link to rep, the report of target (as it
// was asked for: the origin keeps reports under the requested address):
// /report?url=…&at=<the scan's unix second>, which shows this scan while
// the origin keeps its report, whatever scans came after it.
func permalink(base, target string, rep *pageReport) string {
	return reportURL(base, target) + "&at=" + strconv.FormatInt(rep.Timestamp.Unix(), 10)
}

// gaugeLevel is the colour class of a level, as the badge colours it.
func gaugeLevel(n int) string { return "lv" + strconv.Itoa(max(0, min(3, n))) }

// writeSummary: the gauge (an SVG ring, the number and grade as text), the
// level reached with the ladder, and the site's thumbnail (shown by app.js
// once the origin has a screenshot; nothing when it has none).
func writeSummary(b *strings.Builder, target string, rep *pageReport) {
	s := rep.Score
	v := max(0, min(100, s.Value))
	put(b, `<section class="card summary" aria-labelledby="summary-h">
<h2 id="summary-h" class="vh">Score</h2>
<div class="sumrow">
<div class="gauge `, gaugeLevel(rep.CurrentLevel), `" id="gauge"><svg viewBox="0 0 120 120" aria-hidden="true" focusable="false"><circle class="track" cx="60" cy="60" r="50" pathLength="100"/><circle class="arc" cx="60" cy="60" r="50" pathLength="100" stroke-dasharray="`, strconv.FormatFloat(float64(v)*0.75, 'f', 2, 64), ` 100"/></svg><p><span class="big" id="score-value">`, strconv.Itoa(s.Value), `</span> <span class="of">out of 100</span><span class="vh">,</span> <span class="gr">grade <strong id="score-grade">`, esc(s.Grade), `</strong></span></p></div>
<div class="reach">
`)
	if rep.CurrentLevel > 0 {
		put(b, `<p class="lvl yes" id="level-reached"><span class="mk" aria-hidden="true">✓</span> Level <strong id="score-level">`, strconv.Itoa(rep.CurrentLevel), ` · `, esc(s.LevelName), `</strong> reached</p>
`)
	} else {
		put(b, `<p class="lvl" id="level-reached"><span class="mk" aria-hidden="true">○</span> <strong id="score-level">No level</strong> reached yet</p>
`)
	}
	put(b, `<p class="tally">`, strconv.Itoa(s.Passed), ` passed · `, strconv.Itoa(s.Partial), ` partial · `, strconv.Itoa(s.Failed), ` failed · `, strconv.Itoa(s.NA), ` not applicable, of `, strconv.Itoa(s.Total), ` checks</p>
<p class="when">Scanned `, dateTime(rep.Timestamp), ` · <a href="`, esc(permalink("", target, rep)), `" rel="bookmark" id="permalink">Permanent link</a></p>
`)
	writeProfileLine(b, rep)
	put(b, `<form method="post" action="`, esc(reportURL("", rep.URL)), `&amp;fresh=1"><button type="submit" id="rescan" class="quiet" data-url="`, esc(rep.URL), `">Scan again</button></form>
</div>
`)
	writeLadder(b, rep)
	shot := "/api/screenshot?url=" + url.QueryEscape(rep.URL)
	put(b, `<figure id="shot" class="shot" hidden data-src="`, esc(shot), `"><a href="`, esc(shot), `"></a><figcaption>`, esc(displayHost(rep.URL)), ` as our browser saw it (opens full size)</figcaption></figure>
</div>
</section>
`)
}

// writeLadder draws each level as a bar of passed over applicable checks.
func writeLadder(b *strings.Builder, rep *pageReport) {
	put(b, `<h3 class="vh">Level ladder</h3>
<ol class="ladder" id="ladder">
`)
	for _, l := range rep.Levels {
		n := l.Level.Number
		applicable := l.Total - l.NA
		mark, state, class := "○", "not reached", "no"
		switch {
		case applicable <= 0:
			mark, state, class = "–", "", "na"
		case n > 3:
			// Indexable is scored beside the level, never inside it: no
			// state, and a bar without colour.
			mark, state, class = "◇", "", "apart"
		case n <= rep.CurrentLevel:
			mark, state, class = "✓", "reached", "yes"
		}
		put(b, `<li class="`, class, ` `, gaugeLevel(n), `"><span class="ln"><span class="mk" aria-hidden="true">`, mark, `</span> <span class="lw">Level </span>`, strconv.Itoa(n), ` · `, esc(l.Level.Name), `</span> `)
		if applicable <= 0 {
			put(b, `<span class="lc">not applicable to this site</span></li>
`)
			continue
		}
		pct := 100 * max(0, l.Passed) / applicable
		if state != "" {
			state = `<span class="ls">, ` + state + `</span>`
		}
		put(b, `<span class="lc">`, strconv.Itoa(l.Passed), ` of `, strconv.Itoa(applicable), `<span class="lw"> passed</span>`, state, `</span><svg class="bar" aria-hidden="true" focusable="false"><rect width="`, strconv.Itoa(min(100, pct)), `%" height="100%" rx="4"/></svg></li>
`)
	}
	put(b, "</ol>\n")
}

// writeFixNext shows the first steps of engine/advice's plan, as the origin
// sends it with /api/report: each with its effort, what it counts toward and
// its starter, visible and copyable without opening anything.
func writeFixNext(b *strings.Builder, rep *pageReport) {
	if rep.Plan == nil {
		return // a report read from /api/scan carries no plan
	}
	p := rep.Plan
	put(b, `<section class="card fix" aria-labelledby="fix-h">
<h2 id="fix-h">Fix next</h2>
`)
	if len(p.Steps) == 0 {
		put(b, `<p class="lead">Nothing to fix: every applicable check passes.</p>
</section>
`)
		return
	}
	if p.TargetLevel > 0 {
		put(b, `<p class="lead">`, "Level ", levelLabel(rep, p.TargetLevel), ` is `, plural(p.PassesNeeded, "pass", "passes"), ` away`)
		if len(p.Needs) > 1 {
			for i, n := range p.Needs {
				sep := ", "
				if i == 0 {
					sep = ": "
				}
				put(b, sep, strconv.Itoa(n.Passes), " in level ", strconv.Itoa(n.Level))
			}
		}
		put(b, ".</p>\n")
	} else {
		put(b, `<p class="lead">The fixes in the order that raises the score soonest.</p>
`)
	}
	put(b, `<ol class="steps" id="fix-next">
`)
	for i, st := range p.Steps {
		if i == fixNextSteps {
			break
		}
		status := statusOf(st.Status)
		toward := "a level " + strconv.Itoa(st.Level) + " check"
		if st.Blocking && p.TargetLevel > 0 {
			toward = "toward level " + strconv.Itoa(p.TargetLevel)
		}
		effort := st.Effort
		if effort == "" {
			effort = "unknown"
		}
		put(b, `<li class="step `, status, `" data-id="`, esc(st.ID), `"><p class="sh"><a href="#check-`, esc(st.ID), `">`, esc(st.Name), `</a> <span class="cid">`, esc(st.ID), `</span></p>
<p class="meta"><span class="sv"><span class="st" aria-hidden="true">`, statusMarks[status], `</span> `, statusWords[status], `</span> · <span class="eff">`, esc(effort), ` effort</span> · <span class="unl">`, esc(toward), `</span></p>
<p class="sfix">`, inlineCode(st.Fix), `</p>
`)
		if st.Snippet != "" {
			put(b, `<div class="snippet starter"><pre tabindex="0" aria-label="Starter for `, esc(st.ID), `"><code>`, esc(st.Snippet), `</code></pre><button type="button" class="copy">Copy</button></div>
`)
		}
		put(b, "</li>\n")
	}
	put(b, "</ol>\n")
	if more := len(p.Steps) - fixNextSteps; more > 0 {
		link := esc(rep.viewLink())
		put(b, `<p class="more">`, plural(more, "more fix", "more fixes"), ` among the <a href="`, link, `&amp;filter=failed#checks">failed</a> and <a href="`, link, `&amp;filter=partial#checks">partial</a> checks.</p>
`)
	}
	put(b, "</section>\n")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// writeChanges compares the report with the site's previous scan: the score
// over time as a sparkline (dates in each point's title and in text) and
// the checks that newly pass, newly fail or changed.
func writeChanges(b *strings.Builder, rep *pageReport) {
	pr, hist := rep.Previous, rep.History
	if pr == nil && len(hist) < 2 {
		return
	}
	put(b, `<section class="card changes" id="changes" aria-labelledby="changes-h">
<h2 id="changes-h">Since the last scan</h2>
<div class="chrow">
`)
	if len(hist) >= 2 {
		writeSparkline(b, hist)
	}
	put(b, `<div class="diff">
`)
	if pr != nil {
		delta := rep.Score.Value - pr.Score
		sign := "±"
		if delta > 0 {
			sign = "+"
		} else if delta < 0 {
			sign = "−"
		}
		put(b, `<p class="delta">The previous scan, `, dateTime(pr.Timestamp), `, scored `, strconv.Itoa(pr.Score), ` (grade `, esc(pr.Grade), `, level `, strconv.Itoa(pr.Level), `); this one <strong>`, strconv.Itoa(rep.Score.Value), `</strong> (`, sign, strconv.Itoa(max(delta, -delta)), `, grade `, esc(rep.Score.Grade), `, level `, strconv.Itoa(rep.CurrentLevel), `).</p>
`)
		if len(pr.NewlyPassing)+len(pr.NewlyFailing)+len(pr.Changed) == 0 {
			put(b, `<p>No check changed.</p>
`)
		} else {
			put(b, `<ul class="difflist" id="diff">
`)
			for _, g := range changeGroups(pr) {
				for _, c := range g.list {
					to := statusOf(c.To)
					put(b, `<li class="`, to, `" data-change="`, g.key, `"><span class="st" aria-hidden="true">`, statusMarks[to], `</span> <span class="sw">`, g.word, `</span> <a href="#check-`, esc(c.ID), `">`, esc(c.ID), ` `, esc(c.Name), `</a>: `, statusWords[statusOf(c.From)], ` → `, statusWords[to], `. <span class="muted">`, inlineCode(c.Message), `</span></li>
`)
				}
			}
			put(b, "</ul>\n")
		}
	}
	put(b, "</div>\n</div>\n</section>\n")
}

type changeGroup struct {
	key, word string
	list      []pageChange
}

func changeGroups(pr *pagePrevious) []changeGroup {
	return []changeGroup{{"passing", "Newly passing", pr.NewlyPassing}, {"failing", "Newly failing", pr.NewlyFailing}, {"changed", "Changed", pr.Changed}}
}

// writeSparkline plots the scores evenly spaced (one point a scan), the
// vertical scale fitted to their range (at least 20 points, within 0–100);
// the same points are listed in text.
func writeSparkline(b *strings.Builder, hist []pagePoint) {
	const w, h, pad = 240.0, 64.0, 6.0
	lo, hi := 100, 0
	for _, p := range hist {
		lo, hi = min(lo, max(0, p.Score)), max(hi, min(100, p.Score))
	}
	if hi-lo < 20 {
		lo = max(0, (hi+lo)/2-10)
		hi = lo + 20
		if hi > 100 {
			lo, hi = 80, 100
		}
	}
	first, last := hist[0], hist[len(hist)-1]
	x := func(i int) string {
		return strconv.FormatFloat(pad+float64(i)*(w-2*pad)/float64(len(hist)-1), 'f', 1, 64)
	}
	y := func(v int) string {
		return strconv.FormatFloat(pad+float64(hi-max(lo, min(hi, v)))*(h-2*pad)/float64(hi-lo), 'f', 1, 64)
	}
	put(b, `<figure class="spark"><svg id="sparkline" viewBox="0 0 240 64" role="img" aria-labelledby="spark-cap"><polyline points="`)
	for i, p := range hist {
		if i > 0 {
			b.WriteByte(' ')
		}
		put(b, x(i), ",", y(p.Score))
	}
	put(b, `"/>`)
	for i, p := range hist {
		put(b, `<circle cx="`, x(i), `" cy="`, y(p.Score), `" r="4"><title>`, p.Timestamp.UTC().Format("2 Jan 2006 15:04 UTC"), `: `, strconv.Itoa(p.Score), ` (`, esc(p.Grade), `)</title></circle>`)
	}
	put(b, `</svg><figcaption id="spark-cap">Score over `, strconv.Itoa(len(hist)), ` scans, from `, strconv.Itoa(first.Score), ` on `, dateTime(first.Timestamp), ` to `, strconv.Itoa(last.Score), ` on `, dateTime(last.Timestamp), `.</figcaption>
<details class="hist"><summary>Every scan</summary><ol>`)
	for _, p := range hist {
		put(b, `<li>`, dateTime(p.Timestamp), `: `, strconv.Itoa(p.Score), ` (grade `, esc(p.Grade), `, level `, strconv.Itoa(p.Level), `)</li>`)
	}
	put(b, "</ol></details></figure>\n")
}

// writeChecks lists the 48 checks by level, failed and partial first, with
// the filter as links (?filter=, rendered here, so it works without
// JavaScript; app.js applies it in place). Filtered-out rows stay in the
// page, hidden.
func writeChecks(b *strings.Builder, rep *pageReport, filter string) {
	show := filterStatus(filter)
	counts := map[string]int{}
	for _, c := range rep.Checks {
		counts[statusOf(c.Status)]++
	}
	n := len(rep.Checks)
	put(b, `<section class="checks" id="checks" aria-labelledby="checks-h">
<h2 id="checks-h">Checks</h2>
<p id="progress" class="progress" role="status" aria-live="polite">`, strconv.Itoa(n), ` of `, strconv.Itoa(n), ` checks done.</p>
<nav class="filters" aria-label="Show checks">`)
	link := esc(rep.viewLink())
	for _, f := range checkFilters {
		c := n
		if f.status != "" {
			c = counts[f.status]
		}
		href := link + "#checks"
		if f.key != "all" {
			href = link + "&amp;filter=" + f.key + "#checks"
		}
		cur := ""
		if f.key == filter {
			cur = ` aria-current="page"`
		}
		mark := ""
		if f.status != "" {
			mark = `<span class="st ` + f.status + `" aria-hidden="true">` + statusMarks[f.status] + `</span> `
		}
		put(b, `<a href="`, href, `" data-filter="`, f.key, `" data-status="`, f.status, `" data-word="`, strings.ToLower(f.word), `"`, cur, `>`, mark, f.word, ` <span class="n">`, strconv.Itoa(c), `</span></a> `)
	}
	shown := n
	if show != "" {
		shown = counts[show]
	}
	put(b, `</nav>
<p class="shown" id="shown">`, shownText(shown, n, filter), `</p>
`)
	cat := catalog()
	for _, l := range rep.Levels {
		var rows []pageCheck
		visible := 0
		for _, c := range rep.Checks {
			if c.Level == l.Level.Number {
				rows = append(rows, c)
				if show == "" || statusOf(c.Status) == show {
					visible++
				}
			}
		}
		// Stable by status: the report's order (the catalog's) within each.
		for i := 1; i < len(rows); i++ {
			for j := i; j > 0 && statusRank[statusOf(rows[j].Status)] < statusRank[statusOf(rows[j-1].Status)]; j-- {
				rows[j], rows[j-1] = rows[j-1], rows[j]
			}
		}
		hidden := ""
		if visible == 0 {
			hidden = " hidden"
		}
		applicable := l.Total - l.NA
		tally := "not applicable to this site"
		if applicable > 0 {
			tally = strconv.Itoa(l.Passed) + " of " + strconv.Itoa(applicable) + " passed"
		}
		put(b, `<section class="level" id="level-`, strconv.Itoa(l.Level.Number), `"`, hidden, `>
<h3>Level `, strconv.Itoa(l.Level.Number), ` · `, esc(l.Level.Name), ` <span class="lt">`, tally, `</span></h3>
<p class="levdesc">`, esc(l.Level.Description), `</p>
<ul class="list">
`)
		for _, c := range rows {
			rule := ""
			if d := cat.check(c.ID); d != nil {
				rule = d.Rule
			}
			writeCheck(b, c, rep.URL, rule, show != "" && statusOf(c.Status) != show)
		}
		put(b, "</ul>\n</section>\n")
	}
	put(b, "</section>\n")
}

func shownText(shown, total int, filter string) string {
	if filter == "all" {
		return "Showing all " + strconv.Itoa(total) + " checks, failed and partial first in each level."
	}
	word := ""
	for _, f := range checkFilters {
		if f.key == filter {
			word = strings.ToLower(f.word)
		}
	}
	if shown == 0 {
		return "No check is " + word + "."
	}
	return "Showing the " + strconv.Itoa(shown) + " " + word + " of " + strconv.Itoa(total) + " checks."
}

// writeSignals lists the identity and commerce signals under their own
// heading: opt-in standards, reported but never counted in the score.
func writeSignals(b *strings.Builder, rep *pageReport) {
	put(b, `<section class="signals" id="signals" aria-labelledby="signals-h">
<h2 id="signals-h">Identity and commerce (not scored)</h2>
<p class="levdesc">Opt-in standards for sites that run agents or sell to them: Web Bot Auth keys, UCP, ACP, AP2 and MPP. An absent document is not applicable, never a failure, and none of these changes the score.</p>
<ul class="list" id="signal-list">
`)
	for _, sg := range rep.Signals {
		writeCheck(b, sg.pageCheck, "", "", false)
	}
	put(b, "</ul>\n</section>\n")
}

// writeCheck is one row: its verdict, name and one-line message in view;
// the recommendation, the rule, where it was found, the starter and the
// evidence on expand.
func writeCheck(b *strings.Builder, c pageCheck, site, rule string, hidden bool) {
	st := statusOf(c.Status)
	h := ""
	if hidden {
		h = " hidden"
	}
	put(b, `<li class="check `, st, `" id="check-`, esc(c.ID), `" data-status="`, st, `"`, h, `><details><summary><span class="st" aria-hidden="true">`, statusMarks[st], `</span> <span class="sw">`, statusWords[st], `</span> <span class="cid">`, esc(c.ID), `</span> <span class="cn">`, esc(c.Name), `</span> <span class="msg">`, inlineCode(c.Message), `</span></summary>
<div class="more">
`)
	if c.Recommendation != "" {
		put(b, `<p class="rec"><strong>Recommendation:</strong> `, inlineCode(c.Recommendation), `</p>
`)
	}
	if rule != "" {
		put(b, `<p class="rule"><strong>How it is judged:</strong> `, inlineCode(rule), `</p>
`)
	}
	if c.FoundAt != "" {
		put(b, `<p class="found">Found at <code>`, esc(c.FoundAt), `</code></p>
`)
	}
	if st == "fail" || st == "partial" {
		if starter := starterFor(c.ID, site); starter != "" {
			put(b, `<div class="snippet starter"><p><strong>Starter to publish:</strong></p><pre><code>`, esc(starter), `</code></pre><button type="button" class="copy">Copy</button></div>
`)
		}
	}
	if c.Details != "" {
		put(b, `<div class="snippet"><p><strong>Evidence:</strong></p><pre><code>`, esc(mdtext.Visible(detailWords(c.Details))), `</code></pre><button type="button" class="copy">Copy</button></div>
`)
	}
	put(b, "</div></details></li>\n")
}

// writeBadges offers the badge to embed elsewhere: the snippets' URLs are
// absolute, the preview's relative (app.js restyles both by replacing the
// preview's URL, a suffix of the snippets').
func writeBadges(b *strings.Builder, base, site string) {
	preview := "/api/badge?url=" + url.QueryEscape(site)
	img := base + preview
	link := reportURL(base, site)
	snips := []struct{ name, text string }{
		{"Markdown", "[![agent readiness](" + img + ")](" + link + ")"},
		{"HTML", `<a href="` + link + `"><img src="` + img + `" alt="agent readiness"></a>`},
		{"Shields endpoint", "https://img.shields.io/endpoint?url=" + url.QueryEscape(img+"&format=shields")},
	}
	put(b, `<section class="badges" aria-labelledby="badges-h">
<h2 id="badges-h">Badge</h2>
<p><img id="badge-preview" src="`, esc(preview), `" alt="agent readiness badge of `, esc(displayHost(site)), `" height="20"></p>
<p class="badge-style" hidden><label for="badge-style">Style</label> <select id="badge-style"><option value="">flat</option><option value="flat-square">flat-square</option></select></p>
`)
	for i, s := range snips {
		id := "badge-" + strconv.Itoa(i)
		put(b, `<div class="snippet"><label for="`, id, `">`, s.name, `</label><textarea id="`, id, `" readonly rows="2">`, esc(s.text), `</textarea><button type="button" class="copy">Copy</button></div>
`)
	}
	put(b, "</section>\n")
}

// fence is a markdown code fence longer than any run of backticks in s.
func fence(s string) string {
	f := "```"
	for strings.Contains(s, f) {
		f += "`"
	}
	return f
}

func reportMarkdown(base, target string, rep *pageReport, note string) []byte {
	var b strings.Builder
	if rep == nil {
		put(&b, "# Agent readiness of ", mdtext.Text(displayHost(target)), "\n\n", note, "\n\nScan: `GET ", base, "/api/scan?url=", url.QueryEscape(target), "&format=json`\n")
		return []byte(b.String())
	}
	s := rep.Score
	put(&b, "# Agent readiness of ", mdtext.Text(displayHost(rep.URL)), "\n\n")
	put(&b, "Score **", strconv.Itoa(s.Value), "/100**, grade **", s.Grade, "**, level **", strconv.Itoa(rep.CurrentLevel), " (", s.LevelName, ")**. ")
	put(&b, strconv.Itoa(s.Passed), " passed, ", strconv.Itoa(s.Partial), " partial, ", strconv.Itoa(s.Failed), " failed, ", strconv.Itoa(s.NA), " not applicable, of ", strconv.Itoa(s.Total), " checks. Scanned ", rep.Timestamp.UTC().Format(time.RFC3339), ". Permanent link: ", permalink(base, target, rep), "\n\n")
	put(&b, "Report: ", reportURL(base, rep.URL), " · JSON: ", base, "/api/report?url=", url.QueryEscape(rep.URL), "\n\n")
	if p := rep.Profile; p != nil {
		put(&b, "Judged as ", kindOf(p.ID), " (", mdtext.Text(sourceWords(p)), "). As ", p.ID, ": ", strconv.Itoa(p.Score.Value), " (", p.Grade, ").\n\n")
	}
	if p := rep.Plan; p != nil {
		put(&b, "## Fix next\n\n")
		if len(p.Steps) == 0 {
			put(&b, "Nothing to fix: every applicable check passes.\n\n")
		} else if p.TargetLevel > 0 {
			put(&b, "Level ", levelLabel(rep, p.TargetLevel), " is ", plural(p.PassesNeeded, "pass", "passes"), " away.\n\n")
		}
		for i, st := range p.Steps {
			if i == fixNextSteps {
				put(&b, "And ", plural(len(p.Steps)-fixNextSteps, "more fix", "more fixes"), " among the failed and partial checks below.\n\n")
				break
			}
			toward := "level " + strconv.Itoa(st.Level) + " check"
			if st.Blocking && p.TargetLevel > 0 {
				toward = "counts toward level " + levelLabel(rep, p.TargetLevel)
			}
			put(&b, strconv.Itoa(i+1), ". **", st.ID, " ", mdtext.Text(st.Name), "** (", statusWords[statusOf(st.Status)], ", ", st.Effort, " effort, ", toward, "): ", mdtext.Message(st.Fix), "\n")
			if st.Snippet != "" {
				f := fence(st.Snippet)
				put(&b, "\n   ", f, "\n")
				for _, line := range strings.Split(strings.TrimRight(st.Snippet, "\n"), "\n") {
					put(&b, "   ", mdtext.Visible(line), "\n")
				}
				put(&b, "   ", f, "\n")
			}
			put(&b, "\n")
		}
	}
	interactionsMarkdown(&b, rep)
	profileMarkdown(&b, rep)
	if pr := rep.Previous; pr != nil || len(rep.History) >= 2 {
		put(&b, "## Since the last scan\n\n")
		if pr != nil {
			put(&b, "The previous scan, ", pr.Timestamp.UTC().Format(time.RFC3339), ", scored ", strconv.Itoa(pr.Score), " (grade ", pr.Grade, ", level ", strconv.Itoa(pr.Level), "); this one ", strconv.Itoa(s.Value), " (grade ", s.Grade, ", level ", strconv.Itoa(rep.CurrentLevel), ").\n\n")
			for _, g := range changeGroups(pr) {
				for _, c := range g.list {
					put(&b, "- ", g.word, ": **", c.ID, " ", mdtext.Text(c.Name), "**, ", statusWords[statusOf(c.From)], " → ", statusWords[statusOf(c.To)], ". ", mdtext.Message(c.Message), "\n")
				}
			}
			if len(pr.NewlyPassing)+len(pr.NewlyFailing)+len(pr.Changed) == 0 {
				put(&b, "No check changed.\n")
			}
			put(&b, "\n")
		}
		if len(rep.History) >= 2 {
			put(&b, "Score over ", strconv.Itoa(len(rep.History)), " scans, oldest first:\n\n")
			for _, p := range rep.History {
				put(&b, "- ", p.Timestamp.UTC().Format(time.RFC3339), ": ", strconv.Itoa(p.Score), " (grade ", p.Grade, ", level ", strconv.Itoa(p.Level), ")\n")
			}
			put(&b, "\n")
		}
	}
	for _, l := range rep.Levels {
		applicable := l.Total - l.NA
		state := "not reached, "
		switch {
		case l.Level.Number > 3:
			state = "scored apart, "
		case l.Level.Number <= rep.CurrentLevel:
			state = "reached, "
		}
		tally := strconv.Itoa(l.Passed) + " of " + strconv.Itoa(applicable) + " passed"
		if applicable <= 0 {
			state, tally = "", "not applicable to this site"
		}
		put(&b, "## Level ", strconv.Itoa(l.Level.Number), " · ", l.Level.Name, " (", state, tally, ")\n\n")
		for _, c := range rep.Checks {
			if c.Level != l.Level.Number {
				continue
			}
			checkMarkdown(&b, c)
		}
		put(&b, "\n")
	}
	readMarkdown(&b, rep)
	if len(rep.Signals) > 0 {
		put(&b, "## Identity and commerce (not scored)\n\n")
		for _, sg := range rep.Signals {
			put(&b, "- **", mdtext.Text(sg.Name), "** (", sg.Group, "): ", statusWords[statusOf(sg.Status)], ". ", mdtext.Message(sg.Message))
			if sg.Recommendation != "" && sg.Status != "pass" {
				put(&b, " Recommendation: ", mdtext.Message(sg.Recommendation))
			}
			put(&b, "\n")
		}
		put(&b, "\n")
	}
	return []byte(b.String())
}

// checkMarkdown is a check's line in the markdown twin: its verdict and
// message, and its recommendation unless it passed.
func checkMarkdown(b *strings.Builder, c pageCheck) {
	put(b, "- **", c.ID, " ", mdtext.Text(c.Name), "**: ", statusWords[statusOf(c.Status)], ". ", mdtext.Message(c.Message))
	if c.Recommendation != "" && c.Status != "pass" {
		put(b, " Recommendation: ", mdtext.Message(c.Recommendation))
	}
	put(b, "\n")
}

// maxShownAddress bounds how much of an address the page shows: the h1 and
// the "Scan … now" button of a note echo the url= asked for, which may be
// thousands of characters (the form's field keeps it whole).
const maxShownAddress = 100

// clipAddress is s cut to maxShownAddress characters, with "…" when cut.
func clipAddress(s string) string {
	n := 0
	for i := range s {
		if n == maxShownAddress {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
