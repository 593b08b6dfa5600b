package checks

// The read suite, R.1–R.18 (R.19 and R.20 in read_access.go): can an agent read the site's pages, one by one.
// Each check judges every sampled page it applies to (or, for llms.txt
// coverage, every sitemap page), and its verdict is proportional: pass when
// every one passed, partial when at least half did, fail below. The read
// score credits each check with the share that passed (score.Read), so 3
// failing pages of 50 are not 48. Their gatherer is engine/gather/read.go.

import (
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/agentready/agentready/engine/clip"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/parse/htmlpage"
	"github.com/agentready/agentready/engine/parse/markdown"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/engine/weburl"
)

// Limits the read checks judge pages against. An agent's fetch tool keeps
// about 100,000 characters of a page's text (Claude Code's WebFetch cuts
// there; the Agent-Friendly Documentation Spec's Appendix A uses 50,000
// and 100,000 characters) and refuses bodies past about 1 MB. At four
// characters a token (the rule 1.13 uses) that is 25,000 and 250,000 tokens.
const (
	MaxPageTextTokens = 25_000
	MaxPageHTMLTokens = 250_000
	// ShellWords: an HTML page with less main text than this and scripts
	// is an application shell that only a browser fills in.
	ShellWords = 50
	// MinParity is the share of the HTML's main-content words its
	// markdown must hold.
	MinParity = 80
	// MaxContentStart is how far into a page's text (percent) its main
	// content may begin.
	MaxContentStart = 50
	// MaxFreshAge is the longest max-age (seconds) a page may ask caches
	// to keep it without revalidating: a day.
	MaxFreshAge = 86_400
	maxListed   = 50 // pages a check's details list
)

// ReadCheck is one check of the read suite: a definition and a judge that
// counts pages.
type ReadCheck struct {
	Definition
	Requires []gather.AnyKey
	Run      func(in gather.Source) ReadOutcome
}

// ReadOutcome is a read check's count: OK pages of Of, the pages that did
// not pass with why, and words for the whole when a count does not say it.
type ReadOutcome struct {
	OK, Of int
	Failed []PageWhy
	// NA says why nothing was judged (Of is 0).
	NA string
	// Unit names what was counted ("sampled pages" when empty).
	Unit string
	// Ladder replaces the all-or-half rule: pass at or above Ladder[0]
	// percent, partial at or above Ladder[1].
	Ladder *[2]int
}

// PageWhy is one page that did not pass a read check.
type PageWhy struct {
	URL string `json:"url"`
	Why string `json:"why"`
}

var readChecks []*ReadCheck

func readCheck(d Definition, requires []gather.AnyKey, run func(gather.Source) ReadOutcome) {
	d.Category = report.ReadGroup
	readChecks = append(readChecks, &ReadCheck{Definition: d, Requires: requires, Run: run})
}

// Read returns the read checks, R.1 first.
func Read() []*ReadCheck { return readChecks }

// ReadByID finds a read check.
func ReadByID(id string) (*ReadCheck, bool) {
	for _, c := range readChecks {
		if c.ID == id {
			return c, true
		}
	}
	return nil, false
}

// Judge runs the check and turns its count into a report entry and count.
func (c *ReadCheck) Judge(set *gather.Set) (report.Check, report.ReadCount) {
	res, n, _ := c.judge(set)
	return res, n
}

// judge is Judge plus the failing pages its details list.
func (c *ReadCheck) judge(set *gather.Set) (res report.Check, n report.ReadCount, listed []PageWhy) {
	n.ID = c.ID
	for _, k := range c.Requires {
		if !gather.Has(set, k) {
			return c.result(report.Fail, fmt.Sprintf("The check could not be evaluated: its input %q was not gathered before the scan ended.", k.Name()), nil), n, nil
		}
	}
	defer func() {
		if r := recover(); r != nil {
			res, n, listed = c.result(report.Fail, fmt.Sprintf("The check could not be evaluated (internal error: %v); please report it.", r), nil), report.ReadCount{ID: c.ID}, nil
		}
	}()
	o := c.Run(gather.View(set, c.Requires, nil))
	n.OK, n.Of = o.OK, o.Of
	if o.Of == 0 {
		return c.result(report.NA, o.NA, nil), n, nil
	}
	unit := o.Unit
	if unit == "" {
		unit = "sampled pages"
	}
	status := report.Fail
	share := 100 * float64(o.OK) / float64(o.Of)
	switch {
	case o.Ladder != nil && share >= float64(o.Ladder[0]), o.Ladder == nil && o.OK == o.Of:
		status = report.Pass
	case o.Ladder != nil && share >= float64(o.Ladder[1]), o.Ladder == nil && 2*o.OK >= o.Of:
		status = report.Partial
	}
	msg := fmt.Sprintf("%d of %d %s pass", o.OK, o.Of, unit)
	switch {
	case o.Of == 1 && o.OK == 1:
		msg = "The one " + strings.TrimSuffix(strings.Replace(unit, "pages", "page", 1), "s") + " passes"
	case o.OK == o.Of:
		msg = fmt.Sprintf("All %d %s pass", o.Of, unit)
	}
	if len(o.Failed) > 0 {
		msg += fmt.Sprintf("; %s: %s", firstOf(o.Failed[0].URL), o.Failed[0].Why)
		if len(o.Failed) > 1 {
			msg += fmt.Sprintf(" (and %d more)", len(o.Failed)-1)
		}
	}
	failed := o.Failed
	if len(failed) > maxListed {
		failed = failed[:maxListed]
	}
	if failed == nil {
		failed = []PageWhy{}
	}
	return c.result(status, msg+".", map[string]any{"ok": o.OK, "of": o.Of, "percent": int(math.Round(share)), "failing": failed}), n, failed
}

