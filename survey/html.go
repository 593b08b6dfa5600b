package survey

import (
	"fmt"
	"html"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/engine/score"
)

// The report's colours: one per status, each with a contrast of at least
// 3:1 against white (WCAG 1.4.11 for graphics), and named in every legend
// and table, so colour is never the only way to tell them apart. They are
// the service's verdict colours (--pass, --partial, --fail, --na of
// edge/site/app.css).
var statusColours = []struct {
	status report.Status
	label  string
	colour string
}{
	{report.Pass, "pass", "#0d6b2f"},
	{report.Partial, "partial", "#7a4d00"},
	{report.Fail, "fail", "#b3261e"},
	{report.NA, "not applicable", "#52525c"},
}

// columnColour fills the column charts: the service's link blue.
const columnColour = "#0b57d0"

// reportCSS gives the report the look of the service's pages. The survey
// cannot import edge (and the report is one self-contained file), so the
// palette, type scale and spacing of edge/site/app.css are copied here:
// keep the two in step when the service's look changes.
const reportCSS = `:root{--t-1:.8rem;--t0:1rem;--t1:1.25rem;--t2:1.563rem;--t3:1.953rem;
--s1:.25rem;--s2:.5rem;--s3:.75rem;--s4:1rem;--s5:1.5rem;--s6:2rem;--s7:3rem;--r:10px;
--bg:#f6f6f9;--card:#fff;--fg:#1b1b1f;--muted:#52525c;--line:#d5d5de;--panel:#efeff4;--link:#0b57d0;--focus:#b3261e;
--pass:#0d6b2f;--partial:#7a4d00;--fail:#b3261e;--na:#52525c;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#121216;--card:#1b1b22;--fg:#ececf1;--muted:#b4b4c0;--line:#3b3b46;--panel:#24242d;--link:#8ab4f8;--focus:#ffb4ab;
--pass:#6dd58c;--partial:#f2c15c;--fail:#ffb4ab;--na:#b4b4c0}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{font:var(--t0)/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--fg);max-width:72rem;margin:0 auto;padding:0 var(--s5) var(--s5)}
a{color:var(--link)}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
h1,h2,h3{line-height:1.2;margin:0}
h1{font-size:var(--t3);letter-spacing:-.01em;margin:var(--s2) 0 var(--s3)}
h2{font-size:var(--t1);margin:var(--s6) 0 var(--s3);padding-bottom:var(--s1);border-bottom:1px solid var(--line)}
h3{font-size:var(--t0);margin:var(--s5) 0 var(--s1)}
p{margin:var(--s2) 0}
code{font:var(--t-1)/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--panel);padding:0 .2em;border-radius:3px;overflow-wrap:anywhere}
.top{display:flex;align-items:center;gap:var(--s3) var(--s5);padding:var(--s3) 0;border-bottom:1px solid var(--line);margin-bottom:var(--s4)}
.brand{font-weight:700;font-size:var(--t1)}
.kicker{color:var(--muted);font-size:var(--t-1);font-weight:600;letter-spacing:.02em;text-transform:uppercase}
.lead,.muted,figcaption{color:var(--muted)}
.note{padding:var(--s3) var(--s4);border-left:4px solid var(--fail);background:var(--card);border-radius:0 var(--r) var(--r) 0}
.toc ul{display:flex;flex-wrap:wrap;gap:var(--s1) var(--s4);list-style:none;padding:0;margin:var(--s3) 0}
section{background:var(--card);border:1px solid var(--line);border-radius:var(--r);padding:var(--s1) var(--s5) var(--s4);margin-top:var(--s5)}
section>h2{margin-top:var(--s4)}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;margin:var(--s3) 0;font-variant-numeric:tabular-nums}
caption{text-align:left;font-weight:600;padding:var(--s1) 0}
th,td{text-align:right;padding:var(--s1) var(--s3);border-bottom:1px solid var(--line);vertical-align:baseline}
td{white-space:nowrap}
th[scope=row],th.text,td.text{text-align:left}
th[scope=row]{font-weight:600;overflow-wrap:anywhere}
thead th{background:var(--panel);border-bottom:2px solid var(--line)}
tr.sub th{padding-left:var(--s6);font-weight:400;color:var(--muted)}
.pass{color:var(--pass)}.fail{color:var(--fail)}.partial{color:var(--partial)}.na{color:var(--na)}
figure{margin:var(--s4) 0;overflow-x:auto}
figure svg{display:block;width:100%;min-width:40rem;height:auto}
svg text{font:12px system-ui,sans-serif;fill:var(--fg)}
.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:var(--s4)}.legend span{display:inline-block;width:.9em;height:.9em;margin-right:.35em;vertical-align:-.1em;border-radius:2px}
dl{display:grid;grid-template-columns:max-content 1fr;gap:var(--s1) var(--s4)}dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
.orders p{margin:var(--s3) 0}
.order{display:none;scroll-margin-top:6rem}
.order th[scope=row]{overflow-wrap:normal}
.order:target,#by-score{display:block}
.order:target~#by-score{display:none}
footer{margin-top:var(--s7);padding-top:var(--s3);color:var(--muted);border-top:1px solid var(--line);font-size:var(--t-1)}
@media (max-width:40rem){body{padding:0 var(--s3) var(--s4)}h1{font-size:var(--t2)}section{padding:var(--s1) var(--s3) var(--s3)}
th,td{padding:var(--s1) var(--s2)}.order table{font-size:var(--t-1)}tr.sub th{padding-left:var(--s4)}dl{grid-template-columns:1fr}dd{margin-bottom:var(--s2)}}`

