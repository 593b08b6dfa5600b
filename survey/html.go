package survey

import (
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/report"
)

// The report's colours: one per status, each with a contrast of at least
// 3:1 against white (WCAG 1.4.11 for graphics), and named in every legend
// and table, so colour is never the only way to tell them apart.
var statusColours = []struct {
	status report.Status
	label  string
	colour string
}{
	{report.Pass, "pass", "#1a7f37"},
	{report.Partial, "partial", "#9a6700"},
	{report.Fail, "fail", "#cf222e"},
	{report.NA, "not applicable", "#6e7781"},
}

const reportCSS = `body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#fff;margin:0}
main{max-width:60rem;margin:0 auto;padding:1rem 1.25rem 3rem}
h1{font-size:1.75rem;margin:.5rem 0}h2{margin-top:2.5rem;border-bottom:1px solid #d0d7de;padding-bottom:.25rem}
table{border-collapse:collapse;margin:1rem 0;font-variant-numeric:tabular-nums;min-width:50%}
caption{text-align:left;font-weight:600;padding:.25rem 0}
th,td{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:right;vertical-align:top}
th[scope=row],th.text{text-align:left}thead th{background:#f6f8fa}
figure{margin:1rem 0}svg{max-width:100%;height:auto}svg text{font:12px system-ui,sans-serif;fill:#1f2328}
.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:1rem}.legend span{display:inline-block;width:.9em;height:.9em;margin-right:.35em;vertical-align:-.1em;border-radius:2px}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
nav ul{padding-left:1.2rem}code{font-size:.9em}
@media (prefers-color-scheme:dark){body{background:#0d1117;color:#e6edf3}svg text{fill:#e6edf3}thead th{background:#161b22}th,td{border-color:#30363d}h2{border-color:#30363d}}`

// WriteHTML renders the adoption report as one self-contained page: inline
// CSS and SVG charts, no script, nothing fetched. Every chart has a title,
// a description and a table with the same numbers beside it.
func WriteHTML(w io.Writer, ad *Adoption) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	listName := esc(ad.Methods.List.Name)
	p("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	p("<title>Agent readiness survey of %s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n<main>\n", listName, reportCSS)
	p("<h1>Agent readiness of %s sites</h1>\n", num(ad.Listed))
	p("<p>The sites of <code>%s</code>%s, scanned with agentready %s: %s answered and were judged on the 48 checks and 5 signals, %s could not be reached.</p>\n",
		listName, esc(shardNote(ad.Methods.Settings)), esc(versionOf(ad.Methods)), num(ad.Sites), num(ad.Unreachable))
	p("<nav aria-label=\"Contents\">\n<ul>\n<li><a href=\"#sites\">Sites</a></li>\n<li><a href=\"#levels\">Levels reached</a></li>\n<li><a href=\"#scores\">Scores</a></li>\n<li><a href=\"#checks\">Checks</a></li>\n<li><a href=\"#signals\">Identity and commerce signals</a></li>\n<li><a href=\"#ranks\">By rank</a></li>\n<li><a href=\"#methods\">Methods</a></li>\n</ul>\n</nav>\n")

	// Sites.
	p("<section id=\"sites\">\n<h2>Sites</h2>\n<table>\n<caption>What the survey did with each line of the list</caption>\n<thead><tr><th scope=\"col\" class=\"text\">Sites</th><th scope=\"col\">Count</th></tr></thead>\n<tbody>\n")
	row := func(label string, n int) { p("<tr><th scope=\"row\">%s</th><td>%s</td></tr>\n", label, num(n)) }
	row("Distinct sites listed", ad.Listed)
	row("Scanned and judged", ad.Sites)
	row("Unreachable", ad.Unreachable)
	for _, k := range ad.ErrorKeys() {
		row("&#8195;"+esc(k), ad.Errors[k])
	}
	row("Duplicate lines (skipped)", ad.Skipped.Duplicates)
	row("Invalid lines (skipped)", ad.Skipped.Invalid)
	p("</tbody>\n</table>\n</section>\n")

	// Levels.
	p("<section id=\"levels\">\n<h2>Levels reached</h2>\n")
	levelLabels := make([]string, len(ad.Levels))
	for i := range ad.Levels {
		levelLabels[i] = fmt.Sprintf("%d %s", i, report.LevelName(i))
	}
	columnChart(&b, 120, "levels-chart", "Sites by level reached", "The number of judged sites at each current level, 0 (Not Ready) to 3 (Optimized); the table below gives the same numbers.", levelLabels, ad.Levels)
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
	columnChart(&b, 64, "scores-chart", "Score histogram", "The number of judged sites in each band of ten points of the 0–100 score; the table below gives the same numbers.", scoreLabels, ad.Scores)
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

	// Rank buckets.
	p("<section id=\"ranks\">\n<h2>By rank</h2>\n")
	if len(ad.Buckets) == 0 {
		p("<p>The list ranks no site, so there are no rank buckets.</p>\n")
	} else {
		p("<p>The share of judged sites that pass each check among the most popular sites (buckets include the ones before them).</p>\n")
		p("<table>\n<caption>Pass rate of each check by rank bucket</caption>\n<thead><tr><th scope=\"col\" class=\"text\">Check</th><th scope=\"col\">All (%s)</th>", num(ad.Sites))
		for _, bk := range ad.Buckets {
			p("<th scope=\"col\">%s (%s)</th>", esc(bk.Name), num(bk.Sites))
		}
		p("</tr></thead>\n<tbody>\n")
		for _, id := range append(ad.Checks.IDs(), ad.Signals.IDs()...) {
			t := ad.Checks
			if _, ok := t[id]; !ok {
				t = ad.Signals
			}
			p("<tr><th scope=\"row\">%s</th><td>%s</td>", esc(label(id)), pct(t[id].Pass, ad.Sites))
			for _, bk := range ad.Buckets {
				bt := bk.Checks
				if t2, ok := bk.Signals[id]; ok && t2 != nil {
					bt = bk.Signals
				}
				n := 0
				if c := bt[id]; c != nil {
					n = c.Pass
				}
				p("<td>%s</td>", pct(n, bk.Sites))
			}
			p("</tr>\n")
		}
		p("</tbody>\n</table>\n")
		if ad.Unranked > 0 {
			p("<p>%s sites of the list carry no rank and are counted in “All” only.</p>\n", num(ad.Unranked))
		}
	}
	p("</section>\n")

	// Methods.
	m := ad.Methods
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
	p("</dl>\n</section>\n</main>\n</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
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
	return id
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

// columnChart draws one vertical bar per label.
func columnChart(b *strings.Builder, colW int, id, title, desc string, labels []string, values []int) {
	const chartH, base, left = 160, 190, 8
	maxV := 1
	for _, v := range values {
		maxV = max(maxV, v)
	}
	w := left + colW*len(values) + 8
	fmt.Fprintf(b, "<figure>\n<svg viewBox=\"0 0 %d 230\" width=\"%d\" height=\"230\" role=\"img\" aria-labelledby=\"%s-t %s-d\">\n<title id=\"%s-t\">%s</title>\n<desc id=\"%s-d\">%s</desc>\n", w, w, id, id, id, esc(title), id, esc(desc))
	for i, v := range values {
		x := left + i*colW
		h := float64(chartH) * float64(v) / float64(maxV)
		fmt.Fprintf(b, "<g><title>%s: %d</title><rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"#0969da\"/>", esc(labels[i]), v, x+6, float64(base)-h, colW-12, h)
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
