package origin_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentready/agentready/edge/x402"
	"github.com/agentready/agentready/internal/testing/facilitator"
	"github.com/agentready/agentready/internal/testing/loopback"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin"
	"github.com/agentready/agentready/origin/browser"
)

// gatedSite serves testdata/browser/script-built and, while hold is set,
// holds the browser's requests for /app.js until the request is abandoned
// (the scanner never asks for scripts; the check on the user agent makes
// sure only a browser is held). appHits counts the browser's requests for it.
type gatedSite struct {
	*httptest.Server
	hold    atomic.Bool
	appHits atomic.Int64
}

func startGatedSite(t *testing.T) *gatedSite {
	g := &gatedSite{}
	files := http.FileServer(http.Dir(filepath.Join("..", "testdata", "browser", "script-built")))
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/app.js" && strings.Contains(r.UserAgent(), "Chrome") {
			g.appHits.Add(1)
			if g.hold.Load() {
				<-r.Context().Done()
				return
			}
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(g.Close)
	return g
}

// paidOrigin is an origin with both browsers, handed in so the test can
// find their processes, and a local facilitator.
func paidOrigin(t *testing.T) (o *testOrigin, fac *facilitator.Server, background, paid *browser.Pool) {
	chromium := testenv.Chromium(t)
	fac = facilitator.Start()
	t.Cleanup(fac.Close)
	background = browser.New(browser.Config{ExecPath: chromium, Tabs: 2, Policy: loopback.Policy()})
	paid = background.Sibling("paid", 2, 0)
	o = startOrigin(t, origin.Config{Payment: x402.Config{PayTo: testPayee}, FacilitatorURL: fac.URL, Browser: background, PaidBrowser: paid}, nil)
	return o, fac, background, paid
}

type paidRendered struct {
	Rendered *struct {
		Error    string   `json:"error"`
		Headings []string `json:"headingsOnlyRendered"`
	} `json:"rendered"`
	Deep *struct {
		Screenshot string `json:"screenshot"`
	} `json:"deep"`
}

// payment is a fresh payment for a deep scan of target; tx makes it unique.
func payment(t *testing.T, o *testOrigin, target, tx string) string {
	t.Helper()
	resp, _ := gatewayPost(t, o, target)
	var req x402.PaymentRequired
	decodeB64JSON(t, resp.Header.Get("PAYMENT-REQUIRED"), &req)
	return payV2(t, req, facilitator.Token("Payer", "100000", testPayee, tx))
}

