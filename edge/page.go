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
	"github.com/agentready/agentready/edge/scanreq"
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
// imports nothing from engine/ (AGENTS.md), so it reads the documented JSON
// shape, /api/report's history and plan included.
type pageReport struct {
	URL          string    `json:"url"`
	Timestamp    time.Time `json:"timestamp"`
	CurrentLevel int       `json:"currentLevel"`
	Score        struct {
		pageTally
		Grade     string `json:"grade"`
		LevelName string `json:"levelName"`
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
	// Previous compares the report with the site's scan before it (present
	// only when there was one).
	Previous *pagePrevious `json:"previous"`
	// History and Plan come with /api/report only: the site's scores over
	// time, oldest first, ending with this scan, and engine/advice's plan
	// for this report (what `agentready scan --recommend --json` prints).
	History []pagePoint `json:"history"`
	Plan    *pagePlan   `json:"plan"`
	// Read, Profile and Interactions are the report's blocks beside the
	// 48 checks: the read suite over a sample of pages, the kind of site
	// the report is judged as, and the findings that only show across
	// checks. None of them changes the score above; a report made before
	// they existed has none.
	Read         *pageRead         `json:"read"`
	Profile      *pageProfile      `json:"profile"`
	Interactions []pageInteraction `json:"interactions"`

	// asked and at are the page's own request, not the report's: the
	// address asked for and, on a permanent link, the at= it gave, so
	// links that change one parameter (filter, profile) keep the others.
	asked, at string
}

// pageLink is this report's page judged as profile ("" for the site's own
// kind), of the same scan when the page is a permanent link (under the
// address asked for, as the origin keeps it; see permalink).
func (rep *pageReport) pageLink(profile string) string {
	link := reportURL("", rep.URL)
	if rep.at != "" {
		link = permalink("", rep.asked, rep)
	}
	if profile != "" {
		link += "&profile=" + url.QueryEscape(profile)
	}
	return link
}

// viewLink is this page's own address without ?filter=: the same scan,
// judged as the same profile when the page asked for one.
func (rep *pageReport) viewLink() string {
	if rep.Profile != nil && rep.Profile.Source == "requested" {
		return rep.pageLink(rep.Profile.ID)
	}
	return rep.pageLink("")
}

// pageTally is a score with its counts (the report's, the read suite's, a
// profile's).
type pageTally struct {
	Value   int `json:"value"`
	Passed  int `json:"passed"`
	Partial int `json:"partial"`
	Failed  int `json:"failed"`
	NA      int `json:"na"`
	Total   int `json:"total"`
}

type pageRead struct {
	Source string      `json:"source"`
	Pages  []pageRPage `json:"pages"`
	Checks []pageCheck `json:"checks"`
	Score  pageTally   `json:"score"`
}

// pageRPage is one sampled page of the read suite.
type pageRPage struct {
	URL            string   `json:"url"`
	Status         int      `json:"status"`
	Error          string   `json:"error"`
	TextTokens     int      `json:"textTokens"`
	MarkdownTokens int      `json:"markdownTokens"`
	Rendering      string   `json:"rendering"`
	MarkdownURL    string   `json:"markdownUrl"`
	Negotiated     bool     `json:"negotiated"`
	Failed         []string `json:"failed"`
}

type pageProfile struct {
	ID       string   `json:"id"`
	Source   string   `json:"source"`
	Detected string   `json:"detected"`
	Evidence []string `json:"evidence"`
	// DeclarationProblems is what the scan skipped in the site's
	// /.well-known/agentready.json, in words.
	DeclarationProblems []string `json:"declarationProblems"`
	NotApplicable       []struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Reason string `json:"reason"`
		By     string `json:"by"`
	} `json:"notApplicable"`
	Score  pageTally `json:"score"`
	Grade  string    `json:"grade"`
	Others []struct {
		ID    string `json:"id"`
		Value int    `json:"value"`
		Grade string `json:"grade"`
	} `json:"others"`
}

type pageInteraction struct {
	ID      string   `json:"id"`
	Title   string   `json:"title"`
	Message string   `json:"message"`
	Fix     string   `json:"fix"`
	Checks  []string `json:"checks"`
}