// WriteHTML renders the adoption report as one self-contained page: inline
// CSS and SVG charts, no script, nothing fetched. Every chart has a title,
// a description and a table with the same numbers beside it.
func WriteHTML(w io.Writer, ad *Adoption) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	listName := esc(ad.Methods.List.Name)
	p("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	p("<title>Agent readiness survey of %s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n", listName, reportCSS)
	p("<header class=\"top\"><span class=\"brand\">agentready</span><span class=\"kicker\">Survey report</span></header>\n<main>\n")
	p("<h1>Agent readiness of %s sites</h1>\n", num(ad.Listed))
	p("<p class=\"lead\">The sites of <code>%s</code>%s, scanned with agentready %s: %s answered and were judged on the 48 checks and 5 signals, %s could not be reached.</p>\n",
		listName, esc(shardNote(ad.Methods.Settings)), esc(versionOf(ad.Methods)), num(ad.Sites), num(ad.Unreachable))
	if hint := ad.RefusalHint(); hint != "" {
		p("<p class=\"note\" role=\"note\"><strong>Refused by the address policy:</strong> %s.</p>\n", esc(hint))
	}
	p("<nav class=\"toc\" aria-label=\"Contents\">\n<ul>\n<li><a href=\"#sites\">Sites</a></li>\n<li><a href=\"#every-site\">Every site</a></li>\n<li><a href=\"#levels\">Levels reached</a></li>\n<li><a href=\"#scores\">Scores</a></li>\n<li><a href=\"#checks\">Checks</a></li>\n<li><a href=\"#signals\">Identity and commerce signals</a></li>\n<li><a href=\"#ranks\">By rank</a></li>\n<li><a href=\"#methods\">Methods</a></li>\n</ul>\n</nav>\n")

	// Sites.
	p("<section id=\"sites\">\n<h2>Sites</h2>\n<table>\n<caption>What the survey did with each line of the list</caption>\n<thead><tr><th scope=\"col\" class=\"text\">Sites</th><th scope=\"col\">Count</th></tr></thead>\n<tbody>\n")
	row := func(class, label string, n int) {
		p("<tr%s><th scope=\"row\">%s</th><td>%s</td></tr>\n", class, label, num(n))
	}
	row("", "Distinct sites listed", ad.Listed)
	row("", "Scanned and judged", ad.Sites)
	row("", "Unreachable", ad.Unreachable)
	for _, k := range ad.ErrorKeys() {
		row(" class=\"sub\"", esc(k), ad.Errors[k])
	}
	row("", "Duplicate lines (skipped)", ad.Skipped.Duplicates)
	row("", "Invalid lines (skipped)", ad.Skipped.Invalid)
	p("</tbody>\n</table>\n</section>\n")

	siteTables(&b, ad)

	// Levels.
	p("<section id=\"levels\">\n<h2>Levels reached</h2>\n")
	levelLabels := make([]string, len(ad.Levels))
	for i := range ad.Levels {
		levelLabels[i] = fmt.Sprintf("%d %s", i, report.LevelName(i))
	}
	columnChart(&b, "levels-chart", "Sites by level reached", "The number of judged sites at each current level, 0 (Not Ready) to 3 (Optimized); the table below gives the same numbers.", levelLabels, ad.Levels)
	countTable(&b, "Sites by level reached", "Level", levelLabels, ad.Levels, ad.Sites)
	p("</section>\n")

	// Scores.
	p("<section id=\"scores\">\n<h2>Scores</h2>\n")
	scoreLabels := make([]string, len(ad.Scores))
	for i := range ad.Scores {
		hi := i*10 + 9
		if i == len(ad.Scores)-1 {
			hi = 100
		}
		scoreLabels[i] = fmt.Sprintf("%d–%d", i*10, hi)
	}
	columnChart(&b, "scores-chart", "Score histogram", "The number of judged sites in each band of ten points of the 0–100 score; the table below gives the same numbers.", scoreLabels, ad.Scores)
	countTable(&b, "Sites by score band", "Score", scoreLabels, ad.Scores, ad.Sites)
	p("</section>\n")

	// Checks, by level.
	p("<section id=\"checks\">\n<h2>Checks</h2>\n<p>Among the %s judged sites, how many pass, are partial, fail, or are not applicable, check by check.</p>\n", num(ad.Sites))
	legend(&b)
	byLevel, other := checksByLevel(ad.Checks)
	for lv := 1; lv <= 4; lv++ {
		ids := byLevel[lv]
		if len(ids) == 0 {
			continue
		}
		name := fmt.Sprintf("Level %d · %s", lv, report.LevelName(lv))
		p("<h3>%s</h3>\n", esc(name))
		stackedChart(&b, fmt.Sprintf("level%d-chart", lv), name+": adoption of each check", ad.Checks, ids, ad.Sites)
		statusTable(&b, name+": sites by status of each check", ad.Checks, ids, ad.Sites)
	}
	if len(other) > 0 {
		p("<h3>Checks this version does not know</h3>\n")
		statusTable(&b, "Checks not in this version's catalog", ad.Checks, other, ad.Sites)
	}
	p("</section>\n")

	// Signals.
	p("<section id=\"signals\">\n<h2>Identity and commerce signals (not scored)</h2>\n<p>Signals follow opt-in standards: a site that publishes nothing is not applicable, never a failure.</p>\n")
	sids := ad.Signals.IDs()
	stackedChart(&b, "signals-chart", "Adoption of each identity and commerce signal", ad.Signals, sids, ad.Sites)
	statusTable(&b, "Sites by status of each signal", ad.Signals, sids, ad.Sites)
	p("</section>\n")

	// Profiles and the read suite.
	p("<section id=\"profiles\">\n<h2>Kinds of site</h2>\n<p>The profile each scan detected: which checks apply to a site depends on its kind.</p>\n")
	if len(ad.Profiles) == 0 {
		p("<p>No scan of this survey detected a profile (they were made by a version without profiles).</p>\n")
	} else {
		p("<table>\n<caption>Sites by detected profile</caption>\n<thead><tr><th scope=\"col\" class=\"text\">Profile</th><th scope=\"col\">Sites</th><th scope=\"col\">Share</th></tr></thead>\n<tbody>\n")
		for _, id := range profileIDs(ad.Profiles) {
			p("<tr><th scope=\"row\">%s</th><td>%s</td><td>%s</td></tr>\n", esc(id), num(ad.Profiles[id]), pct(ad.Profiles[id], ad.Sites))
		}
		p("</tbody>\n</table>\n")
	}
	p("</section>\n")
	p("<section id=\"read\">\n<h2>Read suite (not scored)</h2>\n")
	if rn := readSites(ad.Read); rn == 0 {
		p("<p>No scan of this survey ran the read suite.</p>\n")
	} else {
		p("<p>Each site's sample of pages, read one by one as an agent would: %s sites.</p>\n", num(rn))
		rids := ad.Read.IDs()
		stackedChart(&b, "read-chart", "Adoption of each read check", ad.Read, rids, rn)
		statusTable(&b, "Sites by status of each read check", ad.Read, rids, rn)
	}
	p("</section>\n")

	rankSection(&b, ad)
	methodsSection(&b, ad.Methods, listName)
	p("</main>\n<footer>Made by <code>agentready survey</code>; every site's checks and signals are in <code>%s</code> beside this page.</footer>\n</body>\n</html>\n", ResultsFile)
	_, err := io.WriteString(w, b.String())
	return err
}

