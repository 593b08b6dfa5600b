package stack_test

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/emulation"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/edgetest"
	"github.com/agentready/agentready/internal/testing/testenv"
)

// browserEnv: two free scans a day and a payee, so the third scan is the
// 402 the page must explain.
func browserEnv(k string) string {
	return map[string]string{"AGENTREADY_FREE_DAILY": "2", "AGENTREADY_TOKEN_KEYS": edgetest.TokenKeys, "AGENTREADY_PAYTO": edgetest.PayTo}[k]
}

// page is one Chromium tab on the scan page; every failed step saves a
// screenshot under the test's temp dir.
type page struct {
	t   *testing.T
	ctx context.Context
	dir string
}

func (p *page) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.fatalf("%s: %v", what, err)
	}
}

func value[T any](p *page, what string, a chromedp.Action[T]) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		p.fatalf("%s: %v", what, err)
	}
	return v
}

func (p *page) fatalf(format string, args ...any) {
	p.t.Helper()
	shotCtx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	where := "no screenshot"
	if png, err := chromedp.Run(shotCtx, chromedp.FullScreenshot(90)); err == nil {
		path := filepath.Join(p.dir, strings.NewReplacer("/", "_", " ", "_").Replace(p.t.Name())+".png")
		if os.WriteFile(path, png, 0o644) == nil {
			where = "screenshot " + path
		}
	}
	p.t.Fatalf(format+" ("+where+")", args...)
}

func (p *page) poll(what, predicate string) {
	p.t.Helper()
	value(p, what, chromedp.Poll[bool](predicate, chromedp.WithPollingTimeout(25*time.Second)))
}

// cspWatch runs in every document of a watched tab before the page's own
// scripts, keeping each Content-Security-Policy violation the document
// reports: what the policy blocked is broken on the page (a script not
// run, a style not applied), whether or not anything else shows it.
const cspWatch = `window.__csp = []; document.addEventListener("securitypolicyviolation", e => window.__csp.push(e.effectiveDirective + " blocked " + (e.blockedURI || "?") + " at " + e.sourceFile + ":" + e.lineNumber));`

// watchCSP makes every document the tab opens from now on keep its CSP violations.
func (p *page) watchCSP() {
	p.t.Helper()
	if _, err := chromedp.Call(p.ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: cspWatch}); err != nil {
		p.t.Fatalf("watch CSP violations: %v", err)
	}
}

// cspClean fails unless the document in view reported no CSP violation
// (and the watch ran in it).
func (p *page) cspClean(what string) {
	p.t.Helper()
	got := value(p, "CSP violations on "+what, chromedp.Evaluate[[]string](`window.__csp || ["the CSP watch did not run in this document"]`))
	if len(got) > 0 {
		p.fatalf("the Content-Security-Policy blocked %d things on %s: %v", len(got), what, got)
	}
}

type axeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// axe runs axe-core inside the page and fails on any serious or critical
// WCAG 2.x A/AA violation.
func (p *page) axe(what, src string) {
	p.t.Helper()
	value(p, "load axe-core", chromedp.Evaluate[*runtime.RemoteObject](src))
	out := value(p, "axe on "+what, chromedp.Evaluate[[]axeViolation](`axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]}}).then(r =>
		r.violations.filter(v => v.impact === "serious" || v.impact === "critical").map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(" ")).slice(0, 5)})))`, chromedp.EvalAwaitPromise))
	for _, v := range out {
		p.t.Errorf("axe on %s: %s (%s): %s at %v", what, v.ID, v.Impact, v.Help, v.Nodes)
	}
	if len(out) > 0 {
		p.fatalf("axe on %s: %d serious or critical violations", what, len(out))
	}
}

const allChecksDone = `document.querySelectorAll("#result section.checks li.check:not(.pending)").length === 48 && document.getElementById("score-value") !== null && !document.querySelector("#scan button[type=submit]").disabled`