// firstOf names a page by its path, which is what differs across a sample.
func firstOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Path != "" {
		if u.RawQuery != "" {
			return u.Path + "?" + u.RawQuery
		}
		return u.Path
	}
	return raw
}

func (c *ReadCheck) result(s report.Status, msg string, details any) report.Check {
	r := report.Check{ID: c.ID, Name: c.Name, Status: s, Passed: s == report.Pass, Category: c.Category, Message: msg}
	if s != report.Pass && s != report.NA {
		r.Recommendation = c.Fix
	}
	r.Details = report.ObjectDetails(details)
	return r
}

// noMarkdown is the na reason of the checks that read each page's markdown.
const noMarkdown = "No sampled page has markdown (neither a .md twin nor an answer to Accept: text/markdown)."

// readNeeds is what every page-level read check reads.
var readNeeds = needs(gather.ReadSample)

// noSample is the reason a page-level check judged nothing.
func noSample(in gather.Source) string {
	doc := gather.Get(in, gather.ReadSample)
	if doc.Limit == 0 {
		return "The read suite was turned off for this scan."
	}
	if len(doc.Pages) > 0 {
		return fmt.Sprintf("None of the %s sampled URLs answered 2xx with an HTML page.", strconv.Itoa(len(doc.Pages)))
	}
	return "No page beyond the homepage was found in llms.txt, the sitemap or the homepage's links to sample."
}

// pageJudge judges one sampled page: whether the check applies to it and,
// when it does, why it fails ("" when it passes).
type pageJudge func(p *gather.ReadPage) (applies bool, why string)

// perPage counts the sampled pages judge applies to and passes, each page
// once: two listed URLs that answer with the same page (an llms.txt link
// that redirects to a URL the sitemap lists) are one page. The checks of
// how a listed URL answers (R.9, R.11) use perListed.
func perPage(in gather.Source, judge pageJudge) ReadOutcome { return count(in, true, judge) }

// perListed counts every sampled URL, as llms.txt and the sitemap list them.
func perListed(in gather.Source, judge pageJudge) ReadOutcome { return count(in, false, judge) }

func count(in gather.Source, once bool, judge pageJudge) ReadOutcome {
	var o ReadOutcome
	seen := map[string]bool{}
	for _, p := range gather.Get(in, gather.ReadSample).Pages {
		if once && p.HTML != nil && p.HTML.FinalURL != "" {
			if seen[p.HTML.FinalURL] {
				continue
			}
			seen[p.HTML.FinalURL] = true
		}
		applies, why := judge(p)
		if !applies {
			continue
		}
		o.Of++
		if why == "" {
			o.OK++
		} else {
			o.Failed = append(o.Failed, PageWhy{URL: p.URL, Why: why})
		}
	}
	return o
}

// eachPage is the Run of a check that judges each sampled page once
// (perPage); na says why when it applies to none.
func eachPage(na func(gather.Source) string, judge pageJudge) func(gather.Source) ReadOutcome {
	return func(in gather.Source) ReadOutcome {
		o := perPage(in, judge)
		o.NA = na(in)
		return o
	}
}

// because is an na reason that does not depend on what was gathered.
func because(reason string) func(gather.Source) string {
	return func(gather.Source) string { return reason }
}

// ifLlms runs a check that judges how pages point to llms.txt, or says
// there is nothing to point to.
func ifLlms(run func(gather.Source) ReadOutcome) func(gather.Source) ReadOutcome {
	return func(in gather.Source) ReadOutcome {
		if !gather.Get(in, gather.Llms).Resp.Found() {
			return ReadOutcome{NA: "The site has no llms.txt to point to."}
		}
		return run(in)
	}
}

// ofAnswered judges the pages that answered 2xx as HTML by why ("" passes).
func ofAnswered(why func(p *gather.ReadPage) string) pageJudge {
	return func(p *gather.ReadPage) (bool, string) {
		if !answered(p) {
			return false, ""
		}
		return true, why(p)
	}
}

// answered reports a sampled page whose HTML answered 2xx as HTML.
func answered(p *gather.ReadPage) bool { return p.HTML.OK() && p.Page != nil }

// thousands writes n with thousands separators: 30,432.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Tokens is a body's size in tokens at four bytes a token.
func Tokens(n int) int { return (n + 3) / 4 }

