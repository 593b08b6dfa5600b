// Command hardenbench measures how the service holds up against slow
// clients and a frozen Redis: how many drip-feeding connections it keeps and
// for how long, whether others are served meanwhile, and how fast requests
// answer while Redis does not (docs/benchmarks.md, "Slow clients and a
// frozen Redis").
//
//	go run ./bench/hardenbench            # both parts (about a minute)
//	go run ./bench/hardenbench -part slow # or -part redis
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentready/agentready/bench/internal/benchkit"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/redistest"
	"github.com/agentready/agentready/origin"
	"github.com/agentready/agentready/origin/store"
)

func main() {
	part := flag.String("part", "all", "slow, redis or all")
	conns := flag.Int("conns", 1000, "slow connections per measurement")
	flag.Parse()
	benchkit.Header(", default limits (edge: headers 10 s, whole request 25 s, 64 connections per address; origin: whole request 15 s, 64 per address; Redis: 500 ms per call, breaker after 3 failures for 2 s)")
	if *part == "all" || *part == "slow" {
		slow(*conns)
	}
	if *part == "all" || *part == "redis" {
		frozenRedis()
	}
}

func root() string {
	dir, _ := os.Getwd()
	for d := dir; d != "/"; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	return dir
}

func startStack(st store.Backend) *stack.Stack {
	env := map[string]string{"AGENTREADY_FREE_DAILY": "1000000"} // the allowance is not what is measured
	// CapLoopback: the loopback addresses stand for remote clients here.
	return benchkit.Must(stack.Start(stack.Options{Addr: "127.0.0.1:0", AllowPrivate: true, Store: st, Env: func(k string) string { return env[k] }, CapLoopback: true}))
}

// dripResult is what one slow connection saw.
type dripResult struct {
	refused bool          // answered 429 at once
	held    time.Duration // how long the server kept it open
	status  int           // the status of the answer it got when closed, if any
}

// drip opens a connection from `from`, sends head, then one byte of filler
// every 2 s until the server answers or closes, for at most limit.
func drip(addr, from, head string, limit time.Duration) dripResult {
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return dripResult{refused: true}
	}
	defer c.Close()
	start := time.Now()
	io.WriteString(c, head)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if _, err := c.Write([]byte("x")); err != nil {
					return
				}
			}
		}
	}()
	c.SetReadDeadline(start.Add(limit))
	r := bufio.NewReader(c)
	res := dripResult{}
	if resp, err := http.ReadResponse(r, nil); err == nil {
		res.status = resp.StatusCode
		io.Copy(io.Discard, resp.Body)
	}
	io.Copy(io.Discard, r) // until the server closes
	res.held = time.Since(start)
	res.refused = res.status == 429 && res.held < time.Second
	return res
}

// slowMeasure runs n drip connections spread over addrs and, meanwhile, a
// normal client from another address.
func slowMeasure(label, addr string, addrs []string, head, probe string, n int) {
	var wg sync.WaitGroup
	results := make([]dripResult, n)
	start := time.Now()
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = drip(addr, addrs[i%len(addrs)], head, 60*time.Second)
		}()
	}
	// A well-behaved client from another address, every 100 ms while the
	// slow ones are open.
	var probeLat []time.Duration
	var probeErr int
	client := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).DialContext}, Timeout: 10 * time.Second}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for loop := true; loop; {
		select {
		case <-done:
			loop = false
		case <-time.After(100 * time.Millisecond):
			t0 := time.Now()
			resp, err := client.Get(probe)
			if err != nil || resp.StatusCode != 200 {
				probeErr++
			} else {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				probeLat = append(probeLat, time.Since(t0))
			}
		}
	}
	var held []time.Duration
	refused := 0
	statuses := map[int]int{}
	for _, r := range results {
		if r.refused {
			refused++
			continue
		}
		held = append(held, r.held)
		statuses[r.status]++
	}
	heldTxt := "none held"
	if len(held) > 0 {
		heldTxt = fmt.Sprintf("%d held, closed after p50 %s, max %s (answers: %s)", len(held), benchkit.Pct(held, 0.5).Round(100*time.Millisecond), benchkit.Pct(held, 1).Round(100*time.Millisecond), statusText(statuses))
	}
	probeTxt := "no probe requests"
	if len(probeLat) > 0 {
		probeTxt = fmt.Sprintf("another address served meanwhile: %d requests, p50 %s, max %s, %d errors", len(probeLat), benchkit.Pct(probeLat, 0.5).Round(10*time.Microsecond), benchkit.Pct(probeLat, 1).Round(10*time.Microsecond), probeErr)
	}
	fmt.Printf("| %s | bounded count and time; others served | %d refused at once (429); %s; all gone after %s; %s |\n",
		label, refused, heldTxt, time.Since(start).Round(100*time.Millisecond), probeTxt)
}

func statusText(m map[int]int) string {
	var parts []string
	for s, n := range m {
		name := fmt.Sprint(s)
		if s == 0 {
			name = "closed without an answer"
		}
		parts = append(parts, fmt.Sprintf("%d × %s", n, name))
	}
	return strings.Join(parts, ", ")
}

