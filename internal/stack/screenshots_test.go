package stack_test

import (
	"bytes"
	"context"
	"flag"
	"image/png"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testenv"
	"github.com/agentready/agentready/origin/browser"
)

var writeScreenshots = flag.Bool("screenshots", false, "write docs/screenshots/{desktop,phone}.png (make screenshots)")

// A finished report in real Chromium at desktop and phone widths, with the
// scanned site's own screenshot once the origin has captured it. `make
// screenshots` keeps the PNGs under docs/screenshots for the README.
func TestScanPageScreenshots(t *testing.T) {
	chromium := testenv.Chromium(t)
	svc := start(t, stack.Options{Env: pageEnv, Browser: &browser.Config{ExecPath: chromium, Tabs: 1}})
	s := site(t, "full")
	q := url.QueryEscape(s.URL)
	if resp, b := get(t, svc.URL+"/api/scan?format=json&url="+q); resp.StatusCode != 200 {
		t.Fatalf("scan: %d %.200s", resp.StatusCode, b)
	}
	// The origin captures in the background after the scan.
	for deadline := time.Now().Add(60 * time.Second); ; {
		resp, err := http.Get(svc.URL + "/api/screenshot?url=" + q)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no screenshot of the fixture site within 60 s (last: %v %v)", resp, err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.Flag("hide-scrollbars", true))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	tabCtx, cancelTab := chromedp.NewContext(allocCtx)
	defer cancelTab()
	if err := chromedp.Do(tabCtx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	p := &page{t: t, ctx: tabCtx, dir: t.TempDir()}
	out := map[string][]byte{}
	for _, v := range []struct {
		name          string
		width, height int64
	}{{"desktop", 1280, 900}, {"phone", 360, 780}} {
		p.do(v.name+" viewport", chromedp.EmulateViewport(v.width, v.height), chromedp.Navigate(svc.URL+"/?url="+q))
		p.poll("the site's screenshot in the report", `!document.getElementById("shot").hidden && document.querySelector("#shot img").naturalWidth === 1280`)
		shot := value(p, v.name+" screenshot", chromedp.CaptureScreenshot())
		img, err := png.DecodeConfig(bytes.NewReader(shot))
		if err != nil || int64(img.Width) != v.width || int64(img.Height) != v.height {
			p.fatalf("%s: %v, %dx%d, want %dx%d", v.name, err, img.Width, img.Height, v.width, v.height)
		}
		if w := value(p, "page width", chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); int64(w) > v.width {
			p.fatalf("%s: the page is %d px wide in a %d px viewport", v.name, w, v.width)
		}
		out[v.name] = shot
	}
	if !*writeScreenshots {
		return
	}
	dir := filepath.Join("..", "..", "docs", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range out {
		if err := os.WriteFile(filepath.Join(dir, name+".png"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