// PageMarkdown is the markdown an agent gets for a page: its .md twin's,
// else what it answered Accept: text/markdown with (nil when neither).
func PageMarkdown(p *gather.ReadPage) *fetch.Response {
	if TwinServed(p) {
		return p.Twin
	}
	if ok, _ := pageMarkdown(p.Negotiated); ok || markdownBody(p.Negotiated) {
		return p.Negotiated
	}
	return nil
}

// TwinServed reports a .md twin that answered with markdown.
func TwinServed(p *gather.ReadPage) bool { return markdownBody(p.Twin) }

// markdownBody reports a whole 2xx text answer that is not HTML.
func markdownBody(r *fetch.Response) bool {
	if r == nil || !r.OK() || !r.Complete() || r.LooksHTML() || len(r.Body) == 0 {
		return false
	}
	ct := r.ContentType()
	return ct == "" || strings.HasPrefix(ct, "text/") || ct == "application/markdown"
}

// Parity is the share (percent) of the distinct words of a page's main
// content that its markdown holds; -1 when either is missing or the page
// has too little text to compare.
func Parity(p *gather.ReadPage) int {
	md := PageMarkdown(p)
	if md == nil || p.Page == nil {
		return -1
	}
	want := wordSet(p.Page.MainText)
	if len(want) < 20 {
		return -1
	}
	have := wordSet(string(md.Body))
	n := 0
	for w := range want {
		if have[w] {
			n++
		}
	}
	return 100 * n / len(want)
}

func wordSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(w)) >= 2 {
			out[w] = true
		}
	}
	return out
}

// ContentStart is how far (percent) into a page's text its main content
// begins; -1 when the page marks no main content.
func ContentStart(p *gather.ReadPage) int {
	if p.Page == nil || p.Page.MainStart < 0 || p.Page.VisibleBytes == 0 {
		return -1
	}
	return 100 * p.Page.MainStart / p.Page.VisibleBytes
}

// Shells counts the sampled pages that answered as HTML, and how many of
// them are application shells.
func Shells(doc *gather.ReadDoc) (shells, html int) {
	for _, p := range doc.Pages {
		if answered(p) {
			html++
			if Shell(p) {
				shells++
			}
		}
	}
	return shells, html
}

// Shell reports an HTML page with almost no main text and scripts: an
// application shell a browser fills in.
func Shell(p *gather.ReadPage) bool { return ShellPage(p.Page) }

// ShellPage is Shell for any parsed page (nil is not one).
func ShellPage(pg *htmlpage.Page) bool {
	return pg != nil && pg.MainWords < ShellWords && len(pg.Scripts) > 0
}

var (
	// notFoundText is a title or heading that begins by saying the page is
	// not there; "Errors: 400, 404 Not Found…", a guide, does not begin so.
	notFoundText = regexp.MustCompile(`(?i)^\W*((oops|sorry|error)\W+)*(404\b|page not found|not found|((this|the) )?page (does not|doesn't|no longer) exists?|((this|the) )?page (is )?no longer available|nothing (was )?found)`)
	llmsMention  = regexp.MustCompile(`(?i)llms(-full)?\.txt`)
)

// Honesty says what is dishonest about a 2xx page ("" when nothing is).
func Honesty(p *gather.ReadPage) string {
	if !answered(p) {
		return ""
	}
	h1 := ""
	for _, h := range p.Page.Headings {
		if h.Level == 1 {
			h1 = h.Text
			break
		}
	}
	switch {
	case notFoundText.MatchString(p.Page.Title) || notFoundText.MatchString(h1):
		return fmt.Sprintf("answers %d with a “not found” page (a soft 404)", p.HTML.Status)
	}
	if why := signInAnswer(p); why != "" {
		return why + " instead of 401 or 403"
	}
	return ""
}

// signInAnswer says how a page answered 2xx with a sign-in instead of its
// content ("" when it did not): a sign-in form with little else, or a
// redirect to a sign-in page. A sampled URL that is itself the sign-in
// page (a sitemap may list /login) answers with its own content.
func signInAnswer(p *gather.ReadPage) string {
	if !answered(p) || signInURL.MatchString(p.URL) {
		return ""
	}
	switch {
	case p.Page.PasswordInputs > 0 && p.Page.MainWords < 200:
		return fmt.Sprintf("answers %d with a sign-in form", p.HTML.Status)
	case loginPath.MatchString(p.HTML.FinalURL) && len(p.HTML.Redirects) > 0:
		return fmt.Sprintf("redirects to a sign-in page that answers %d", p.HTML.Status)
	}
	return ""
}

// signInURL is the address of a sign-in page itself: its last segment
// names signing in. (loginPath, which a redirect's target is read with,
// also takes /auth, /oauth and /sso, which are as often docs pages about
// them.)
var signInURL = regexp.MustCompile(`(?i)^[a-z][a-z0-9+.-]*://[^/?#]*(/[^?#]*)?/(login|log-in|logon|signin|sign-in|sign_in|sign-on)/?([?#]|$)`)