// rankSection is the report's pass rates by rank bucket.
func rankSection(b *strings.Builder, ad *Adoption) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("<section id=\"ranks\">\n<h2>By rank</h2>\n")
	buckets := distinctBuckets(ad)
	switch {
	case len(ad.Buckets) == 0:
		p("<p>The list ranks no site, so there are no rank buckets.</p>\n")
	case len(buckets) == 0:
		p("<p>Every site of the list is among the %s: that bucket would repeat the figures above, so there is no table by rank.</p>\n", esc(ad.Buckets[len(ad.Buckets)-1].Name))
	default:
		p("<p>The share of judged sites that pass each check among the most popular sites (buckets include the ones before them).</p>\n")
		p("<div class=\"scroll\">\n<table>\n<caption>Pass rate of each check by rank bucket</caption>\n<thead><tr><th scope=\"col\" class=\"text\">Check</th><th scope=\"col\">All (%s)</th>", num(ad.Sites))
		for _, bk := range buckets {
			p("<th scope=\"col\">%s (%s)</th>", esc(bk.Name), num(bk.Sites))
		}
		p("</tr></thead>\n<tbody>\n")
		for _, id := range append(ad.Checks.IDs(), ad.Signals.IDs()...) {
			t := ad.Checks
			if _, ok := t[id]; !ok {
				t = ad.Signals
			}
			p("<tr><th scope=\"row\">%s</th><td>%s</td>", esc(label(id)), pct(t[id].Pass, ad.Sites))
			for _, bk := range buckets {
				p("<td>%s</td>", pct(bk.passes(id), bk.Sites))
			}
			p("</tr>\n")
		}
		p("</tbody>\n</table>\n</div>\n")
		if ad.Unranked > 0 {
			p("<p>%s sites of the list carry no rank and are counted in “All” only.</p>\n", num(ad.Unranked))
		}
	}
	p("</section>\n")

}

