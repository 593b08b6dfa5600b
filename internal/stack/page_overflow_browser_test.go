package stack_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/testenv"
)

// overflowState is what the overflow test reads of a page: how wide it is,
// the header links past the right edge, Fix next's instructions cut short
// and the starters whose copy button covers their code.
const overflowState = `(() => {
  const hit = (a, b) => a.left < b.right && a.right > b.left && a.top < b.bottom && a.bottom > b.top;
  return {
    scrollWidth: document.documentElement.scrollWidth,
    width: innerWidth,
    offLinks: [...document.querySelectorAll(".top a")].filter(a => a.getBoundingClientRect().right > innerWidth).map(a => a.textContent),
    cutFixes: [...document.querySelectorAll("#fix-next .sfix")].filter(p => {
      const s = getComputedStyle(p);
      return p.scrollHeight > p.clientHeight + 1 || s.textOverflow === "ellipsis" || s.webkitLineClamp !== "none";
    }).map(p => p.closest("li").dataset.id),
    coveredCode: [...document.querySelectorAll(".starter, .snippet")].filter(s => {
      const b = s.querySelector("button.copy"), code = s.querySelector("pre");
      return b && code && b.offsetParent !== null && hit(b.getBoundingClientRect(), code.getBoundingClientRect());
    }).length,
    clippedCode: [...document.querySelectorAll("pre")].filter(p => !["auto", "scroll"].includes(getComputedStyle(p).overflowX)).length,
  };
})()`

type overflowGot struct {
	ScrollWidth, Width int
	OffLinks           []string
	CutFixes           []string
	CoveredCode        int
	ClippedCode        int
}

// Nothing a site sends or a visitor types widens a page past the screen, in
// real Chromium against the real stack: the report of a site whose
// robots.txt declares a sitemap with a 300-character unbroken name (which
// "Since the last scan" quotes) at 360 and 1280 px, and the 400 page of a
// 3,000-character url=. At both widths the header's links are all on
// screen, Fix next's instructions are shown in full, every code block
// scrolls rather than clips, and no copy button covers the code it copies.
func TestPagesDoNotOverflow(t *testing.T) {
	chromium := testenv.Chromium(t)
	svc := start(t, stack.Options{Env: reportEnv})
	dir := siteCopy(t, "peer")
	s, err := fixture.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	last := scanSite(t, svc, s.URL, false)
	long := "sitemap-" + strings.Repeat("y", 300) + ".xml"
	robots, err := os.ReadFile(filepath.Join(dir, "robots.txt"))
	if err != nil {
		t.Fatal(err)
	}
	robots = regexp.MustCompile(`(?m)^Sitemap: .*$`).ReplaceAll(robots, []byte("Sitemap: {{ORIGIN}}/"+long))
	if err := os.WriteFile(filepath.Join(dir, "robots.txt"), robots, 0o644); err != nil {
		t.Fatal(err)
	}
	nextSecond(t, last.Timestamp)
	scanSite(t, svc, s.URL, true)
	// A site with every block beside the checks: findings across checks,
	// a profile and a read suite with its table of sampled pages.
	rs, err := fixture.Start(siteCopy(t, "read-api"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rs.Close)
	scanSite(t, svc, rs.URL, false)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.Flag("hide-scrollbars", true))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	tabCtx, cancelTab := chromedp.NewContext(allocCtx)
	defer cancelTab()
	if err := chromedp.Do(tabCtx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	p := &page{t: t, ctx: tabCtx, dir: t.TempDir()}

	report := svc.URL + "/report?url=" + url.QueryEscape(s.URL)
	huge := svc.URL + "/report?url=" + strings.Repeat("a", 3000) + ".example"
	for _, pg := range []struct{ name, url, ready string }{
		{"the report", report, `document.getElementById("diff") !== null && document.querySelector("#fix-next .starter button.copy") !== null`},
		{"the 400 page of a 3,000-character url=", huge, `document.getElementById("scan-now") !== null`},
		{"the report with a read suite", svc.URL + "/report?url=" + url.QueryEscape(rs.URL), `document.getElementById("read-pages") !== null && document.getElementById("interactions") !== null`},
		{"the report judged as another profile", svc.URL + "/report?url=" + url.QueryEscape(rs.URL) + "&profile=commerce", `document.getElementById("profile-others") !== null`},
	} {
		for _, width := range []int64{360, 1280} {
			name := pg.name + " at " + map[int64]string{360: "360 px", 1280: "1280 px"}[width]
			p.do(name, chromedp.EmulateViewport(width, 800), chromedp.Navigate(pg.url))
			p.poll(name+": loaded", pg.ready+` && document.documentElement.classList.contains("js")`)
			got := value(p, name+": overflow", chromedp.Evaluate[overflowGot](overflowState))
			if got.ScrollWidth > got.Width || got.Width != int(width) {
				p.fatalf("%s: the page is %d px wide in a %d px viewport", name, got.ScrollWidth, got.Width)
			}
			if len(got.OffLinks) > 0 || len(got.CutFixes) > 0 || got.CoveredCode > 0 || got.ClippedCode > 0 {
				p.fatalf("%s: header links off screen %q, Fix next instructions cut short %q, %d code blocks under their copy button, %d code blocks that clip", name, got.OffLinks, got.CutFixes, got.CoveredCode, got.ClippedCode)
			}
		}
	}
	// The case is exercised: the report quotes the long name, and the 400
	// page echoes a bounded part of the address.
	p.do("the report", chromedp.Navigate(report), chromedp.WaitVisible(chromedp.ID("diff")))
	if !value(p, "the long name in Since the last scan", chromedp.Evaluate[bool](`document.getElementById("diff").textContent.includes(`+jsString(long)+`)`)) {
		p.fatalf("Since the last scan does not quote %s", long)
	}
	p.do("the 400 page", chromedp.Navigate(huge), chromedp.WaitVisible(chromedp.CSS("h1")))
	if n := value(p, "the echoed address", chromedp.Evaluate[int](`Math.max(document.querySelector("h1 .host").textContent.length, document.querySelector("#scan-now button").textContent.length)`)); n > 200 {
		p.fatalf("the 400 page echoes %d characters of the address", n)
	}
}