// Redirect says what is wrong with how a page redirected ("" when nothing is).
func Redirect(p *gather.ReadPage, site *url.URL) string {
	r := p.HTML
	if r == nil || r.Err != nil && len(r.Redirects) == 0 {
		return ""
	}
	if r.Err != nil {
		return "redirects until the scanner gives up (" + fetch.Describe(r.Err) + ")"
	}
	if n := len(r.Redirects); n > 2 {
		return fmt.Sprintf("takes %d redirects to answer", n)
	}
	if len(r.Redirects) > 0 && !weburl.SameSite(site, r.FinalURL) {
		return "redirects to another site"
	}
	if p.Page != nil {
		for _, m := range p.Page.Metas {
			if strings.EqualFold(strings.TrimSpace(m.HTTPEquiv), "refresh") && strings.Contains(strings.ToLower(m.Content), "url=") {
				return "redirects with <meta http-equiv=\"refresh\">, which agents do not follow"
			}
		}
	}
	return ""
}

// CacheProblem says what is wrong with a page's cache headers ("" when nothing is).
func CacheProblem(r *fetch.Response) string {
	cc := strings.ToLower(r.Header.Get("Cache-Control"))
	validator := r.Header.Get("ETag") != "" || r.Header.Get("Last-Modified") != ""
	if strings.Contains(cc, "no-cache") || strings.Contains(cc, "no-store") {
		return ""
	}
	age := -1
	for _, d := range strings.Split(cc, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(d), "=")
		if k == "s-maxage" || (k == "max-age" && age < 0) {
			if n, err := strconv.Atoi(strings.Trim(v, `"`)); err == nil {
				age = n
			}
		}
	}
	switch {
	case age < 0 && !validator && r.Header.Get("Expires") == "":
		return "sends no Cache-Control, ETag or Last-Modified: every agent must fetch it whole, every time"
	case age < 0 && !validator:
		return "has only an Expires header and no validator to revalidate with"
	case age > MaxFreshAge && !strings.Contains(cc, "must-revalidate"):
		return fmt.Sprintf("lets caches keep it %s without asking again (max-age=%d): agents may read a stale page", days(age), age)
	}
	return ""
}

func days(seconds int) string {
	if d := seconds / 86_400; d >= 2 {
		return fmt.Sprintf("%d days", d)
	}
	return fmt.Sprintf("%d hours", seconds/3600)
}

// NormalPage is the key llms.txt coverage compares: a page URL without
// scheme, default port, trailing slash, index file or .md extension.
func NormalPage(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	p := strings.ToLower(u.EscapedPath())
	for _, suffix := range []string{"/index.html.md", "/index.md", "/index.html", ".html.md", ".md", ".html"} {
		if strings.HasSuffix(p, suffix) {
			p = strings.TrimSuffix(p, suffix)
			break
		}
	}
	p = strings.TrimSuffix(p, "/")
	host := strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
	return host + p + "?" + u.RawQuery
}