// methodsSection is the report's account of how the survey was made; the
// page's footer follows it.
func methodsSection(b *strings.Builder, m Methods, listName string) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("<section id=\"methods\">\n<h2>Methods</h2>\n<dl>\n")
	dl := func(k, v string) { p("<dt>%s</dt><dd>%s</dd>\n", k, v) }
	dl("Report made", esc(m.Date))
	dl("Surveyed", esc(m.Started.Format("2006-01-02 15:04 MST"))+finishedNote(m))
	dl("agentready", esc(versionOf(m)))
	dl("List", fmt.Sprintf("<code>%s</code>, %s lines, format %s", listName, num(m.List.Lines), esc(string(m.List.Format))))
	dl("List SHA-256", "<code>"+esc(m.List.SHA256)+"</code>")
	if m.Settings.Queue != "" {
		dl("Queue", esc(queueNote(m)))
	} else {
		dl("Shard", esc(m.Settings.Shard))
	}
	dl("Concurrency", fmt.Sprintf("%d sites at once, one per registrable domain; %d requests at once per host", m.Settings.Concurrency, m.Settings.PerHost))
	dl("Timeouts", fmt.Sprintf("%s per site, %s per request", esc(m.Settings.Timeout), esc(m.Settings.RequestTimeout)))
	dl("User-Agent", "<code>"+esc(m.Settings.UserAgent)+"</code>")
	addr := "public addresses on ports 80 and 443 only"
	if m.Settings.AllowPrivate {
		addr = "private and loopback addresses and any port allowed"
	}
	if m.Settings.Allow != "" {
		addr += "; also admitted: " + esc(m.Settings.Allow)
	}
	dl("Addresses", addr)
	dl("Runs", fmt.Sprintf("%d (a survey resumes where it stopped; each site is counted once)", m.Runs))
	if len(m.Shards) > 0 && m.Settings.Queue == "" {
		dl("Shards merged", fmt.Sprintf("%d, each surveyed on its own and added up", len(m.Shards)))
	}
	p("</dl>\n</section>\n")
}

func esc(s string) string { return html.EscapeString(s) }

func versionOf(m Methods) string {
	if m.Version == "" {
		return "(version unknown)"
	}
	return m.Version
}

func num(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

func pct(n, of int) string {
	if of == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(n)/float64(of))
}