type pagePrevious struct {
	Timestamp    time.Time    `json:"timestamp"`
	Score        int          `json:"score"`
	Grade        string       `json:"grade"`
	Level        int          `json:"level"`
	LevelName    string       `json:"levelName"`
	NewlyPassing []pageChange `json:"newlyPassing"`
	NewlyFailing []pageChange `json:"newlyFailing"`
	Changed      []pageChange `json:"changed"`
}

// pageChange is one check whose verdict or message differs from the previous scan.
type pageChange struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	From    string `json:"from"`
	To      string `json:"to"`
	Message string `json:"message"`
}

type pagePoint struct {
	Timestamp time.Time `json:"timestamp"`
	Score     int       `json:"score"`
	Grade     string    `json:"grade"`
	Level     int       `json:"level"`
}

type pagePlan struct {
	TargetLevel  int `json:"targetLevel"`
	PassesNeeded int `json:"passesNeeded"`
	Needs        []struct {
		Level  int `json:"level"`
		Passes int `json:"passes"`
	} `json:"needs"`
	Steps []pageStep `json:"recommendations"`
}

// pageStep is one fix of the plan, in the plan's order.
type pageStep struct {
	Rank     int    `json:"rank"`
	ID       string `json:"id"`
	Name     string `json:"name"`
	Level    int    `json:"level"`
	Status   string `json:"status"`
	Effort   string `json:"effort"`
	Blocking bool   `json:"blocking"`
	Why      string `json:"why"`
	Fix      string `json:"fix"`
	Snippet  string `json:"snippet"`
}

type pageSignal struct {
	pageCheck
	Group string `json:"group"`
}

type pageCheck struct {
	ID             string      `json:"id"`
	Name           string      `json:"name"`
	Status         string      `json:"status"`
	Level          int         `json:"level"`
	Message        string      `json:"message"`
	Recommendation string      `json:"recommendation"`
	Details        pageDetails `json:"details"`
	FoundAt        string      `json:"foundAt"`
}

// pageDetails are a check's details as the origin sends them, a JSON
// object, kept as its compact text. A report stored before details were an
// object holds them as a string, which is read as what it holds.
type pageDetails string

func (d *pageDetails) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*d = pageDetails(s)
		return nil
	}
	if string(b) == "{}" || string(b) == "null" {
		*d = ""
		return nil
	}
	*d = pageDetails(b)
	return nil
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
	pageHeaders(hdr)
	if target == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
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
	// Each filter of the checks is a page of its own (it works without
	// JavaScript); the markdown twin lists every check whatever the filter.
	filter := "all"
	if !md {
		filter = checkFilter(r.URL.Query().Get("filter"))
	}
	// at, the unix second of one scan, makes the page a permanent link to
	// that scan's report; without it the page shows the site's latest.
	at := r.URL.Query().Get("at")
	badAt := r.URL.Query().Has("at") && !validReportAt(at) // "at=" too: it is not the latest's page
	// profile judges the report as another kind of site (the origin
	// re-judges it; the scan is the same). An unknown one is refused, and
	// never shown back.
	prof := r.URL.Query().Get("profile")
	badProfile := prof != "" && !scanreq.ValidProfile(prof)
	if badProfile {
		prof = ""
	}
	key := pageKey(md, base, target, at, filter, prof)
	reload := strings.Contains(r.Header.Get("Cache-Control"), "no-cache")
	status := http.StatusOK
	body, cached := h.p.CacheGet(key)
	if !cached || reload || badAt || badProfile {
		var rep *pageReport
		note := ""
		switch {
		case len(target) > 2048:
			status, note = http.StatusBadRequest, "That address is longer than 2048 characters; give the site's domain, such as example.com."
		case badAt:
			status, note = http.StatusBadRequest, badAtNote
		case badProfile:
			status, note = http.StatusBadRequest, badProfileNote
		default:
			rep, status, note = h.cachedReport(r, target, at, prof, reload)
			if rep != nil {
				rep.asked, rep.at = target, at
			}
		}
		if md {
			body = reportMarkdown(base, target, rep, note)
		} else {
			body = reportHTML(base, target, rep, note, filter)
		}
		if status == http.StatusOK {
			h.p.CachePut(key, body, reportTTL)
		}
	}
	if status == http.StatusOK {
		h.cacheFor(hdr, 10, true) // the canonical URL, the JSON-LD and the badge snippets are absolute
	} else {
		hdr.Set("Cache-Control", "no-store")
	}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
	return true
}