func slow(n int) {
	st := benchkit.Must(store.OpenEmbedded(benchkit.Must(os.MkdirTemp("", "hardenbench"))))
	svc := startStack(st)
	defer svc.Shutdown(context.Background())
	edgeAddr := strings.TrimPrefix(svc.URL, "http://")
	probe := svc.URL + "/openapi.json"

	o := origin.New(origin.Config{AllowPrivate: true, CapLoopback: true}, st, engine.New(engine.Options{Fetch: fetch.Config{Policy: fetch.AddressPolicy{AllowPrivate: true, AllowAnyPort: true}}}))
	oln := benchkit.Must(net.Listen("tcp", "127.0.0.1:0"))
	go o.Serve(oln)
	defer o.Shutdown(context.Background())

	headDrip := "GET /api/scan HTTP/1.1\r\nHost: x\r\nX-Slow: "
	bodyDrip := "POST /api/scan HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"url\":\""
	one := []string{"127.0.0.1"}
	var many []string
	for i := 0; i < 16; i++ {
		many = append(many, fmt.Sprintf("127.0.1.%d", i+1))
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		slowMeasure(fmt.Sprintf("edge: %d connections dripping headers (1 byte / 2 s), one address", n), edgeAddr, one, headDrip, probe, n)
	}()
	go func() {
		defer wg.Done()
		slowMeasure(fmt.Sprintf("origin alone: %d connections dripping headers, one address", n), oln.Addr().String(), one, headDrip, "http://"+oln.Addr().String()+"/healthz", n)
	}()
	wg.Wait()
	slowMeasure(fmt.Sprintf("edge: %d connections dripping a POST body (1 byte / 2 s) from 16 addresses", n), edgeAddr, many, bodyDrip, probe, n)
}

// frozenRedis measures answers while a real redis-server is stopped
// (SIGSTOP), and how soon the service is back after it resumes.
func frozenRedis() {
	srv := benchkit.Must(redistest.Launch())
	defer srv.Close()
	r := benchkit.Must(store.OpenRedis(context.Background(), srv.URL))
	defer r.Close()
	svc := startStack(r)
	defer svc.Shutdown(context.Background())
	site := benchkit.Must(fixture.Start(filepath.Join(root(), "testdata", "sites", "empty")))
	defer site.Close()
	targets := []struct{ name, url string }{
		{"origin GET /healthz", svc.OriginURL + "/healthz"},
		{"origin GET /api/scan (not cached)", svc.OriginURL + "/api/scan?format=json&url=" + url.QueryEscape(site.URL+"/x")},
		{"edge GET /api/scan (rate limiter on Redis)", svc.URL + "/api/scan?format=json&url=" + url.QueryEscape(site.URL+"/y")},
		{"edge GET /openapi.json (edge cache)", svc.URL + "/openapi.json"},
	}
	get := func(u string) (int, time.Duration) {
		t0 := time.Now()
		resp, err := http.Get(u)
		if err != nil {
			return 0, time.Since(t0)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, time.Since(t0)
	}
	get(targets[3].url) // fills the edge's cache
	benchkit.Must(0, srv.Freeze())
	frozenAt := time.Now()
	type tally struct {
		lat   []time.Duration
		codes map[int]int
	}
	tallies := make([]tally, len(targets))
	var wg sync.WaitGroup
	var stop atomic.Bool
	for i, tg := range targets {
		tallies[i].codes = map[int]int{}
		for w := 0; w < 4; w++ { // four clients per target, for 3 s
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					code, d := get(tg.url)
					mu.Lock()
					tallies[i].lat = append(tallies[i].lat, d)
					tallies[i].codes[code]++
					mu.Unlock()
				}
			}()
		}
	}
	time.Sleep(3 * time.Second)
	stop.Store(true)
	wg.Wait()
	for i, tg := range targets {
		t := tallies[i]
		fmt.Printf("| Redis frozen (SIGSTOP), %s, 4 clients for 3 s | answer within ~1 s | %d requests: %s; p50 %s, max %s |\n",
			tg.name, len(t.lat), statusText(t.codes), benchkit.Pct(t.lat, 0.5).Round(100*time.Microsecond), benchkit.Pct(t.lat, 1).Round(time.Millisecond))
	}
	benchkit.Must(0, srv.Thaw())
	thawed := time.Now()
	var healthy, scanning time.Duration
	for healthy == 0 || scanning == 0 {
		if healthy == 0 {
			if code, _ := get(targets[0].url); code == 200 {
				healthy = time.Since(thawed)
			}
		}
		if scanning == 0 {
			if code, _ := get(targets[2].url); code == 200 {
				scanning = time.Since(thawed)
			}
		}
		if time.Since(thawed) > 30*time.Second {
			fmt.Println("| recovery after the thaw | — | not recovered within 30 s |")
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Printf("| recovery after SIGCONT (frozen %s) | by itself | /healthz 200 after %s, edge scan 200 after %s |\n",
		thawed.Sub(frozenAt).Round(100*time.Millisecond), healthy.Round(10*time.Millisecond), scanning.Round(10*time.Millisecond))
}

var mu sync.Mutex