// shardNote says which part of the list a report counts, in words (not
// escaped).
func shardNote(s Settings) string {
	switch {
	case s.Queue != "" && s.Worker != "":
		return " (worker " + s.Worker + " of a queue)"
	case s.Queue != "":
		return " (" + s.Shard + " from a queue)"
	case s.Shard == "" || s.Shard == "0/1":
		return ""
	case strings.HasSuffix(s.Shard, " merged"):
		return " (" + s.Shard + ")"
	}
	return " (shard " + s.Shard + ")"
}

// queueNote describes, for the methods, how a queue's workers shared the
// list (not escaped).
func queueNote(m Methods) string {
	s := fmt.Sprintf("the survey %s in Redis, its sites pulled by %d workers", m.Settings.Queue, max(len(m.Shards), 1))
	if m.Rescans > 0 {
		s += fmt.Sprintf("; %d sites were scanned twice (a worker stopped between writing a result and acknowledging it) and are counted once, from the earlier result", m.Rescans)
	}
	return s
}

func finishedNote(m Methods) string {
	if m.Finished == nil {
		return ""
	}
	return " to " + esc(m.Finished.Format("2006-01-02 15:04 MST"))
}

// label is "1.1 llms.txt" for a check, "Web Bot Auth key directory
// (webbotauth)" for a signal, the bare id otherwise.
func label(id string) string {
	if c, ok := checks.ByID(id); ok {
		return id + " " + c.Name
	}
	if s, ok := checks.SignalByID(id); ok {
		return s.Name + " (" + id + ")"
	}
	if c, ok := checks.ReadByID(id); ok {
		return id + " " + c.Name
	}
	return id
}

// profileIDs are the profiles of m in report order, then any other, sorted.
func profileIDs(m map[string]int) []string {
	var ids []string
	for _, p := range report.Profiles {
		if _, ok := m[p]; ok {
			ids = append(ids, p)
		}
	}
	var other []string
	for p := range m {
		if !slices.Contains(report.Profiles, p) {
			other = append(other, p)
		}
	}
	sort.Strings(other)
	return append(ids, other...)
}

// readSites is how many sites the read suite ran on: the most any read
// check counted.
func readSites(t Tally) int {
	n := 0
	for _, c := range t {
		n = max(n, c.Total())
	}
	return n
}

func legend(b *strings.Builder) {
	b.WriteString("<ul class=\"legend\" aria-label=\"Chart colours\">")
	for _, s := range statusColours {
		fmt.Fprintf(b, "<li><span style=\"background:%s\"></span>%s</li>", s.colour, s.label)
	}
	b.WriteString("</ul>\n")
}

// stackedChart draws one horizontal bar per id, split by status.
func stackedChart(b *strings.Builder, id, title string, t Tally, ids []string, sites int) {
	const labelW, barW, rowH, top = 300, 400, 22, 4
	h := top + rowH*len(ids) + 4
	fmt.Fprintf(b, "<figure>\n<svg viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" aria-labelledby=\"%s-t %s-d\">\n<title id=\"%s-t\">%s</title>\n<desc id=\"%s-d\">One bar per row, split into the shares that pass, are partial, fail and are not applicable; the table below gives the same numbers.</desc>\n",
		labelW+barW+60, h, labelW+barW+60, h, id, id, id, esc(title), id)
	for i, cid := range ids {
		y := top + i*rowH
		c := t[cid]
		if c == nil {
			c = &Counts{}
		}
		fmt.Fprintf(b, "<g><title>%s: %d pass, %d partial, %d fail, %d not applicable</title>", esc(label(cid)), c.Pass, c.Partial, c.Fail, c.NA)
		fmt.Fprintf(b, "<text x=\"0\" y=\"%d\">%s</text>", y+15, esc(clipLabel(label(cid), 44)))
		x := float64(labelW)
		for _, sc := range statusColours {
			n := map[report.Status]int{report.Pass: c.Pass, report.Partial: c.Partial, report.Fail: c.Fail, report.NA: c.NA}[sc.status]
			if n == 0 || sites == 0 {
				continue
			}
			wd := float64(barW) * float64(n) / float64(sites)
			fmt.Fprintf(b, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"%s\"/>", x, y+3, wd, sc.colour)
			x += wd
		}
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\">%s</text></g>\n", labelW+barW+6, y+15, strings.TrimSuffix(pct(c.Pass, sites), " %")+"%")
	}
	b.WriteString("</svg>\n<figcaption>Bars: share of judged sites by status; the number at the right is the share that passes.</figcaption>\n</figure>\n")
}