func pageKey(md bool, base, target, at, filter, profile string) string {
	return "reportpage:" + strconv.FormatBool(md) + "|" + filter + "|" + at + "|" + profile + "|" + base + "|" + target
}

// reportKey is the edge cache's key of the origin's answer for target's
// report (at: the scan's unix second, or "" for the latest; profile: the
// kind of site it is judged as, or "" for its own).
func reportKey(target, at, profile string) string {
	return "report:" + at + "|" + profile + "|" + strings.ToLower(target)
}

// badProfileNote is the page's answer to an unknown profile.
const badProfileNote = "That is not a kind of site a report can be judged as: profile must be content, docs, api, commerce or application. Leave it out to see the site judged as the kind it declares, or else as detected."

// badAtNote is the page's answer to an at that is not a scan's unix second.
const badAtNote = "That permanent link is not valid: at must be the time of one scan in whole seconds since 1970 (1 to 12 digits). Leave it out for the site's latest report."

// cachedReport reads the site's report from the origin's read-only
// /api/report, which never scans: showing a shared result costs nobody's
// allowance. Without at it is the site's latest (cached, else kept for
// the origin's ReportKeep); with at (a valid unix second, scanreq.ReportAt) the
// report of the scan in that second. A miss is not cached at the edge, so
// a report appears as soon as a scan finishes.
func (h *Handler) cachedReport(r *http.Request, target, at, profile string, reload bool) (*pageReport, int, string) {
	key := reportKey(target, at, profile)
	raw, ok := h.p.CacheGet(key)
	// A reload (Cache-Control: no-cache, as the page's script sends right
	// after a scan) reads the origin again: /api/report is as open to every
	// caller, so this opens nothing new.
	if !ok || reload {
		ip := h.p.ClientIP(r)
		path := "/api/report?url=" + url.QueryEscape(target)
		if at != "" {
			path += "&at=" + at // digits only (scanreq.ReportAt)
		}
		if profile != "" {
			path += "&profile=" + profile // one of scanreq.Profiles
		}
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, path, nil)
		h.signFetch(req, identity.Caller{Tier: identity.Anonymous, Subject: h.addressKey(ip)}, ip)
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
			if at != "" {
				return nil, http.StatusNotFound, "The report of that scan is no longer kept (reports are kept for a limited time). The site's latest report is at " + reportURL(h.base(r), target) + "; or press Scan to scan it now."
			}
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

// statusOf is a verdict the page knows, anything else read as not applicable.
func statusOf(s string) string {
	if statusWords[s] == "" {
		return "na"
	}
	return s
}

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
			put(&b, "<code>", esc(p), "</code>")
		} else {
			if i%2 == 1 {
				put(&b, "`")
			}
			put(&b, esc(p))
		}
	}
	return b.String()
}

// reportURL is the report page of site: absolute under base (canonical
// URLs, JSON-LD, badge snippets), relative with base "" (links and forms).
func reportURL(base, site string) string { return base + "/report?url=" + url.QueryEscape(site) }

// displayHost is the site as a person names it: without scheme or a bare slash.
func displayHost(u string) string {
	u = strings.TrimPrefix(strings.TrimPrefix(u, "https://"), "http://")
	return strings.TrimSuffix(u, "/")
}

// siteHeader is the header of every page (edge/site/index.html and
// docs.html carry the same markup). Links, images, scripts and stylesheets
// of the pages are relative: without AGENTREADY_BASE_URL the base is the
// request's Host, which must never choose where a page loads code from.
const siteHeader = `<header class="top"><nav aria-label="Site"><a class="brand" href="/"><img src="/assets/icon.svg" alt="" width="28" height="28">agentready</a><span class="links"><a href="/how-we-score">How we score</a> <a href="/showcase">Showcase</a> <a href="/docs">Docs</a> <a href="/openapi.json">API</a> <a href="/llms.txt">llms.txt</a></span></nav></header>
`

const siteFooter = `<footer><p><img src="/assets/icon.svg" alt="" width="16" height="16"> agentready · <a href="/feed.xml">Changelog</a> · <a href="/sitemap.xml">Sitemap</a> · <a href="/llms.txt">llms.txt</a></p></footer>
`