// The scan page in real Chromium against the real stack (edge + origin) and
// a loopback fixture site: type the URL and press Enter, watch the 48
// checks arrive, read the same score as the JSON report, open a failed
// check, copy a badge snippet, load the shareable URL with JavaScript off,
// spend the allowance and read the 402 explanation; axe-core finds no
// serious or critical violation on the homepage, the finished report, the
// showcase and /how-we-score.
func TestScanPageInBrowser(t *testing.T) {
	chromium := testenv.Chromium(t)
	axePath, missing := testenv.NodeFile("axe-core", "axe.min.js")
	if missing != "" {
		testenv.Require(t, missing)
		return
	}
	axeSrc, err := os.ReadFile(axePath)
	if err != nil {
		t.Fatal(err)
	}
	svc := start(t, stack.Options{Env: browserEnv})
	s := site(t, "full")

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 900))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	tabCtx, cancelTab := chromedp.NewContext(allocCtx)
	defer cancelTab()
	// The first run starts the browser and lives as long as its context:
	// without a timeout, so the per-step timeouts below stop steps, not Chromium.
	if err := chromedp.Do(tabCtx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	p := &page{t: t, ctx: tabCtx, dir: t.TempDir()}
	p.watchCSP()

	p.do("open /", chromedp.Navigate(svc.URL+"/"), chromedp.WaitVisible(chromedp.ID("scan-url")))
	// The first Tab reaches the skip link, which appears when focused.
	p.do("Tab", chromedp.KeyEvent("\t"))
	if skip := value(p, "skip link", chromedp.Evaluate[string](`document.activeElement.className + " " + (document.activeElement.getBoundingClientRect().left >= 0)`)); skip != "skip true" {
		p.fatalf("the first Tab focuses %q, want the visible skip link", skip)
	}
	p.axe("/", string(axeSrc))
	p.cspClean("/")

	p.do("type the URL and press Enter", chromedp.SendKeys(chromedp.ID("scan-url"), s.URL+"\r"))
	// The script then swaps in the edge's rendering of this very report.
	p.poll("48 checks, the score, and the server's rendering", allChecksDone+` && document.getElementById("result").dataset.server === "1"`)
	// The script drew the report (the ladder's bars included) before the
	// swap: none of it, nor the swapped-in rendering, broke the policy.
	p.cspClean("the streamed report")
	if n := value(p, "count checks", chromedp.Evaluate[int](`document.querySelectorAll("#result section.checks li.check").length`)); n != 48 {
		p.fatalf("%d checks rendered, want 48", n)
	}
	// The identity and commerce signals sit apart from the 48 checks.
	if n := value(p, "count signals", chromedp.Evaluate[int](`document.querySelectorAll("#result #signals li.check").length`)); n != 5 {
		p.fatalf("%d signals rendered, want 5", n)
	}
	resp, b := testenv.Get(t, svc.URL+"/api/report?url="+url.QueryEscape(s.URL))
	var rep report.Result
	if resp.StatusCode != 200 || json.Unmarshal(b, &rep) != nil {
		p.fatalf("the JSON report: %d %.200s", resp.StatusCode, b)
	}
	score := value(p, "read the score", chromedp.Text(chromedp.ID("score-value")))
	if score != strconv.Itoa(rep.Score.Value) {
		p.fatalf("the page shows score %q, the JSON report %d", score, rep.Score.Value)
	}
	if progress := value(p, "read the progress", chromedp.Text(chromedp.ID("progress"))); !strings.Contains(progress, "48 of 48") {
		p.fatalf("progress reads %q", progress)
	}

	// A failed check opens to its recommendation.
	var failedID string
	for _, c := range rep.Checks {
		if c.Status == report.Fail {
			failedID = c.ID
			break
		}
	}
	if failedID == "" {
		t.Fatal("the fixture site has no failed check to open")
	}
	want, _ := rep.Check(failedID)
	sel := `[id="check-` + failedID + `"]`
	// By keyboard: focus its summary, press Enter; the focus ring shows.
	p.do("open failed check "+failedID, chromedp.Focus(chromedp.CSS(sel+" summary")), chromedp.KeyEvent("\r"))
	if ring := value(p, "focus ring", chromedp.Evaluate[string](`(s => s.outlineStyle + " " + s.outlineWidth)(getComputedStyle(document.activeElement))`)); ring != "solid 3px" {
		p.fatalf("the focused summary shows outline %q, want a visible 3px ring", ring)
	}
	open := value(p, "is it open", chromedp.Evaluate[bool](`document.querySelector('`+sel+` details').open`))
	rec := value(p, "read its recommendation", chromedp.Text(chromedp.CSS(sel+" .rec"), chromedp.NodeVisible))
	if !open || !strings.Contains(rec, strings.ReplaceAll(want.Recommendation, "`", "")) {
		p.fatalf("check %s open=%v, recommendation %q, want %q", failedID, open, rec, want.Recommendation)
	}
	// Scrolled into view and legible at a phone's width too.
	p.do("phone width", chromedp.EmulateViewport(360, 740), chromedp.ScrollIntoView(chromedp.CSS(sel+" .rec")))
	if w := value(p, "page width", chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > 360 {
		p.fatalf("at 360 px the page is %d px wide: it scrolls sideways", w)
	}
	p.do("desktop width", chromedp.EmulateViewport(1280, 900))

	// Copy the Markdown badge snippet through the real clipboard.
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := chromedp.CallBrowser(tabCtx, browser.SetPermission, browser.SetPermissionParams{Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted, Origin: svc.URL}); err != nil {
			t.Fatalf("grant %s: %v", name, err)
		}
	}
	snippet := value(p, "read the snippet", chromedp.Value(chromedp.ID("badge-0")))
	p.do("copy it", chromedp.Click(chromedp.CSS("#badge-0 + button.copy")))
	p.poll("the copy is confirmed", `document.querySelector("#badge-0 + button.copy").textContent === "Copied"`)
	clip := value(p, "read the clipboard", chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
	if clip != snippet || !strings.Contains(snippet, "/api/badge?url=") {
		p.fatalf("clipboard %q, snippet %q", clip, snippet)
	}
	// The badge preview is a real badge, and the style changes it and the snippets together.
	p.poll("the badge preview loads", `document.getElementById("badge-preview").complete && document.getElementById("badge-preview").naturalWidth > 0`)
	p.do("choose flat-square", chromedp.SetValue(chromedp.ID("badge-style"), "flat-square"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("badge-style").dispatchEvent(new Event("change")), undefined`, func(p *runtime.EvaluateParams) { p.ReturnByValue = nil }))
	styled := value(p, "the styled snippets", chromedp.Evaluate[[]string](`[document.getElementById("badge-preview").getAttribute("src"), document.getElementById("badge-0").value, document.getElementById("badge-2").value]`))
	if !strings.HasSuffix(styled[0], "&style=flat-square") || !strings.Contains(styled[1], styled[0]+")") || !strings.Contains(styled[2], url.QueryEscape("&style=flat-square")) {
		p.fatalf("badge style not applied everywhere: %q", styled)
	}
	p.poll("the styled preview loads", `document.getElementById("badge-preview").complete && document.getElementById("badge-preview").naturalWidth > 0`)
	p.axe("the finished report", string(axeSrc))
	// The dark scheme has its own colours: they must pass too.
	if _, err := chromedp.Call(tabCtx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}); err != nil {
		t.Fatal(err)
	}
	if bg := value(p, "dark background", chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`)); bg != "rgb(18, 18, 22)" {
		p.fatalf("the dark scheme did not apply: background %s", bg)
	}
	p.axe("the finished report, dark", string(axeSrc))
	if _, err := chromedp.Call(tabCtx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{}); err != nil {
		t.Fatal(err)
	}

	share := value(p, "the shareable URL", chromedp.Location())
	if !strings.Contains(share, "?url=") {
		p.fatalf("the address bar did not become a shareable URL: %s", share)
	}

	// The showcase now lists the site; it and /how-we-score pass axe too.
	for _, path := range []string{"/showcase", "/how-we-score"} {
		p.do("open "+path, chromedp.Navigate(svc.URL+path), chromedp.WaitVisible(chromedp.CSS("h1")))
		p.axe(path, string(axeSrc))
		p.cspClean(path)
	}

	// The same URL without JavaScript: the edge's HTML carries the score.
	noJS, cancelNoJS := chromedp.NewContext(allocCtx)
	defer cancelNoJS()
	q := &page{t: t, ctx: noJS, dir: p.dir}
	if _, err := chromedp.Call(noJS, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	q.do("the shareable URL without JavaScript", chromedp.Navigate(share))
	plain := value(q, "its score", chromedp.Text(chromedp.ID("score-value")))
	checks := value(q, "its checks", chromedp.Evaluate[int](`document.querySelectorAll("section.checks li.check").length`))
	if plain != score || checks != 48 {
		q.fatalf("without JavaScript: score %q (want %s), %d checks", plain, score, checks)
	}

	// Scan again spends the second free scan; the third is refused with a
	// 402 the page explains.
	p.do("back to the report", chromedp.Navigate(share), chromedp.WaitVisible(chromedp.ID("rescan")))
	p.do("scan again", chromedp.Click(chromedp.ID("rescan")))
	p.poll("the second scan finishes", allChecksDone)
	p.do("scan over the allowance", chromedp.Click(chromedp.ID("rescan")))
	refusal := value(p, "read the refusal", chromedp.Text(chromedp.ID("refusal"), chromedp.NodeVisible))
	p.cspClean("the report after two scans and a refusal")
	for _, w := range []string{"0 of 2 free scans remain", "reset in", "/api/agent/token", "deep scan"} {
		if !strings.Contains(refusal, w) {
			p.fatalf("the 402 explanation lacks %q: %s", w, refusal)
		}
	}
}