func init() {
	readCheck(Definition{ID: "R.1", Name: "Page Size",
		LooksFor: "Each sampled page's HTML as sent and its readable text, in tokens (bytes/4).",
		Rule:     fmt.Sprintf("A page passes when its text is at most %d tokens (about 100,000 characters, where agent fetch tools cut pages) and its HTML at most %d tokens (about 1 MB, past which fetch tools refuse it); a page cut by the scanner's body cap fails. Proportional over the sample.", MaxPageTextTokens, MaxPageHTMLTokens),
		Fix:      "Split long pages into pages of one topic each, move inline data and scripts out of the HTML, and offer a markdown twin an agent can read whole.",
		Effort:   Medium}, readNeeds, eachPage(noSample, func(p *gather.ReadPage) (bool, string) {
		if !p.HTML.OK() || !p.HTML.LooksHTML() {
			return false, ""
		}
		html := Tokens(len(p.HTML.Body))
		switch {
		case p.HTML.Truncated:
			return true, "is larger than the scanner reads, so an agent's fetch tool cuts it too"
		case html > MaxPageHTMLTokens:
			return true, fmt.Sprintf("is ~%s tokens of HTML (over %s)", thousands(html), thousands(MaxPageHTMLTokens))
		case p.Page != nil && Tokens(p.Page.VisibleBytes) > MaxPageTextTokens:
			return true, fmt.Sprintf("has ~%s tokens of text (over %s): agents see only its start", thousands(Tokens(p.Page.VisibleBytes)), thousands(MaxPageTextTokens))
		}
		return true, ""
	}))
	readCheck(Definition{ID: "R.2", Name: "Markdown Size",
		LooksFor: "The markdown an agent gets for each sampled page (its .md twin, else its answer to Accept: text/markdown), in tokens.",
		Rule:     fmt.Sprintf("A page passes when its markdown is at most %d tokens and arrived whole. Not applicable when no sampled page has markdown.", MaxPageTextTokens),
		Fix:      "Split long markdown pages, or publish a short markdown page that links to the parts.",
		Effort:   Medium}, readNeeds, eachPage(because(noMarkdown), func(p *gather.ReadPage) (bool, string) {
		md := PageMarkdown(p)
		if md == nil {
			return false, ""
		}
		if t := Tokens(len(md.Body)); t > MaxPageTextTokens {
			return true, fmt.Sprintf("has ~%s tokens of markdown (over %s)", thousands(t), thousands(MaxPageTextTokens))
		}
		return true, ""
	}))
	readCheck(Definition{ID: "R.3", Name: "Content Starts Early",
		LooksFor: "Where each sampled page's main content (its first <main>, <article> or role=\"main\" element, else its first <h1>) begins in the page's text.",
		Rule:     fmt.Sprintf("A page passes when its main content begins within the first %d%% of its text; a page that marks no main content is not counted (its details say so). Proportional over the sample.", MaxContentStart),
		Fix:      "Put the page's content first: wrap it in <main>, and move long navigation, banners and menus after it or out of the HTML.",
		Effort:   Medium}, readNeeds, func(in gather.Source) ReadOutcome {
		o := perPage(in, func(p *gather.ReadPage) (bool, string) {
			at := ContentStart(p)
			if !answered(p) || at < 0 {
				return false, ""
			}
			if at > MaxContentStart {
				return true, fmt.Sprintf("begins its content %d%% into the page's text", at)
			}
			return true, ""
		})
		o.NA = noSample(in)
		for _, p := range gather.Get(in, gather.ReadSample).Pages {
			if answered(p) {
				o.NA = "No sampled HTML page marks its main content with <main>, <article>, role=\"main\" or an <h1>."
			}
		}
		return o
	})
	readCheck(Definition{ID: "R.4", Name: "Server-Rendered Content",
		LooksFor: "Each sampled page's HTML as the server sends it: the words of its main content and its scripts.",
		Rule:     fmt.Sprintf("A page passes when its HTML carries its content: at least %d words of main text, or no scripts to fill it in. An empty application shell fails: agents that do not run JavaScript see nothing. Proportional over the sample.", ShellWords),
		Fix:      "Render pages on the server (SSR, static generation or prerendering), or serve agents a markdown twin of each page.",
		Effort:   Large}, readNeeds, eachPage(noSample, ofAnswered(func(p *gather.ReadPage) string {
		if Shell(p) {
			return fmt.Sprintf("is an application shell: %d words of text until its scripts run", p.Page.MainWords)
		}
		return ""
	})))
	readCheck(Definition{ID: "R.5", Name: "Markdown at .md URLs",
		LooksFor: "Each sampled page's .md twin (the path with .md appended, index.md for a directory), the convention llms.txt links use.",
		Rule:     "A page passes when its twin answers 2xx with markdown, not HTML. Proportional over the sample.",
		Fix:      "Serve each page's markdown at its URL plus .md (most docs generators have an option or plugin for it), and link the .md URLs from llms.txt.",
		Effort:   Medium}, readNeeds, eachPage(noSample, ofAnswered(func(p *gather.ReadPage) string {
		if !TwinServed(p) {
			return "has no markdown at " + firstOf(p.TwinURL) + " (" + twinAbsence(p.Twin) + ")"
		}
		return ""
	})))
	readCheck(Definition{ID: "R.6", Name: "Markdown by Negotiation",
		LooksFor: "Each sampled page's answer to Accept: text/markdown.",
		Rule:     "A page passes when it answers with Content-Type text/markdown and Vary: Accept (what 1.17 asks of the homepage). Proportional over the sample.",
		Fix:      "Answer Accept: text/markdown with the page's markdown and Vary: Accept (a CDN rule or a few lines of server middleware).",
		Effort:   Medium}, readNeeds, eachPage(noSample, ofAnswered(func(p *gather.ReadPage) string {
		_, why := pageMarkdown(p.Negotiated) // "" when it passes
		return why
	})))
	readCheck(Definition{ID: "R.7", Name: "Markdown Matches the Page",
		LooksFor: "The distinct words of each sampled page's main content, and how many of them its markdown holds.",
		Rule:     fmt.Sprintf("A page passes when its markdown holds at least %d%% of them. Pages without markdown, or with under 20 distinct words, are not counted; not applicable when none is left.", MinParity),
		Fix:      "Generate the markdown from the same source as the HTML, so it carries the whole page: tables, code samples and tabbed content included.",
		Effort:   Medium}, readNeeds, eachPage(because("No sampled page has both markdown and enough HTML text to compare."), func(p *gather.ReadPage) (bool, string) {
		par := Parity(p)
		if par < 0 {
			return false, ""
		}
		if par < MinParity {
			return true, fmt.Sprintf("has markdown that holds %d%% of the page's words", par)
		}
		return true, ""
	}))
	readCheck(Definition{ID: "R.8", Name: "Honest Status Codes",
		LooksFor: "Each sampled page's status and what its 2xx pages show (a “not found” title or heading; a sign-in form with little else), bot challenges (Cloudflare's “Just a moment…”, CAPTCHAs) answered in place of a page, and the answer to a sibling of the first sampled page that cannot exist.",
		Rule:     "Each page passes unless it answers 2xx with a “not found” page or a sign-in wall, or answers any status with a bot challenge; the missing sibling counts as one more, passing when it answers 4xx. Proportional.",
		Fix:      "Answer missing pages with 404 (or 410) and pages behind a sign-in with 401 or 403, so agents can tell an answer from an error.",
		Effort:   Medium}, readNeeds, func(in gather.Source) ReadOutcome {
		o := perPage(in, func(p *gather.ReadPage) (bool, string) {
			if p.HTML == nil || p.HTML.Err != nil {
				return false, ""
			}
			if botChallenge.Match(p.HTML.Body) && p.HTML.LooksHTML() {
				return true, fmt.Sprintf("answers %d with a bot challenge instead of the page: agents cannot pass it", p.HTML.Status)
			}
			return true, Honesty(p)
		})
		doc := gather.Get(in, gather.ReadSample)
		if m := doc.Missing; m != nil && m.Err == nil {
			o.Of++
			if m.Status >= 400 && m.Status < 500 {
				o.OK++
			} else {
				o.Failed = append(o.Failed, PageWhy{URL: m.RequestURL, Why: fmt.Sprintf("a page that cannot exist answers %d instead of 404", m.Status)})
			}
		}
		o.Unit = "pages (one of them missing on purpose)"
		o.NA = noSample(in)
		return o
	})
	readCheck(Definition{ID: "R.9", Name: "Redirects",
		LooksFor: "How each sampled URL, as llms.txt and the sitemap list it, reaches its answer.",
		Rule:     "A page passes when it answers without a redirect or after at most 2 redirects on the same site, and does not redirect with <meta http-equiv=\"refresh\">. Proportional over the sample.",
		Fix:      "List final URLs in llms.txt and the sitemap, and redirect with one 301 on the same site.",
		Effort:   Small}, readNeeds, func(in gather.Source) ReadOutcome {
		site := gather.SiteOf(in).Target
		o := perListed(in, func(p *gather.ReadPage) (bool, string) {
			if p.HTML == nil || (p.HTML.Err != nil && len(p.HTML.Redirects) == 0) {
				return false, ""
			}
			return true, Redirect(p, site)
		})
		o.NA = noSample(in)
		return o
	})
	readCheck(Definition{ID: "R.10", Name: "Page Cache Headers",
		LooksFor: "Each sampled 2xx page's Cache-Control, ETag, Last-Modified and Expires headers.",
		Rule:     fmt.Sprintf("A page passes with no-cache or no-store; with a max-age (or s-maxage) of at most a day (%d s), or longer with must-revalidate; or with no max-age and a validator (ETag or Last-Modified). It fails with none of these headers, with only Expires, or with a max-age over a day and no must-revalidate, validator or not. Proportional over the sample.", MaxFreshAge),
		Fix:      "Send an ETag or Last-Modified with each page and a Cache-Control max-age of an hour or so, so agents and caches revalidate cheaply and never read stale pages.",
		Effort:   Small}, readNeeds, eachPage(noSample, ofAnswered(func(p *gather.ReadPage) string { return CacheProblem(p.HTML) })))
	readCheck(Definition{ID: "R.11", Name: "llms.txt Links Resolve",
		LooksFor: "The sampled pages that llms.txt links, fetched as it links them (the page, or its .md twin).",
		Rule:     "A link passes when it ends in a 2xx answer. Not applicable without llms.txt or when none of its links was sampled. Proportional.",
		Fix:      "Fix or remove the llms.txt links that fail, and link final URLs (not ones that redirect).",
		Effort:   Small}, needs(gather.ReadSample, gather.Llms), func(in gather.Source) ReadOutcome {
		o := perListed(in, func(p *gather.ReadPage) (bool, string) {
			r := LlmsAnswer(p)
			if r == nil {
				return false, ""
			}
			switch {
			case r.Err != nil:
				return true, "does not answer (" + fetch.Describe(r.Err) + ")"
			case !r.OK():
				return true, fmt.Sprintf("answers %d", r.Status)
			}
			return true, ""
		})
		o.Unit = "sampled llms.txt links"
		o.NA = "No llms.txt link was sampled (the site has no llms.txt, or it links no page on the site)."
		return o
	})
	readCheck(Definition{ID: "R.12", Name: "llms.txt Covers the Sitemap",
		LooksFor: "The sitemap's pages (its first 1,000) and llms.txt's links, compared without scheme, trailing slash, index file or .md extension.",
		Rule:     "Pass when llms.txt lists at least 95% of the sitemap's pages, partial at 50%, fail below. Not applicable without llms.txt or a sitemap that lists pages.",
		Fix:      "Generate llms.txt from the same source as the sitemap, or split it into sections that together list every page agents should read.",
		Effort:   Small}, needs(gather.ReadSample, gather.Llms), func(in gather.Source) ReadOutcome {
		doc := gather.Get(in, gather.ReadSample)
		o := ReadOutcome{Unit: "sitemap pages", Ladder: &[2]int{95, 50}}
		if !gather.Get(in, gather.Llms).Resp.Found() || len(doc.Sitemap) == 0 {
			o.NA = "Needs both an llms.txt and a sitemap that lists pages."
			return o
		}
		listed := map[string]bool{}
		for _, l := range doc.LlmsLinks {
			listed[NormalPage(l)] = true
		}
		for _, u := range doc.Sitemap {
			o.Of++
			if listed[NormalPage(u)] {
				o.OK++
			} else {
				o.Failed = append(o.Failed, PageWhy{URL: u, Why: "is in the sitemap but not in llms.txt"})
			}
		}
		return o
	})
	readCheck(Definition{ID: "R.13", Name: "Pages Point to llms.txt",
		LooksFor: "Each sampled HTML page, for a link to llms.txt or a line naming it (a directive agents that land on the page can follow).",
		Rule:     "A page passes when its HTML links or names llms.txt. Not applicable without llms.txt. Proportional over the sample.",
		Fix:      "Add a short line near the top of each page, visible or visually hidden, such as “For AI agents: a map of this site is at /llms.txt”, with a link.",
		Effort:   Small}, needs(gather.ReadSample, gather.Llms), ifLlms(eachPage(noSample, ofAnswered(func(p *gather.ReadPage) string {
		if !llmsMention.Match(p.HTML.Body) {
			return "does not link or name llms.txt"
		}
		return ""
	}))))
}