func clipLabel(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// statusTable is the text equivalent of a stacked chart.
func statusTable(b *strings.Builder, caption string, t Tally, ids []string, sites int) {
	fmt.Fprintf(b, "<table>\n<caption>%s</caption>\n<thead><tr><th scope=\"col\" class=\"text\">Check</th><th scope=\"col\">Pass</th><th scope=\"col\">Partial</th><th scope=\"col\">Fail</th><th scope=\"col\">Not applicable</th><th scope=\"col\">Pass rate</th></tr></thead>\n<tbody>\n", esc(caption))
	for _, id := range ids {
		c := t[id]
		if c == nil {
			c = &Counts{}
		}
		fmt.Fprintf(b, "<tr><th scope=\"row\">%s</th><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", esc(label(id)), num(c.Pass), num(c.Partial), num(c.Fail), num(c.NA), pct(c.Pass, sites))
	}
	b.WriteString("</tbody>\n</table>\n")
}

// columnChart draws one vertical bar per label, across the chart's whole
// width (chartW, which CSS scales to the page's).
func columnChart(b *strings.Builder, id, title, desc string, labels []string, values []int) {
	const chartW, chartH, base, left = 920, 160, 190, 8
	maxV := 1
	for _, v := range values {
		maxV = max(maxV, v)
	}
	colW := (chartW - left - 8) / max(len(values), 1)
	w := chartW
	fmt.Fprintf(b, "<figure>\n<svg viewBox=\"0 0 %d 230\" width=\"%d\" height=\"230\" role=\"img\" aria-labelledby=\"%s-t %s-d\">\n<title id=\"%s-t\">%s</title>\n<desc id=\"%s-d\">%s</desc>\n", w, w, id, id, id, esc(title), id, esc(desc))
	for i, v := range values {
		x := left + i*colW
		h := float64(chartH) * float64(v) / float64(maxV)
		fmt.Fprintf(b, "<g><title>%s: %d</title><rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\"/>", esc(labels[i]), v, x+colW/6, float64(base)-h, colW-colW/3, h, columnColour)
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\">%s</text>", x+colW/2, float64(base)-h-4, num(v))
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text></g>\n", x+colW/2, base+16, esc(clipLabel(labels[i], colW/7)))
	}
	fmt.Fprintf(b, "</svg>\n<figcaption>%s</figcaption>\n</figure>\n", esc(title))
}

// countTable is the text equivalent of a column chart.
func countTable(b *strings.Builder, caption, what string, labels []string, values []int, of int) {
	fmt.Fprintf(b, "<table>\n<caption>%s</caption>\n<thead><tr><th scope=\"col\" class=\"text\">%s</th><th scope=\"col\">Sites</th><th scope=\"col\">Share</th></tr></thead>\n<tbody>\n", esc(caption), esc(what))
	for i, v := range values {
		fmt.Fprintf(b, "<tr><th scope=\"row\">%s</th><td>%s</td><td>%s</td></tr>\n", esc(labels[i]), num(v), pct(v, of))
	}
	b.WriteString("</tbody>\n</table>\n")
}

// distinctBuckets are the rank buckets that are not every site of the
// list: the bucket that holds every site would repeat the "All" column.
func distinctBuckets(ad *Adoption) []Bucket {
	var out []Bucket
	for _, bk := range ad.Buckets {
		if bk.Sites == ad.Sites && bk.Unreachable == ad.Unreachable {
			continue
		}
		out = append(out, bk)
	}
	return out
}

// passes is how many of the bucket's judged sites pass the check or signal.
func (bk Bucket) passes(id string) int {
	for _, t := range []Tally{bk.Checks, bk.Signals} {
		if c := t[id]; c != nil {
			return c.Pass
		}
	}
	return 0
}

// siteName is a site as the table shows it: its URL without the scheme
// and the root path.
func siteName(u string) string {
	u = strings.TrimPrefix(strings.TrimPrefix(u, "https://"), "http://")
	return strings.TrimSuffix(u, "/")
}

