package edge

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agentready/agentready/edge/identity"
)

// The scan page's assets are site documents like the others: embedded, ETag
// and 304, and cached a day (their bytes change only with a deployment).
func init() {
	siteDocs["/assets/app.css"] = doc{file: "app.css", contentType: "text/css; charset=utf-8", maxAge: 86400}
	siteDocs["/assets/app.js"] = doc{file: "app.js", contentType: "text/javascript; charset=utf-8", maxAge: 86400}
}

// markdownTwins are the text/markdown renderings of generated pages, by path.
var markdownTwins = map[string]doc{}

// pageReport is the part of the origin's report the page shows. The edge
// cannot import engine/report (it would bloat the WebAssembly module), so it
// reads the documented JSON shape.
type pageReport struct {
	URL          string    `json:"url"`
	Timestamp    time.Time `json:"timestamp"`
	CurrentLevel int       `json:"currentLevel"`
	Score        struct {
		Value     int    `json:"value"`
		Grade     string `json:"grade"`
		LevelName string `json:"levelName"`
		Passed    int    `json:"passed"`
		Partial   int    `json:"partial"`
		Failed    int    `json:"failed"`
		NA        int    `json:"na"`
		Total     int    `json:"total"`
	} `json:"score"`
	Levels []struct {
		Level struct {
			Number      int    `json:"number"`
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"level"`
		Passed   int  `json:"passed"`
		Failed   int  `json:"failed"`
		NA       int  `json:"na"`
		Total    int  `json:"total"`
		Complete bool `json:"complete"`
	} `json:"levels"`
	Checks []pageCheck `json:"checks"`
	// Signals are the identity and commerce signals: beside the checks,
	// never scored.
	Signals []pageSignal `json:"signals"`
}

type pageSignal struct {
	pageCheck
	Group string `json:"group"`
}

type pageCheck struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	Status         string `json:"status"`
	Level          int    `json:"level"`
	Message        string `json:"message"`
	Recommendation string `json:"recommendation"`
	Details        string `json:"details"`
	FoundAt        string `json:"foundAt"`
}

// reportTTL bounds how stale a result page may be after someone scans
// again; it is short because the page's script swaps in the server's
// rendering right after a scan, and long enough that a shared link going
// round costs the origin one read per site every few seconds.
const reportTTL = 10 * time.Second

// maxReport caps what the edge reads of a report (a full one is ~30 KB).
const maxReport = 1 << 20

// servePage answers the result pages: "/?url=…" and "/report?url=…". It
// reports whether it handled the request; "/" without a url is the static
// homepage, served as a site document.
func (h *Handler) servePage(w http.ResponseWriter, r *http.Request, path string) bool {
	if path == "/showcase" {
		h.showcase(w, r)
		return true
	}
	if md, ok := markdownTwins[path]; ok {
		// Generated pages negotiate like the homepage; the HTML is the site document.
		w.Header().Set("Vary", "Accept")
		if !acceptsMarkdown(r) || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
			return false
		}
		h.serveDoc(w, r, md)
		return true
	}
	if path != "/report" && (path != "/" || !r.URL.Query().Has("url")) {
		return false
	}
	target := strings.TrimSpace(r.URL.Query().Get("url"))
	if r.Method == http.MethodPost && target != "" {
		h.scanForPage(w, r, target)
		return true
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, "GET, HEAD, POST")
		return true
	}
	base := h.base(r)
	md := acceptsMarkdown(r)
	hdr := w.Header()
	hdr.Set("Vary", "Accept")
	hdr.Set("X-Content-Type-Options", "nosniff")
	if target == "" {
		http.Redirect(w, r, base+"/", http.StatusSeeOther)
		return true
	}
	if md {
		hdr.Set("Content-Type", "text/markdown; charset=utf-8")
	} else {
		hdr.Set("Content-Type", "text/html; charset=utf-8")
	}
	// The rendered page is cached as long as the report it shows: rendering
	// a report inside the WebAssembly module costs milliseconds (decoding
	// and re-indenting every check's details), a cached page microseconds.
	pageKey := "reportpage:" + strconv.FormatBool(md) + "|" + base + "|" + target
	reload := strings.Contains(r.Header.Get("Cache-Control"), "no-cache")
	status := http.StatusOK
	body, cached := h.p.CacheGet(pageKey)
	if !cached || reload {
		var rep *pageReport
		note := ""
		if len(target) > 2048 {
			status, note = http.StatusBadRequest, "That address is longer than 2048 characters; give the site's domain, such as example.com."
		} else {
			rep, status, note = h.cachedReport(r, target, reload)
		}
		if md {
			body = reportMarkdown(base, target, rep, note)
		} else {
			body = reportHTML(base, target, rep, note)
		}
		if status == http.StatusOK {
			h.p.CachePut(pageKey, body, reportTTL)
		}
	}
	if status == http.StatusOK {
		hdr.Set("Cache-Control", "public, max-age=10")
	} else {
		hdr.Set("Cache-Control", "no-store")
	}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
	return true
}

// cachedReport reads the site's cached report from the origin's read-only
// /api/report, which never scans: showing a shared result costs nobody's
// allowance. A miss is not cached at the edge, so a report appears as soon
// as a scan finishes.
func (h *Handler) cachedReport(r *http.Request, target string, reload bool) (*pageReport, int, string) {
	key := "report:" + strings.ToLower(target)
	raw, ok := h.p.CacheGet(key)
	// A reload (Cache-Control: no-cache, as the page's script sends right
	// after a scan) reads the origin again: /api/report is as open to every
	// caller, so this opens nothing new.
	if !ok || reload {
		ip := h.p.ClientIP(r)
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, "/api/report?url="+url.QueryEscape(target), nil)
		for k, v := range identity.Sign(h.cfg.IdentitySecret, identity.Caller{Tier: identity.Anonymous, Subject: ip}, ip, http.MethodGet, "/api/report", h.p.Now()) {
			req.Header.Set(k, v)
		}
		req.Header.Set("Accept", "application/json")
		resp, err := h.p.Fetch(r.Context(), req)
		if err != nil {
			return nil, http.StatusBadGateway, "The scanner behind this page does not answer right now; retry in a minute."
		}
		defer resp.Body.Close()
		raw, _ = io.ReadAll(io.LimitReader(resp.Body, maxReport))
		switch resp.StatusCode {
		case http.StatusOK:
		case http.StatusNotFound:
			return nil, http.StatusNotFound, "There is no recent report of this site yet. Press Scan to scan it now."
		case http.StatusBadRequest:
			return nil, http.StatusBadRequest, "That is not an address that can be scanned; give a public website such as example.com."
		default:
			return nil, http.StatusBadGateway, "The report could not be read right now; retry in a minute."
		}
		h.p.CachePut(key, raw, reportTTL)
	}
	var rep pageReport
	if err := json.Unmarshal(raw, &rep); err != nil || len(rep.Checks) == 0 {
		return nil, http.StatusBadGateway, "The report could not be read right now; retry in a minute."
	}
	return &rep, http.StatusOK, ""
}

var statusWords = map[string]string{"pass": "Pass", "partial": "Partial", "fail": "Fail", "na": "Not applicable"}

// statusMarks give every verdict a shape as well as a colour.
var statusMarks = map[string]string{"pass": "✓", "partial": "◐", "fail": "✗", "na": "–"}

// htmlEscaper is html.EscapeString's replacer: importing package html would
// link its 2,000-entry entity table into the WebAssembly module for nothing.
var htmlEscaper = strings.NewReplacer(`&`, "&amp;", `'`, "&#39;", `<`, "&lt;", `>`, "&gt;", `"`, "&#34;")

func esc(s string) string { return htmlEscaper.Replace(s) }

// inlineCode renders the `code` spans recommendations use, escaping the rest.
func inlineCode(s string) string {
	parts := strings.Split(s, "`")
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 && i < len(parts)-1 {
			b.WriteString("<code>" + esc(p) + "</code>")
		} else {
			if i%2 == 1 {
				b.WriteString("`")
			}
			b.WriteString(esc(p))
		}
	}
	return b.String()
}

func reportURL(base, site string) string { return base + "/report?url=" + url.QueryEscape(site) }

// displayHost is the site as a person names it: without scheme or a bare slash.
func displayHost(u string) string {
	u = strings.TrimPrefix(strings.TrimPrefix(u, "https://"), "http://")
	return strings.TrimSuffix(u, "/")
}

func pageHead(b *strings.Builder, base, title, desc, canonical, jsonLD string) {
	b.WriteString(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>` + esc(title) + `</title>
<meta name="description" content="` + esc(desc) + `">
<link rel="canonical" href="` + esc(canonical) + `">
<link rel="alternate" type="text/markdown" href="` + esc(canonical) + `">
<link rel="stylesheet" href="` + base + `/assets/app.css">
<script type="application/ld+json">` + jsonLD + `</script>
<script src="` + base + `/assets/app.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to the content</a>
<header><nav aria-label="Site"><a href="` + base + `/">agentready</a> · <a href="` + base + `/how-we-score">How we score</a> · <a href="` + base + `/showcase">Showcase</a> · <a href="` + base + `/docs">Documentation</a> · <a href="` + base + `/openapi.json">API</a> · <a href="` + base + `/llms.txt">llms.txt</a></nav></header>
`)
}

// ldJSON marshals v for a script element: "</script>" cannot occur in it
// because json.Marshal escapes <, > and &.
func ldJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func scanForm(b *strings.Builder, base, value string) {
	b.WriteString(`<form id="scan" class="scan" action="` + base + `/report" method="get" role="search">
<label for="scan-url">Website to scan</label>
<div class="row"><input id="scan-url" name="url" type="text" inputmode="url" autocomplete="url" placeholder="example.com" required value="` + esc(value) + `"><button type="submit">Scan</button></div>
</form>
`)
}

func reportHTML(base, target string, rep *pageReport, note string) []byte {
	var b strings.Builder
	site := target
	if rep != nil {
		site = rep.URL
	}
	host := displayHost(site)
	canonical := reportURL(base, site)
	title := "Agent readiness of " + host + " — agentready"
	desc := "agentready report for " + host + "."
	if rep != nil {
		desc = "agentready report for " + host + ": score " + strconv.Itoa(rep.Score.Value) + "/100, grade " + rep.Score.Grade + ", level " + strconv.Itoa(rep.CurrentLevel) + " (" + rep.Score.LevelName + ")."
	}
	ld := map[string]any{"@context": "https://schema.org", "@type": "WebPage", "name": title, "url": canonical, "description": desc,
		"isPartOf": map[string]string{"@type": "WebSite", "name": "agentready", "url": base + "/"}}
	if rep != nil {
		ld["dateModified"] = rep.Timestamp.UTC().Format(time.RFC3339)
		ld["about"] = map[string]string{"@type": "WebSite", "url": rep.URL}
	}
	pageHead(&b, base, title, desc, canonical, ldJSON(ld))
	b.WriteString(`<main id="main" data-site="` + esc(site) + `">
<h1>Agent readiness of ` + esc(host) + `</h1>
`)
	scanForm(&b, base, target)
	b.WriteString(`<div id="result" class="result">
`)
	if rep == nil {
		b.WriteString(`<p class="note" role="status">` + esc(note) + `</p>
<form id="scan-now" method="post" action="` + esc(reportURL(base, target)) + `"><button type="submit">Scan ` + esc(displayHost(target)) + ` now</button> <span class="found">(one scan of your daily allowance)</span></form>
`)
	} else {
		writeReportBody(&b, base, rep)
	}
	b.WriteString(`</div>
</main>
<footer><p>agentready · <a href="` + base + `/feed.xml">Changelog</a> · <a href="` + base + `/sitemap.xml">Sitemap</a></p></footer>
</body>
</html>
`)
	return []byte(b.String())
}

// writeReportBody is the finished report; app.js draws the same markup while
// a scan streams, so the server and the script cannot drift apart in
// structure (the browser tests read both).
func writeReportBody(b *strings.Builder, base string, rep *pageReport) {
	s := rep.Score
	b.WriteString(`<section class="summary" aria-labelledby="summary-h">
<h2 id="summary-h">Score</h2>
<p class="score"><span class="big" id="score-value">` + strconv.Itoa(s.Value) + `</span> out of 100, grade <strong id="score-grade">` + esc(s.Grade) + `</strong>, level <strong id="score-level">` + strconv.Itoa(rep.CurrentLevel) + ` (` + esc(s.LevelName) + `)</strong></p>
<p class="tally">` + strconv.Itoa(s.Passed) + ` passed, ` + strconv.Itoa(s.Partial) + ` partial, ` + strconv.Itoa(s.Failed) + ` failed, ` + strconv.Itoa(s.NA) + ` not applicable, of ` + strconv.Itoa(s.Total) + ` checks. Scanned <time datetime="` + rep.Timestamp.UTC().Format(time.RFC3339) + `">` + rep.Timestamp.UTC().Format("2 Jan 2006 15:04 UTC") + `</time>.</p>
<form method="post" action="` + esc(reportURL(base, rep.URL)) + `&amp;fresh=1"><button type="submit" id="rescan" data-url="` + esc(rep.URL) + `">Scan again</button></form>
<figure id="shot" class="shot" hidden data-src="` + esc(base+"/api/screenshot?url="+url.QueryEscape(rep.URL)) + `"><figcaption>The homepage of ` + esc(displayHost(rep.URL)) + ` as our browser saw it</figcaption></figure>
<h3>Level ladder</h3>
<ol class="ladder">
`)
	for _, l := range rep.Levels {
		state := "not reached"
		if l.Level.Number <= rep.CurrentLevel {
			state = "reached"
		}
		b.WriteString(`<li class="` + strings.ReplaceAll(state, " ", "-") + `"><strong>Level ` + strconv.Itoa(l.Level.Number) + ` · ` + esc(l.Level.Name) + `</strong>: ` + state + ` (` + strconv.Itoa(l.Passed) + ` of ` + strconv.Itoa(l.Total-l.NA) + ` passed)</li>
`)
	}
	b.WriteString(`</ol>
</section>
<section class="checks" aria-labelledby="checks-h">
<h2 id="checks-h">Checks</h2>
<p id="progress" class="progress" role="status" aria-live="polite">` + strconv.Itoa(len(rep.Checks)) + ` of ` + strconv.Itoa(len(rep.Checks)) + ` checks done.</p>
`)
	for _, l := range rep.Levels {
		b.WriteString(`<section class="level" id="level-` + strconv.Itoa(l.Level.Number) + `">
<h3>Level ` + strconv.Itoa(l.Level.Number) + ` · ` + esc(l.Level.Name) + `</h3>
<p class="levdesc">` + esc(l.Level.Description) + `</p>
<ul class="list">
`)
		for _, c := range rep.Checks {
			if c.Level == l.Level.Number {
				writeCheck(b, c, rep.URL)
			}
		}
		b.WriteString("</ul>\n</section>\n")
	}
	b.WriteString("</section>\n")
	writeSignals(b, rep)
	writeBadges(b, base, rep.URL)
}

// writeSignals lists the identity and commerce signals under their own
// heading: opt-in standards, reported but never counted in the score.
func writeSignals(b *strings.Builder, rep *pageReport) {
	b.WriteString(`<section class="signals" id="signals" aria-labelledby="signals-h">
<h2 id="signals-h">Identity and commerce (not scored)</h2>
<p class="levdesc">Opt-in standards for sites that run agents or sell to them: Web Bot Auth keys, UCP, ACP, AP2 and MPP. An absent document is not applicable, never a failure, and none of these changes the score.</p>
<ul class="list" id="signal-list">
`)
	for _, sg := range rep.Signals {
		writeCheck(b, sg.pageCheck, "")
	}
	b.WriteString("</ul>\n</section>\n")
}

func writeCheck(b *strings.Builder, c pageCheck, site string) {
	st := c.Status
	if statusWords[st] == "" {
		st = "na"
	}
	b.WriteString(`<li class="check ` + st + `" id="check-` + esc(c.ID) + `" data-status="` + st + `"><details><summary><span class="st" aria-hidden="true">` + statusMarks[st] + `</span> <span class="sw">` + statusWords[st] + `</span> <span class="cid">` + esc(c.ID) + `</span> <span class="cn">` + esc(c.Name) + `</span></summary>
<p class="msg">` + inlineCode(c.Message) + `</p>
`)
	if c.Recommendation != "" {
		b.WriteString(`<p class="rec"><strong>Recommendation:</strong> ` + inlineCode(c.Recommendation) + `</p>
`)
	}
	if c.FoundAt != "" {
		b.WriteString(`<p class="found">Found at <code>` + esc(c.FoundAt) + `</code></p>
`)
	}
	if st == "fail" || st == "partial" {
		if starter := starterFor(c.ID, site); starter != "" {
			b.WriteString(`<div class="snippet starter"><p><strong>Starter to publish:</strong></p><pre><code>` + esc(starter) + `</code></pre><button type="button" class="copy">Copy</button></div>
`)
		}
	}
	if c.Details != "" {
		b.WriteString(`<div class="snippet"><p><strong>Evidence:</strong></p><pre><code>` + esc(prettyDetails(c.Details)) + `</code></pre><button type="button" class="copy">Copy</button></div>
`)
	}
	b.WriteString("</details></li>\n")
}

// prettyDetails indents JSON details so they read as a snippet; anything
// else is shown as sent. Bounded: a report is at most maxReport bytes.
func prettyDetails(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return s
	}
	return string(b)
}

func writeBadges(b *strings.Builder, base, site string) {
	img := base + "/api/badge?url=" + url.QueryEscape(site)
	link := reportURL(base, site)
	snips := []struct{ name, text string }{
		{"Markdown", "[![agent readiness](" + img + ")](" + link + ")"},
		{"HTML", `<a href="` + link + `"><img src="` + img + `" alt="agent readiness"></a>`},
		{"Shields endpoint", "https://img.shields.io/endpoint?url=" + url.QueryEscape(img+"&format=shields")},
	}
	b.WriteString(`<section class="badges" aria-labelledby="badges-h">
<h2 id="badges-h">Badge</h2>
<p><img id="badge-preview" src="` + esc(img) + `" alt="agent readiness badge of ` + esc(displayHost(site)) + `" height="20"></p>
<p class="badge-style" hidden><label for="badge-style">Style</label> <select id="badge-style"><option value="">flat</option><option value="flat-square">flat-square</option></select></p>
`)
	for i, s := range snips {
		id := "badge-" + strconv.Itoa(i)
		b.WriteString(`<div class="snippet"><label for="` + id + `">` + s.name + `</label><textarea id="` + id + `" readonly rows="2">` + esc(s.text) + `</textarea><button type="button" class="copy">Copy</button></div>
`)
	}
	b.WriteString("</section>\n")
}

func reportMarkdown(base, target string, rep *pageReport, note string) []byte {
	var b strings.Builder
	if rep == nil {
		b.WriteString("# Agent readiness of " + displayHost(target) + "\n\n" + note + "\n\nScan: `GET " + base + "/api/scan?url=" + url.QueryEscape(target) + "&format=json`\n")
		return []byte(b.String())
	}
	s := rep.Score
	b.WriteString("# Agent readiness of " + displayHost(rep.URL) + "\n\n")
	b.WriteString("Score **" + strconv.Itoa(s.Value) + "/100**, grade **" + s.Grade + "**, level **" + strconv.Itoa(rep.CurrentLevel) + " (" + s.LevelName + ")**. ")
	b.WriteString(strconv.Itoa(s.Passed) + " passed, " + strconv.Itoa(s.Partial) + " partial, " + strconv.Itoa(s.Failed) + " failed, " + strconv.Itoa(s.NA) + " not applicable, of " + strconv.Itoa(s.Total) + " checks. Scanned " + rep.Timestamp.UTC().Format(time.RFC3339) + ".\n\n")
	b.WriteString("Report: " + reportURL(base, rep.URL) + " · JSON: " + base + "/api/report?url=" + url.QueryEscape(rep.URL) + "\n\n")
	for _, l := range rep.Levels {
		state := "not reached"
		if l.Level.Number <= rep.CurrentLevel {
			state = "reached"
		}
		b.WriteString("## Level " + strconv.Itoa(l.Level.Number) + " · " + l.Level.Name + " (" + state + ", " + strconv.Itoa(l.Passed) + " of " + strconv.Itoa(l.Total-l.NA) + " passed)\n\n")
		for _, c := range rep.Checks {
			if c.Level != l.Level.Number {
				continue
			}
			w := statusWords[c.Status]
			if w == "" {
				w = "Not applicable"
			}
			b.WriteString("- **" + c.ID + " " + mdLine(c.Name) + "**: " + w + ". " + mdLine(c.Message))
			if c.Recommendation != "" && c.Status != "pass" {
				b.WriteString(" Recommendation: " + mdLine(c.Recommendation))
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	if len(rep.Signals) > 0 {
		b.WriteString("## Identity and commerce (not scored)\n\n")
		for _, sg := range rep.Signals {
			w := statusWords[sg.Status]
			if w == "" {
				w = "Not applicable"
			}
			b.WriteString("- **" + mdLine(sg.Name) + "** (" + sg.Group + "): " + w + ". " + mdLine(sg.Message))
			if sg.Recommendation != "" && sg.Status != "pass" {
				b.WriteString(" Recommendation: " + mdLine(sg.Recommendation))
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}

// mdLine keeps a site's text on one list line.
func mdLine(s string) string { return strings.Join(strings.Fields(s), " ") }