// The markdown checks read the markdown an agent gets for each page
// (PageMarkdownDoc): the facts the Agent-Friendly Documentation Spec's
// markdown checks report, judged page by page.
func init() {
	readCheck(Definition{ID: "R.14", Name: "Markdown Code Fences Close",
		LooksFor: "Each sampled page's markdown, for code fences (``` or ~~~) that open and never close.",
		Rule:     "A page passes when every code fence closes; an unclosed fence turns the rest of the page into code for an agent's parser. Pages whose markdown has no fence are not counted. Proportional over the sample.",
		Fix:      "Close every code fence with a line of at least as many backticks or tildes as opened it, and check the markdown generator's output for fences cut by templates.",
		Effort:   Small}, readNeeds, eachPage(because("No sampled page's markdown has a code fence."), func(p *gather.ReadPage) (bool, string) {
		d := PageMarkdownDoc(p)
		if d == nil || d.Fences == 0 {
			return false, ""
		}
		if d.UnclosedFence > 0 {
			return true, fmt.Sprintf("opens a code fence on line %d that never closes", d.UnclosedFence)
		}
		return true, ""
	}))
	readCheck(Definition{ID: "R.15", Name: "Markdown Points to llms.txt",
		LooksFor: "Each sampled page's markdown, for a line naming llms.txt: an agent that was handed one page can find the rest.",
		Rule:     "A page passes when its markdown names llms.txt. Not applicable without llms.txt or when no page has markdown. Proportional over the sample.",
		Fix:      "Start each markdown page with a line such as “> The map of these docs is at https://example.com/llms.txt”.",
		Effort:   Small}, needs(gather.ReadSample, gather.Llms), ifLlms(eachPage(because(noMarkdown), func(p *gather.ReadPage) (bool, string) {
		d := PageMarkdownDoc(p)
		switch {
		case d == nil:
			return false, ""
		case !d.NamesLlms:
			return true, "has markdown that does not name llms.txt"
		}
		return true, ""
	})))
	readCheck(Definition{ID: "R.16", Name: "Markdown Links Are Absolute",
		LooksFor: "The links of each sampled page's markdown.",
		Rule:     "A page passes when every link is an absolute URL (or a #fragment): markdown is often read away from its URL (pasted into a context, cached, quoted), where /docs/x and ../x lead nowhere. Pages with no links are not counted. Proportional over the sample.",
		Fix:      "Write absolute URLs in the markdown you serve agents (most generators can rewrite links on output).",
		Effort:   Small}, readNeeds, eachPage(because("No sampled page's markdown has links."), func(p *gather.ReadPage) (bool, string) {
		d := PageMarkdownDoc(p)
		if d == nil || len(d.Links) == 0 {
			return false, ""
		}
		if n, first := RelativeLinks(d); n > 0 {
			return true, fmt.Sprintf("has %s that only resolve against its own URL (first: %s)", plural(n, "link", "links"), clip.To(first, 80))
		}
		return true, ""
	}))
	readCheck(Definition{ID: "R.17", Name: "Markdown Section Headings",
		LooksFor: "The headings of each sampled page's markdown.",
		Rule:     "A page passes when its markdown has headings and does not repeat a generic one (Overview, Example, Usage, Parameters…): agents read pages in sections, and a section called “Example” for the fifth time has lost its context. Proportional over the pages with markdown.",
		Fix:      "Give every section a heading, and name repeated sections by what they hold (“Example: create an invoice”, “Python”).",
		Effort:   Small}, readNeeds, eachPage(because(noMarkdown), func(p *gather.ReadPage) (bool, string) {
		d := PageMarkdownDoc(p)
		if d == nil {
			return false, ""
		}
		return true, HeadingProblem(d)
	}))
	readCheck(Definition{ID: "R.18", Name: "Tab Panels Reach Agents",
		LooksFor: "Each sampled page's tab panels (role=\"tabpanel\"): their text in the HTML and, when the page has markdown, in the markdown.",
		Rule:     fmt.Sprintf("A page passes when every tab panel has text in the HTML the server sends and, when the page has markdown, the markdown holds at least %d%% of each panel's words (code samples in other languages, platform-specific steps). Pages without tabs are not counted. Proportional over the sample.", MinParity),
		Fix:      "Render every tab's content into the HTML (hidden is fine) and serialise each tab into the markdown as its own section, headed by the tab's name.",
		Effort:   Medium}, readNeeds, eachPage(because("No sampled page has tabbed content (role=\"tabpanel\")."), func(p *gather.ReadPage) (bool, string) {
		if !answered(p) || len(p.Page.TabPanels) == 0 {
			return false, ""
		}
		return true, TabProblem(p)
	}))
}

