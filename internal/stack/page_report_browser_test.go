package stack_test

import (
	"context"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/chromedp"

	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/testenv"
	origbrowser "github.com/agentready/agentready/origin/browser"
)

// firstScreen lists what must be in view without scrolling, with its box:
// the gauge, the level reached, the ladder, Fix next's heading and its
// steps (on a phone, where each step's instructions wrap in full, the first
// step whole and the others' headings and verdicts), and the site's
// thumbnail.
const firstScreen = `((steps) => {
  const boxes = [];
  for (const sel of ["#gauge", "#level-reached", "#ladder", "#fix-h", ...steps, "#shot"]) {
    const els = document.querySelectorAll(sel);
    if (els.length === 0) boxes.push({sel, missing: true});
    els.forEach((e, i) => { const r = e.getBoundingClientRect(); boxes.push({sel: sel + "#" + i, top: r.top, bottom: r.bottom, left: r.left, right: r.right}); });
  }
  return {boxes, width: innerWidth, height: innerHeight, scrollY, scrollWidth: document.documentElement.scrollWidth};
})`

type screenBox struct {
	Sel                      string
	Missing                  bool
	Top, Bottom, Left, Right float64
}

type screenBoxes struct {
	Boxes         []screenBox
	Width, Height float64
	ScrollY       float64
	ScrollWidth   float64
}

func setScheme(t *testing.T, ctx context.Context, scheme string) {
	t.Helper()
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
		t.Fatal(err)
	}
}

// visibleChecks counts the check rows a reader sees (the filter hides the others).
const visibleChecks = `[...document.querySelectorAll("#checks li.check")].filter(li => li.offsetParent !== null).length`