// breakable escapes a site's name and lets a narrow screen wrap it after
// its dots and slashes (never inside a label).
func breakable(name string) string {
	s := esc(name)
	s = strings.ReplaceAll(s, ".", ".<wbr>")
	return strings.ReplaceAll(s, "/", "/<wbr>")
}

// siteStatus is the table's word for what became of a site.
func siteStatus(r SiteRow) (class, text string) {
	if r.Judged() {
		return "pass", "judged"
	}
	code, cause, _ := strings.Cut(r.Error, "/")
	switch {
	case Refused(cause):
		return "fail", "refused: not a public address"
	case cause != "":
		return "fail", "unreachable: " + strings.ReplaceAll(cause, "_", " ")
	case code == "site_unreachable":
		return "fail", "unreachable"
	}
	return "fail", "failed: " + strings.ReplaceAll(code, "_", " ")
}

// siteTables is the table of every site (up to MaxRows), in three orders:
// by score (shown), by name and by rank. The page has no script: each
// order is a table of its own, and the links switch between them with
// :target (the one targeted shows, the others hide).
func siteTables(b *strings.Builder, ad *Adoption) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("<section id=\"every-site\" class=\"orders\">\n<h2>Every site</h2>\n")
	rows := ad.Rows
	if len(rows) == 0 {
		p("<p>The list names no site.</p>\n</section>\n")
		return
	}
	if len(rows) < ad.Listed {
		p("<p>The first %s sites of the list, of %s; <code>%s</code> holds every site's result.</p>\n", num(len(rows)), num(ad.Listed), ResultsFile)
	}
	ranked := false
	for _, r := range rows {
		ranked = ranked || r.Rank > 0
	}
	orders := []struct{ id, name string }{{"by-score", "by score"}, {"by-name", "by name"}}
	if ranked {
		orders = append(orders, struct{ id, name string }{"by-rank", "by rank"})
	}
	p("<p>Order: ")
	for i, o := range orders {
		if i > 0 {
			p(" · ")
		}
		p("<a href=\"#%s\">%s</a>", o.id, o.name)
	}
	p(" (by score unless another is chosen)</p>\n")
	// by-score last: the CSS hides it when another order is targeted
	// (a later sibling of the target).
	for i := len(orders) - 1; i >= 0; i-- {
		o := orders[i]
		sorted := append([]SiteRow(nil), rows...)
		switch o.id {
		case "by-score":
			sort.SliceStable(sorted, func(i, j int) bool {
				a, b := sorted[i], sorted[j]
				if a.Score != b.Score {
					return a.Score > b.Score
				}
				return siteName(a.URL) < siteName(b.URL)
			})
		case "by-name":
			sort.SliceStable(sorted, func(i, j int) bool { return siteName(sorted[i].URL) < siteName(sorted[j].URL) })
		case "by-rank":
			sort.SliceStable(sorted, func(i, j int) bool {
				a, b := sorted[i], sorted[j]
				if (a.Rank > 0) != (b.Rank > 0) {
					return a.Rank > 0
				}
				return a.Rank < b.Rank
			})
		}
		p("<div id=\"%s\" class=\"order scroll\">\n<table>\n<caption>Sites %s</caption>\n<thead><tr>", o.id, o.name)
		if ranked {
			p("<th scope=\"col\">Rank</th>")
		}
		p("<th scope=\"col\" class=\"text\">Site</th><th scope=\"col\">Score</th><th scope=\"col\" class=\"grade\">Grade</th><th scope=\"col\">Level</th><th scope=\"col\" class=\"text\">Status</th></tr></thead>\n<tbody>\n")
		for _, r := range sorted {
			p("<tr>")
			if ranked {
				if r.Rank > 0 {
					p("<td>%s</td>", num(r.Rank))
				} else {
					p("<td>–</td>")
				}
			}
			class, status := siteStatus(r)
			if r.Judged() {
				p("<th scope=\"row\">%s</th><td>%d</td><td class=\"grade\">%s</td><td>%d</td>", breakable(siteName(r.URL)), r.Score, score.Grade(r.Score), r.Level)
			} else {
				p("<th scope=\"row\">%s</th><td>–</td><td class=\"grade\">–</td><td>–</td>", breakable(siteName(r.URL)))
			}
			p("<td class=\"text %s\">%s</td></tr>\n", class, esc(status))
		}
		p("</tbody>\n</table>\n</div>\n")
	}
	p("</section>\n")
}