// TabProblem says what an agent misses of a page's tabbed content ("" when
// nothing): a panel that is empty until a script fills it, or, when the
// page has markdown, a panel whose words the markdown lacks.
func TabProblem(p *gather.ReadPage) string {
	empty, missing := 0, 0
	var have map[string]bool
	if md := PageMarkdown(p); md != nil {
		have = wordSet(string(md.Body))
	}
	for _, panel := range p.Page.TabPanels {
		want := wordSet(panel)
		if len(want) == 0 {
			empty++
			continue
		}
		if have == nil {
			continue
		}
		n := 0
		for w := range want {
			if have[w] {
				n++
			}
		}
		if 100*n < MinParity*len(want) {
			missing++
		}
	}
	switch {
	case empty > 0:
		return fmt.Sprintf("has %s of %d with no text until a script fills it", plural(empty, "tab panel", "tab panels"), len(p.Page.TabPanels))
	case missing > 0:
		return fmt.Sprintf("has %s of %d whose content its markdown leaves out", plural(missing, "tab panel", "tab panels"), len(p.Page.TabPanels))
	}
	return ""
}

// botChallenge recognises a bot-protection interstitial (Cloudflare,
// Akamai, DataDome, a CAPTCHA) answered in place of the page.
var botChallenge = regexp.MustCompile(`(?i)<title>\s*(just a moment|attention required|access denied|are you a robot|verify you are human|security check)|challenge-platform|cf-chl-|captcha-delivery|g-recaptcha|h-captcha`)

