package origin

import (
	"bytes"
	"context"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/fixture"
	"github.com/agentready/agentready/internal/testenv"
	"github.com/agentready/agentready/origin/browser"
	"github.com/agentready/agentready/origin/store"
)

// A scan captures the site's homepage in the background with real Chromium:
// the scan answers first, the PNG (1280×800) lands in the store, and a
// second fresh scan within the TTL takes no new capture.
func TestScreenshotCapturedAfterScan(t *testing.T) {
	chromium := testenv.Chromium(t)
	site, err := fixture.Start(filepath.Join("..", "testdata", "sites", "full"))
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	st, err := store.OpenEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	policy := fetch.AddressPolicy{AllowPrivate: true, AllowAnyPort: true}
	pool := browser.New(browser.Config{ExecPath: chromium, Tabs: 2, Policy: policy})
	sc := engine.New(engine.Options{Deadline: 10 * time.Second, Fetch: fetch.Config{Policy: policy}})
	srv := New(Config{AllowPrivate: true, Browser: pool}, st, sc)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		if pool.Health().Started {
			t.Error("Shutdown left the browser running")
		}
	}()
	base := "http://" + ln.Addr().String()
	get := func(u string) (*http.Response, []byte) {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, b
	}
	key, aerr := srv.scans.validateURL(site.URL)
	if aerr != nil {
		t.Fatal(aerr)
	}

	if r, b := get(base + "/api/scan?format=json&url=" + url.QueryEscape(site.URL)); r.StatusCode != 200 {
		t.Fatalf("scan: %d %s", r.StatusCode, b)
	}
	// The scan answered while the browser had not captured yet (a cold
	// Chromium takes far longer to start than the scan of a loopback site).
	if _, err := st.Screenshots().Get(context.Background(), key); err == nil {
		t.Error("the screenshot existed when the scan answered: the capture is on the scan's path")
	}

	var shot []byte
	deadline := time.Now().Add(60 * time.Second)
	for {
		r, b := get(base + "/api/screenshot?url=" + url.QueryEscape(site.URL))
		if r.StatusCode == 200 {
			shot = b
			break
		}
		if r.StatusCode != 503 && r.StatusCode != 404 {
			t.Fatalf("while capturing: %d %s", r.StatusCode, b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no screenshot within 60 s (last answer %d %s; browser %s)", r.StatusCode, b, srv.shots.health())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(shot))
	if err != nil || cfg.Width != 1280 || cfg.Height != 800 {
		t.Fatalf("screenshot: %v %dx%d, want a 1280x800 PNG", err, cfg.Width, cfg.Height)
	}
	if n := srv.shots.taken.Load(); n != 1 {
		t.Fatalf("%d captures for one scan", n)
	}

	// A fresh scan within the TTL: the stored screenshot is young enough.
	if r, b := get(base + "/api/scan?format=json&fresh=1&url=" + url.QueryEscape(site.URL)); r.StatusCode != 200 {
		t.Fatalf("fresh scan: %d %s", r.StatusCode, b)
	}
	deadline = time.Now().Add(10 * time.Second)
	for srv.shots.capturing(key) {
		if time.Now().After(deadline) {
			t.Fatal("the capture check did not finish")
		}
		time.Sleep(10 * time.Millisecond)
	}
	srv.scans.persist.Wait()
	if n := srv.shots.taken.Load(); n != 1 {
		t.Errorf("%d captures after a second scan within the TTL, want 1", n)
	}
}