// buyDeepScan sends a paid deep scan of target; it may run in a goroutine
// (it reports, never fails the test).
func buyDeepScan(o *testOrigin, target, pay string) (status int, rep paidRendered, err error) {
	req, _ := http.NewRequest("POST", o.URL+x402.GatewayPath, strings.NewReader(`{"url":"`+target+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(x402.HeaderSignature, pay)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, rep, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode == 200 {
		err = json.Unmarshal(b, &rep)
	} else if err == nil {
		err = fmt.Errorf("%d %.300s", resp.StatusCode, b)
	}
	return resp.StatusCode, rep, err
}

// The paid browser is killed while it renders a paid deep scan's homepage:
// the render is tried again on a fresh browser and the report carries a
// real rendered block (the heading only the page's script writes), the
// screenshot link, one settlement, and a background browser nothing
// happened to.
func TestPaidRenderRetriedOnFreshBrowser(t *testing.T) {
	o, fac, background, paid := paidOrigin(t)
	site := startGatedSite(t)
	site.hold.Store(true)

	type answer struct {
		rep paidRendered
		err error
	}
	done := make(chan answer, 1)
	pay := payment(t, o, site.URL, "retry1")
	go func() {
		_, rep, err := buyDeepScan(o, site.URL, pay)
		done <- answer{rep, err}
	}()
	testenv.Eventually(t, 60*time.Second, "the paid render to ask for /app.js", func() bool { return site.appHits.Load() == 1 })
	pid := paid.Health().PID
	if pid == 0 {
		t.Fatal("no paid browser process while it renders")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "the paid pool to notice", func() bool { return paid.Health().Restarts == 1 })
	site.hold.Store(false)

	a := <-done
	if a.err != nil || a.rep.Rendered == nil {
		t.Fatalf("deep scan: %v %+v", a.err, a.rep)
	}
	if a.rep.Rendered.Error != "" || !strings.Contains(strings.Join(a.rep.Rendered.Headings, "|"), "h1: Built by the script") {
		t.Errorf("rendered block after the retry: %+v", *a.rep.Rendered)
	}
	if site.appHits.Load() < 2 {
		t.Errorf("the page's script was asked for %d times: no retry", site.appHits.Load())
	}
	if a.rep.Deep == nil || a.rep.Deep.Screenshot == "" {
		t.Errorf("no screenshot linked: %+v", a.rep.Deep)
	}
	if n := len(fac.Calls("/settle")); n != 1 {
		t.Errorf("%d settlements", n)
	}
	if h := paid.Health(); h.PID == pid || h.PID == 0 {
		t.Errorf("paid browser pid %d after the crash (was %d)", h.PID, pid)
	}
	if h := background.Health(); h.Restarts != 0 || h.Started {
		t.Errorf("the background browser was touched by a paid scan: %+v", h)
	}
}

// An anonymous scan's background capture is running when its browser stops
// answering (SIGSTOP, as a page with 10,000 iframes did): a paid deep scan
// at the same time renders on its own browser, unaffected.
func TestPaidRenderUnaffectedByStoppedBackgroundBrowser(t *testing.T) {
	o, fac, background, paid := paidOrigin(t)
	stall := site(t, filepath.Join("..", "browser", "stall"))
	if r, b := get(t, scanURL(o, stall.URL, "&format=json")); r.StatusCode != 200 {
		t.Fatalf("free scan: %d %.200s", r.StatusCode, b)
	}
	testenv.Eventually(t, 60*time.Second, "the background capture to start", func() bool {
		h := background.Health()
		return h.PID != 0 && h.InFlight == 1
	})
	pid := background.Health().PID
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)

	target := startGatedSite(t)
	_, rep, err := buyDeepScan(o, target.URL, payment(t, o, target.URL, "stopped1"))
	if err != nil || rep.Rendered == nil {
		t.Fatalf("deep scan: %v %+v", err, rep)
	}
	if rep.Rendered.Error != "" || !strings.Contains(strings.Join(rep.Rendered.Headings, "|"), "h1: Built by the script") {
		t.Errorf("rendered block beside a stopped background browser: %+v", *rep.Rendered)
	}
	if h := paid.Health(); h.Restarts != 0 || h.PID == pid {
		t.Errorf("paid browser: %+v (background pid %d)", h, pid)
	}
	if n := len(fac.Calls("/settle")); n != 1 {
		t.Errorf("%d settlements", n)
	}
}

// Four payments that verify but never settle (spent elsewhere, or their
// funds gone by then) arrive for a site whose every page hangs, beside one
// paying customer: the hanging site receives no request, the paid browser
// renders only the customer's page, no screenshot is stored for the
// unpaid site, and the customer's deep scan ends well within its deadline.
// The customer's capture is linked from its report alone: the free
// /api/screenshot does not serve it by the site's URL.
func TestUnpayableRequestsCostNothing(t *testing.T) {
	o, fac, background, paid := paidOrigin(t)
	var hangHits atomic.Int64
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hangHits.Add(1)
		<-r.Context().Done()
	}))
	t.Cleanup(hanging.Close)
	customer := startGatedSite(t)

	type answer struct {
		status  int
		rep     paidRendered
		err     error
		elapsed time.Duration
	}
	answers := make(chan answer, 5)
	buy := func(target, pay string) {
		start := time.Now()
		status, rep, err := buyDeepScan(o, target, pay)
		answers <- answer{status, rep, err, time.Since(start)}
	}
	for i := range 4 {
		go buy(hanging.URL, payment(t, o, hanging.URL, fmt.Sprintf("%s-%d", facilitator.Unsettleable, i)))
	}
	go buy(customer.URL, payment(t, o, customer.URL, "customer"))
	var paidAnswer answer
	for range 5 {
		a := <-answers
		if a.status == 200 {
			paidAnswer = a
			continue
		}
		if a.status != 402 {
			t.Errorf("an unsettleable payment: %d %v", a.status, a.err)
		}
	}
	if paidAnswer.err != nil || paidAnswer.rep.Rendered == nil || paidAnswer.rep.Rendered.Error != "" {
		t.Fatalf("the paying customer: %v %+v", paidAnswer.err, paidAnswer.rep)
	}
	if deadline := 60 * time.Second; paidAnswer.elapsed >= deadline {
		t.Errorf("the paying customer waited %s, past the deep scan's %s", paidAnswer.elapsed, deadline)
	}
	if n := hangHits.Load(); n != 0 {
		t.Errorf("the site of the unpaid requests received %d requests", n)
	}
	if n := customer.appHits.Load(); n != 2 {
		t.Errorf("the paid browser loaded the customer's page %d times, want 2 (the render, the capture)", n)
	}
	if h := paid.Health(); h.Restarts != 0 {
		t.Errorf("the paid browser: %+v", h)
	}
	if h := background.Health(); h.Started {
		t.Errorf("the background browser was started by paid scans: %+v", h)
	}
	if n := len(fac.Calls("/settle")); n != 5 {
		t.Errorf("%d settlement attempts, want 5 (one paid, four refused)", n)
	}
	if r, _ := get(t, o.URL+"/api/screenshot?url="+hanging.URL); r.StatusCode != 404 {
		t.Errorf("a screenshot of the unpaid site: %d", r.StatusCode)
	}
	link := ""
	if paidAnswer.rep.Deep != nil {
		link = paidAnswer.rep.Deep.Screenshot
	}
	if !strings.Contains(link, "&shot=") {
		t.Fatalf("the customer's screenshot link: %q", link)
	}
	if r, b := get(t, link); r.StatusCode != 200 || r.Header.Get("Content-Type") != "image/png" || len(b) == 0 {
		t.Errorf("the customer's screenshot: %d %s", r.StatusCode, r.Header.Get("Content-Type"))
	}
	if r, _ := get(t, o.URL+"/api/screenshot?url="+customer.URL); r.StatusCode != 404 {
		t.Errorf("the paid capture served by the free endpoint: %d", r.StatusCode)
	}
}