// PageMarkdownDoc is PageMarkdown read as markdown (nil when there is none).
func PageMarkdownDoc(p *gather.ReadPage) *markdown.Doc {
	switch md := PageMarkdown(p); {
	case md == nil:
		return nil
	case md == p.Twin:
		return p.TwinDoc
	}
	return p.NegotiatedDoc
}

// genericHeading: section titles that say nothing once a section is read
// on its own, as agents read chunks of a page.
var genericHeading = map[string]bool{"overview": true, "introduction": true, "example": true, "examples": true, "usage": true,
	"notes": true, "note": true, "details": true, "more": true, "parameters": true, "response": true, "request": true, "returns": true}

// HeadingProblem says what is wrong with a markdown page's headings ("" when nothing is).
func HeadingProblem(d *markdown.Doc) string {
	if len(d.Headings) == 0 {
		return "has no headings to find a section by"
	}
	seen := map[string]int{}
	for _, h := range d.Headings {
		k := strings.ToLower(strings.TrimSpace(h.Text))
		seen[k]++
		if seen[k] == 2 && genericHeading[k] {
			return fmt.Sprintf("repeats the heading “%s”, which says nothing once a section is read on its own", clip.To(h.Text, 60))
		}
	}
	return ""
}

// RelativeLinks counts a markdown page's links that only resolve against
// the page's own URL (root- or path-relative; fragments and absolute
// URLs do not count), and gives the first.
func RelativeLinks(d *markdown.Doc) (int, string) {
	n, first := 0, ""
	for _, l := range d.Links {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if u, err := url.Parse(l); err == nil && u.Scheme == "" && u.Host == "" {
			n++
			if first == "" {
				first = l
			}
		}
	}
	return n, first
}

// LlmsAnswer is the answer to the URL llms.txt listed for a page (nil when
// the page did not come from llms.txt).
func LlmsAnswer(p *gather.ReadPage) *fetch.Response {
	link, _, _ := strings.Cut(p.LlmsLink, "#") // a fragment is not sent
	switch {
	case link == "":
		return nil
	case link == p.TwinURL:
		return p.Twin
	case link == p.URL:
		return p.HTML
	}
	return nil
}

func twinAbsence(r *fetch.Response) string {
	switch {
	case r == nil:
		return "not asked"
	case r.Err != nil:
		return fetch.Describe(r.Err)
	case !r.OK():
		return fmt.Sprintf("%d", r.Status)
	case r.LooksHTML():
		return "it answers with HTML"
	case !r.Complete():
		return "the answer was cut"
	}
	return "empty"
}