// The report a site owner acts on, in real Chromium against the real stack
// (the origin capturing the site's thumbnail with Chromium too):
//   - at 1280×800 and 360×800 the gauge, the level, the ladder, Fix next
//     with its three steps (at 360 the first whole, the others' headings
//     and verdicts) and the thumbnail are inside the viewport, the page
//     unscrolled and not wider than the screen (element boxes);
//   - a starter of Fix next copies with its button;
//   - the filter works in place with JavaScript (no navigation, the address
//     follows) and as links without it;
//   - without JavaScript: the same score, Fix next, filter and 48 checks;
//   - axe-core finds no serious or critical issue on the homepage, the
//     report in both schemes under each filter, the showcase and
//     /how-we-score.
func TestReportPageInBrowser(t *testing.T) {
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
	svc := start(t, stack.Options{Env: reportEnv, Browser: &origbrowser.Config{ExecPath: chromium, Tabs: 1}})
	s := site(t, "peer")
	q := url.QueryEscape(s.URL)
	scanSite(t, svc, s.URL, false)
	served := readReport(t, svc, s.URL)
	if served.Plan == nil || len(served.Plan.Steps) < 3 {
		t.Fatalf("the peer fixture's plan has fewer than 3 steps: %+v", served.Plan)
	}
	var planIDs []string
	for _, st := range served.Plan.Steps[:3] {
		planIDs = append(planIDs, st.ID)
	}
	count := map[string]int{}
	for _, c := range served.Checks {
		count[string(c.Status)]++
	}
	awaitScreenshot(t, svc, s.URL)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.Flag("hide-scrollbars", true))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	tabCtx, cancelTab := chromedp.NewContext(allocCtx)
	defer cancelTab()
	if err := chromedp.Do(tabCtx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	p := &page{t: t, ctx: tabCtx, dir: t.TempDir()}
	p.watchCSP()
	report := svc.URL + "/report?url=" + q

	for _, v := range []struct {
		name          string
		width, height int64
		steps         string
	}{{"desktop", 1280, 800, `["#fix-next > li.step"]`}, {"phone", 360, 800, `["#fix-next > li.step:first-child", "#fix-next > li.step .sh", "#fix-next > li.step .meta"]`}} {
		p.do(v.name+": open the report", chromedp.EmulateViewport(v.width, v.height), chromedp.Navigate(report))
		p.poll(v.name+": the thumbnail loads", `!document.getElementById("shot").hidden && document.querySelector("#shot img").complete`)
		got := value(p, v.name+": the first screen's boxes", chromedp.Evaluate[screenBoxes](firstScreen+"("+v.steps+")"))
		if got.ScrollY != 0 || got.ScrollWidth > got.Width {
			p.fatalf("%s: scrolled to %v, %v px wide in %v", v.name, got.ScrollY, got.ScrollWidth, got.Width)
		}
		steps := 0
		for _, b := range got.Boxes {
			if strings.HasPrefix(b.Sel, "#fix-next > li.step#") || strings.HasPrefix(b.Sel, "#fix-next > li.step .sh#") {
				steps++
			}
			if b.Missing || b.Top < 0 || b.Left < 0 || b.Bottom > got.Height || b.Right > got.Width || b.Bottom <= b.Top {
				p.fatalf("%s (%vx%v): %s is not inside the first screen: %+v", v.name, got.Width, got.Height, b.Sel, b)
			}
		}
		if steps != 3 {
			p.fatalf("%s: Fix next shows %d steps, want 3", v.name, steps)
		}
		p.cspClean(v.name + ": the report")
		// The thumbnail opens the screenshot full size.
		if href := value(p, "the thumbnail's link", chromedp.Evaluate[string](`document.querySelector("#shot a").href`)); href != svc.URL+"/api/screenshot?url="+url.QueryEscape(served.URL) {
			p.fatalf("%s: the thumbnail links to %q", v.name, href)
		}
	}
	p.do("desktop", chromedp.EmulateViewport(1280, 800))

	ids := value(p, "Fix next", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#fix-next > li")].map(li => li.dataset.id)`))
	if !slices.Equal(ids, planIDs) {
		p.fatalf("Fix next lists %v, the plan begins %v", ids, planIDs)
	}
	// Copy the first starter through the real clipboard.
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := chromedp.CallBrowser(tabCtx, browser.SetPermission, browser.SetPermissionParams{Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted, Origin: svc.URL}); err != nil {
			t.Fatalf("grant %s: %v", name, err)
		}
	}
	first := `#fix-next > li:first-child .starter button.copy`
	p.do("copy the first starter", chromedp.Click(chromedp.CSS(first)))
	p.poll("the copy is confirmed", `document.querySelector("`+first+`").textContent === "Copied"`)
	if clip := value(p, "read the clipboard", chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise)); clip != served.Plan.Steps[0].Snippet {
		p.fatalf("the clipboard holds %q, the plan's first starter is %q", clip, served.Plan.Steps[0].Snippet)
	}

	// The filter in place: no navigation, the rows of one verdict, the address follows.
	p.do("mark the document", chromedp.Evaluate[chromedp.Void](`window.__same = 1, undefined`))
	p.do("filter: partial", chromedp.Click(chromedp.CSS(`.filters a[data-filter="partial"]`)))
	if n := value(p, "count partial rows", chromedp.Evaluate[int](visibleChecks)); n != count["partial"] {
		p.fatalf("the partial filter shows %d checks, the report has %d partial", n, count["partial"])
	}
	state := value(p, "after the filter", chromedp.Evaluate[string](`(window.__same === 1) + " " + location.search + " " + document.querySelector(".filters a[aria-current]").dataset.filter`))
	if !strings.HasPrefix(state, "true ") || !strings.Contains(state, "filter=partial") || !strings.HasSuffix(state, " partial") {
		p.fatalf("the filter reloaded the page, or the address or the current link did not follow: %q", state)
	}
	p.do("filter: all", chromedp.Click(chromedp.CSS(`.filters a[data-filter="all"]`)))
	if n := value(p, "count rows", chromedp.Evaluate[int](visibleChecks)); n != 48 {
		p.fatalf("the all filter shows %d checks", n)
	}
	p.cspClean("the report after copying and filtering")

	// The icons exist: Chromium's own request for them (and every other
	// request of the pages) logs no error.
	consoleTab, cancelConsole := chromedp.NewContext(allocCtx)
	defer cancelConsole()
	if _, err := chromedp.Call(consoleTab, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	messages := chromedp.Console(consoleTab)
	ct := &page{t: t, ctx: consoleTab, dir: p.dir}
	for _, path := range []string{"/", "/report?url=" + q, "/how-we-score"} {
		ct.do("open "+path, chromedp.Navigate(svc.URL+path), chromedp.WaitVisible(chromedp.CSS("h1")))
		ct.poll(path+": its icon and images load", `[...document.images].every(i => i.complete) && fetch("/favicon.ico").then(r => r.ok)`)
	}
	ct.do("the end of the messages", chromedp.Evaluate[chromedp.Void](`console.info("end of the pages"), undefined`))
	for m, err := range messages {
		if err != nil {
			t.Fatal(err)
		}
		if m.Text == "end of the pages" {
			break
		}
		if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
			t.Errorf("console %s at %s: %s", m.Type, m.URL, m.Text)
		}
	}
	cancelConsole()

	// axe-core on every page, the report in both schemes and each filter.
	p.do("open /", chromedp.Navigate(svc.URL+"/"), chromedp.WaitVisible(chromedp.ID("scan-url")))
	for _, scheme := range []string{"light", "dark"} {
		setScheme(t, tabCtx, scheme)
		p.axe("/ ("+scheme+")", string(axeSrc))
		for _, f := range []string{"all", "failed", "partial", "passed", "na"} {
			p.do("open the report, filter "+f, chromedp.Navigate(report+"&filter="+f), chromedp.WaitVisible(chromedp.ID("gauge")))
			p.axe("the report, filter "+f+" ("+scheme+")", string(axeSrc))
			p.cspClean("the report, filter " + f)
		}
	}
	setScheme(t, tabCtx, "light")
	for _, path := range []string{"/showcase", "/how-we-score", "/docs"} {
		p.do("open "+path, chromedp.Navigate(svc.URL+path), chromedp.WaitVisible(chromedp.CSS("h1")))
		p.axe(path, string(axeSrc))
		p.cspClean(path)
	}

	// Without JavaScript: the same score, Fix next, 48 checks, and the filter as links.
	noJS, cancelNoJS := chromedp.NewContext(allocCtx)
	defer cancelNoJS()
	nj := &page{t: t, ctx: noJS, dir: p.dir}
	if _, err := chromedp.Call(noJS, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	nj.do("the report without JavaScript", chromedp.Navigate(report), chromedp.WaitVisible(chromedp.ID("gauge")))
	plain := value(nj, "its score", chromedp.Text(chromedp.ID("score-value")))
	checks := value(nj, "its checks", chromedp.Evaluate[int](`document.querySelectorAll("#checks li.check").length`))
	noJSIDs := value(nj, "its Fix next", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#fix-next > li")].map(li => li.dataset.id)`))
	starter := value(nj, "its first starter", chromedp.Text(chromedp.CSS(`#fix-next > li:first-child .starter code`)))
	if plain != strconv.Itoa(served.Score.Value) || checks != 48 || !slices.Equal(noJSIDs, planIDs) || strings.TrimSpace(starter) != strings.TrimSpace(served.Plan.Steps[0].Snippet) {
		nj.fatalf("without JavaScript: score %q (want %d), %d checks, Fix next %v (want %v), first starter %q", plain, served.Score.Value, checks, noJSIDs, planIDs, starter)
	}
	if n := value(nj, "copy buttons shown", chromedp.Evaluate[int](`[...document.querySelectorAll("button.copy")].filter(b => b.offsetParent !== null).length`)); n != 0 {
		nj.fatalf("without JavaScript %d copy buttons that cannot copy are shown", n)
	}
	nj.do("filter: failed, as a link", chromedp.Click(chromedp.CSS(`.filters a[data-filter="failed"]`)), chromedp.WaitVisible(chromedp.CSS(`.filters a[data-filter="failed"][aria-current]`)))
	loc := value(nj, "where the link led", chromedp.Location())
	if n := value(nj, "count failed rows", chromedp.Evaluate[int](visibleChecks)); n != count["fail"] || !strings.Contains(loc, "filter=failed") {
		nj.fatalf("without JavaScript the failed filter shows %d checks (the report has %d failed) at %s", n, count["fail"], loc)
	}
}