// pageHead starts a page; canonical and jsonLD are absolute (they name the
// page to machines), everything the page loads is relative.
func pageHead(b *strings.Builder, title, desc, canonical, jsonLD string) {
	put(b, `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>`, esc(title), `</title>
<meta name="description" content="`, esc(desc), `">
<link rel="canonical" href="`, esc(canonical), `">
<link rel="alternate" type="text/markdown" href="`, esc(canonical), `">
<link rel="icon" href="/favicon.ico" sizes="16x16 32x32 48x48">
<link rel="icon" href="/assets/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/app.css">
<script type="application/ld+json">`, jsonLD, `</script>
<script src="/assets/app.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to the content</a>
`, siteHeader)
}

// ldJSON marshals v for a script element: "</script>" cannot occur in it
// because json.Marshal escapes <, > and &.
func ldJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func scanForm(b *strings.Builder, value string) {
	put(b, `<form id="scan" class="scan" action="/report" method="get" role="search">
<label for="scan-url">Website to scan</label>
<div class="row"><input id="scan-url" name="url" type="text" inputmode="url" autocomplete="url" placeholder="example.com" required value="`, esc(value), `"><button type="submit">Scan</button></div>
</form>
`)
}

func reportHTML(base, target string, rep *pageReport, note, filter string) []byte {
	var b strings.Builder
	b.Grow(96 << 10)
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
	pageHead(&b, title, desc, canonical, ldJSON(ld))
	put(&b, `<main id="main" class="report" data-site="`, esc(site), `">
<div class="head">
<h1><span class="kicker">Agent readiness of</span> <span class="host">`, esc(clipAddress(host)), `</span></h1>
`)
	scanForm(&b, target)
	put(&b, `</div>
<div id="result" class="result">
`)
	if rep == nil {
		put(&b, `<p class="note" role="status">`, esc(note), `</p>
<form id="scan-now" method="post" action="`, esc(reportURL("", target)), `"><button type="submit">Scan `, esc(clipAddress(displayHost(target))), ` now</button> <span class="muted">(one scan of your daily allowance)</span></form>
`)
	} else {
		writeReportBody(&b, base, target, rep, filter)
	}
	put(&b, `</div>
</main>
`, siteFooter, `</body>
</html>
`)
	return []byte(b.String())
}

// detailWords writes a check's details for people: one "name: value" line
// per member, names in words ("contentType" → "content type"), lists of
// plain values joined by commas, anything deeper as compact JSON. Members
// keep the report's order. Text that is not a JSON object is shown as sent.
// Bounded: a report is at most maxReport bytes.
func detailWords(s pageDetails) string {
	dec := json.NewDecoder(strings.NewReader(string(s)))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return string(s)
	}
	var lines []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return string(s)
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return string(s)
		}
		name, _ := k.(string)
		lines = append(lines, words(name)+": "+valueWords(v))
	}
	return strings.Join(lines, "\n")
}

// words splits a camelCase or snake_case member name into lower-case words.
func words(name string) string {
	var b strings.Builder
	for i, r := range name {
		switch {
		case r == '_' || r == '-':
			b.WriteByte(' ')
		case r >= 'A' && r <= 'Z':
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteRune(r + 'a' - 'A')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// valueWords writes one member's value: a plain value as it is (none for
// an empty one), a list of plain values joined by commas, else JSON.
func valueWords(v any) string {
	switch x := v.(type) {
	case nil:
		return "none"
	case string:
		if x == "" {
			return "none"
		}
		return x
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case json.Number:
		return x.String()
	case []any:
		if len(x) == 0 {
			return "none"
		}
		parts := make([]string, 0, len(x))
		for _, e := range x {
			switch e.(type) {
			case map[string]any, []any:
				b, _ := json.Marshal(v)
				return string(b)
			}
			parts = append(parts, valueWords(e))
		}
		return strings.Join(parts, ", ")
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// mdLine keeps our own text on one list line; text a site chose goes
// through mdtext, which also makes it inert.
func mdLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// put writes parts in order. The pages are written with it rather than with
// concatenations and Builder.WriteString, which the WebAssembly build
// expands at every call: one call taking the parts is a third of the code,
// and the module's size is budgeted (docs/benchmarks.md).
//
//go:noinline
func put(b *strings.Builder, parts ...string) {
	for _, p := range parts {
		b.WriteString(p)
	}
}

// validReportAt: at is a permanent link's (scanreq.ReportAt), as the origin
// reads it.
func validReportAt(at string) bool {
	_, ok := scanreq.ReportAt(at)
	return ok
}
