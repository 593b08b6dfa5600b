package stack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"image/png"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin/browser"
)

var writeScreenshots = flag.Bool("screenshots", false, "write docs/screenshots/*.png (make screenshots)")

// screenshotHost is the name the screenshots show for the fixture site,
// instead of its loopback address and random port.
const screenshotHost = "peer.example"

// stableText makes a capture depend on the page only: the fixture's
// address (a random port) reads screenshotHost, as do the starters' names
// made from it, and each distinct scan time, oldest first, is a fixed date
// a week after the one before.
const stableText = `((swaps) => {
  const swap = s => swaps.reduce((s, [from, to]) => s.split(from).join(to), s);
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n; (n = walk.nextNode());) n.data = swap(n.data);
  document.querySelectorAll("input").forEach(i => { i.value = swap(i.value); });
  const times = [...new Set([...document.querySelectorAll("time[datetime]")].map(t => t.getAttribute("datetime")))].sort();
  const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  document.querySelectorAll("time[datetime]").forEach(t => {
    const d = new Date(Date.UTC(2026, 10, 6 + 7 * times.indexOf(t.getAttribute("datetime")), 9, 30));
    const hm = t.querySelector(".hm");
    t.firstChild.data = d.getUTCDate() + " " + months[d.getUTCMonth()] + " " + d.getUTCFullYear();
    if (hm) hm.textContent = " 09:30 UTC";
  });
  return true;
})`

// awaitScreenshot returns once the origin has the screenshot of site it
// captures in the background after a scan.
func awaitScreenshot(t *testing.T, svc *stack.Stack, site string) {
	t.Helper()
	q := url.QueryEscape(site)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(svc.URL + "/api/screenshot?url=" + q)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no screenshot of the fixture site within 60 s (last: %v %v)", resp, err)
		}
	}
}

// The homepage and a report in real Chromium, at the two sizes the first
// screen is designed for (1280×800, 360×800), in light and dark. The report
// is of a copy of the peer fixture scanned three times as its files are
// published (sitemap.xml, then llms.txt), so it shows a history, a diff and
// the site's thumbnail. `make screenshots` writes the PNGs to
// docs/screenshots; they change only when the page does.
func TestScanPageScreenshots(t *testing.T) {
	chromium := testenv.Chromium(t)
	svc := start(t, stack.Options{Env: reportEnv, Browser: &browser.Config{ExecPath: chromium, Tabs: 1}})
	dir := siteCopy(t, "peer")
	held := map[string][]byte{}
	for _, f := range []string{"sitemap.xml", "llms.txt"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		held[f] = b
		os.Remove(filepath.Join(dir, f))
	}
	s, err := fixture.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	last := scanSite(t, svc, s.URL, false)
	for _, f := range []string{"sitemap.xml", "llms.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), held[f], 0o644); err != nil {
			t.Fatal(err)
		}
		nextSecond(t, last.Timestamp)
		last = scanSite(t, svc, s.URL, true)
	}
	q := url.QueryEscape(s.URL)
	awaitScreenshot(t, svc, s.URL)

	// Rasterised in one pass, in sRGB, without LCD text: the same page
	// gives the same pixels from one run to the next.
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("force-color-profile", "srgb"), chromedp.Flag("disable-partial-raster", true), chromedp.Flag("disable-lcd-text", true),
		chromedp.Flag("disable-skia-runtime-opts", true), chromedp.Flag("run-all-compositor-stages-before-draw", true), chromedp.Flag("num-raster-threads", "1"))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	tabCtx, cancelTab := chromedp.NewContext(allocCtx)
	defer cancelTab()
	if err := chromedp.Do(tabCtx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	p := &page{t: t, ctx: tabCtx, dir: t.TempDir()}
	addr := strings.TrimPrefix(s.URL, "http://")
	ip, _, _ := strings.Cut(addr, ":")
	swaps, _ := json.Marshal([][2]string{{addr, screenshotHost}, {ip, screenshotHost}, {strings.ReplaceAll(ip, ".", "-"), strings.ReplaceAll(screenshotHost, ".", "-")}})
	out := map[string][]byte{}
	for _, pg := range []struct{ name, path, ready string }{
		{"home-", "/", `document.getElementById("scan-url") !== null`},
		{"", "/report?url=" + q, `!document.getElementById("shot").hidden && document.querySelector("#shot img").complete && document.getElementById("sparkline") !== null`},
	} {
		for _, v := range []struct {
			name          string
			width, height int64
		}{{"desktop", 1280, 800}, {"phone", 360, 800}} {
			for _, scheme := range []string{"light", "dark"} {
				name := pg.name + v.name
				if scheme == "dark" {
					name += "-dark"
				}
				setScheme(t, tabCtx, scheme)
				p.do(name, chromedp.EmulateViewport(v.width, v.height), chromedp.Navigate(svc.URL+pg.path))
				p.poll(name+": the page is complete", pg.ready+` && document.fonts.status === "loaded"`)
				p.do(name+": stable text", chromedp.Evaluate[chromedp.Void](stableText+`(`+string(swaps)+`), undefined`))
				shot := value(p, name+" screenshot", chromedp.CaptureScreenshot())
				img, err := png.DecodeConfig(bytes.NewReader(shot))
				if err != nil || int64(img.Width) != v.width || int64(img.Height) != v.height {
					p.fatalf("%s: %v, %dx%d, want %dx%d", name, err, img.Width, img.Height, v.width, v.height)
				}
				if w := value(p, "page width", chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); int64(w) > v.width {
					p.fatalf("%s: the page is %d px wide in a %d px viewport", name, w, v.width)
				}
				if leak := value(p, "the fixture's address", chromedp.Evaluate[bool](`document.body.innerText.includes(`+jsString(ip)+`)`)); leak {
					p.fatalf("%s: the fixture's random address is still in the page", name)
				}
				out[name] = shot
			}
		}
	}
	setScheme(t, tabCtx, "light")
	if !*writeScreenshots {
		return
	}
	dir = filepath.Join("..", "..", "docs", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range out {
		if err := os.WriteFile(filepath.Join(dir, name+".png"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// jsString quotes s for a script (no quote or backslash can occur in a
// loopback address or a host name, which is all it is given).
func jsString(s string) string { return `"` + s + `"` }
