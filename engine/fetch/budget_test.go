package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/agentready/agentready/internal/testing/testenv"
)

// sized serves /n/<bytes> as that many bytes and counts finished handlers.
type sized struct {
	*httptest.Server
	done atomic.Int64
}

func startSized(t *testing.T) *sized {
	t.Helper()
	s := &sized{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer s.done.Add(1)
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/n/"))
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", strconv.Itoa(n))
		w.Write(bytes.Repeat([]byte("a"), n))
	}))
	t.Cleanup(s.Close)
	return s
}

// poolFree reports whether the whole shared pool is available again.
func poolFree(c *Client) bool {
	if !c.pool.sem.TryAcquire(c.pool.size) {
		return false
	}
	c.pool.sem.Release(c.pool.size)
	return true
}

// Every way a body can be cut leaves Found false and says why in Cut, in
// words a site owner can act on (no raw library errors, no addresses).
func TestCutBodiesSayWhy(t *testing.T) {
	var bad bytes.Buffer
	zw := gzip.NewWriter(&bad)
	zw.Write(bytes.Repeat([]byte("x"), 10000))
	zw.Close()
	corrupt := bad.Bytes()
	corrupt[len(corrupt)/2] ^= 0xff
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Write(bytes.Repeat([]byte("a"), 300<<10))
		case "/exact":
			w.Write(bytes.Repeat([]byte("a"), 256<<10))
		case "/drip":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<!doctype html><title>Docs</title>"))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		case "/reset":
			w.Header().Set("Content-Length", "1000")
			w.Write([]byte("only part"))
			w.(http.Flusher).Flush()
			c, _, _ := w.(http.Hijacker).Hijack()
			c.Close()
		case "/corrupt.gz":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(corrupt)
		case "/empty.gz":
			w.Header().Set("Content-Encoding", "gzip")
		}
	}))
	defer srv.Close()
	s := devClient(Config{MaxBody: 256 << 10, RequestTimeout: 300 * time.Millisecond}).NewSession()
	defer s.Close()
	ctx := context.Background()
	cases := []struct {
		path, method string
		truncated    bool
		bodyErr      bool
		cut          string
		body         int
	}{
		{"/big", "", true, false, "larger than the 256 KiB the scanner reads of one document", 256 << 10},
		{"/exact", "", false, false, "", 256 << 10},
		{"/drip", "", false, true, "still arriving when the request's time ran out (300ms)", 34},
		{"/reset", "", false, true, "the connection closed before the body was complete", 9},
		{"/corrupt.gz", "", false, true, "its gzip compression is corrupt", -1},
		{"/empty.gz", http.MethodHead, false, false, "", 0},
	}
	for _, c := range cases {
		r := s.Do(ctx, Request{URL: srv.URL + c.path, Method: c.method})
		if r.Err != nil {
			t.Errorf("%s: %v", c.path, r.Err)
			continue
		}
		if r.Truncated != c.truncated || (r.BodyErr != nil) != c.bodyErr || r.Cut != c.cut && !strings.Contains(r.Cut, c.cut) || (c.cut == "") != (r.Cut == "") {
			t.Errorf("%s: truncated %v bodyErr %v cut %q; want %v %v %q", c.path, r.Truncated, r.BodyErr, r.Cut, c.truncated, c.bodyErr, c.cut)
		}
		if c.body >= 0 && len(r.Body) != c.body {
			t.Errorf("%s: %d body bytes, want %d", c.path, len(r.Body), c.body)
		}
		if r.Complete() != (c.cut == "") || (c.cut != "" && r.Found()) {
			t.Errorf("%s: complete %v found %v with cut %q", c.path, r.Complete(), r.Found(), r.Cut)
		}
		if strings.Contains(r.Cut, "127.0.0.1") || strings.Contains(r.Cut, "tcp") {
			t.Errorf("%s: cut reason leaks transport detail: %q", c.path, r.Cut)
		}
	}
}

// One scan's bodies together stop at MaxScanBytes; the body that crosses it
// is cut and says the scan's limit did it.
func TestScanBodyBudget(t *testing.T) {
	srv := startSized(t)
	c := devClient(Config{MaxScanBytes: 1 << 20, FreeScanBytes: 64 << 10})
	s := c.NewSession()
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if r := s.Do(ctx, Request{URL: fmt.Sprintf("%s/n/%d", srv.URL, 400<<10+i)}); !r.Complete() {
			t.Fatalf("body %d cut: %s", i, r.Cut)
		}
	}
	r := s.Do(ctx, Request{URL: srv.URL + "/n/409602"})
	if !r.Truncated || r.Found() || !strings.Contains(r.Cut, "already read 1 MiB of bodies for this scan") {
		t.Errorf("third body: truncated %v found %v cut %q", r.Truncated, r.Found(), r.Cut)
	}
	if held := s.Held(); held > 1<<20 || held < 1<<20-readChunk {
		t.Errorf("session holds %d bytes, want about its 1 MiB limit", held)
	}
	if got := len(r.Body) + 2*(400<<10) + 1; got > 1<<20+1 {
		t.Errorf("kept %d bytes in all, over the 1 MiB limit", got)
	}
	// A body that fits exactly is not cut: a smaller one still gets through.
	if r := s.Do(ctx, Request{URL: srv.URL + "/n/0"}); !r.Complete() {
		t.Errorf("an empty body after the limit was cut: %s", r.Cut)
	}
	s.Close()
	if !poolFree(c) {
		t.Error("closing the session did not return its bytes to the pool")
	}
}

// A scan beyond its free allowance waits for bytes other scans hold, gets
// them when those scans end, and gives up honestly when its request's time
// runs out first.
func TestSharedBudgetWaits(t *testing.T) {
	srv := startSized(t)
	// A minute per request: the waiting scan cannot give up before the
	// first one lets go, however slowly this machine runs.
	c := devClient(Config{SharedBodyBytes: 1 << 20, FreeScanBytes: 32 << 10, RequestTimeout: time.Minute})
	ctx := context.Background()
	a := c.NewSession()
	if r := a.Do(ctx, Request{URL: srv.URL + "/n/900000"}); !r.Complete() {
		t.Fatalf("first scan cut: %s", r.Cut)
	}
	b := c.NewSession()
	defer b.Close()
	before := srv.done.Load()
	got := make(chan *Response, 1)
	go func() { got <- b.Do(ctx, Request{URL: srv.URL + "/n/300000"}) }()
	// The server has written the whole body into the socket: from here on b
	// waits for memory, not for the network.
	testenv.Eventually(t, 30*time.Second, "the second body to be sent", func() bool { return srv.done.Load() > before })
	select {
	case r := <-got:
		t.Fatalf("the second scan did not wait for the budget: complete %v cut %q", r.Complete(), r.Cut)
	default:
	}
	a.Close()
	select {
	case r := <-got:
		if !r.Complete() || len(r.Body) != 300000 {
			t.Errorf("after the first scan ended: %d bytes, cut %q", len(r.Body), r.Cut)
		}
	case <-time.After(30 * time.Second): // a safety net, short of the request timeout
		t.Fatal("the waiting scan was not woken when the first one closed")
	}

	// Nobody lets go: the wait ends with the request's time, and says so.
	c2 := devClient(Config{SharedBodyBytes: 1 << 20, FreeScanBytes: 32 << 10, RequestTimeout: 300 * time.Millisecond})
	hog := c2.NewSession()
	defer hog.Close()
	hog.Do(ctx, Request{URL: srv.URL + "/n/900000"})
	w := c2.NewSession()
	defer w.Close()
	// The hog holds its memory until the test ends and the caller's
	// deadline is long: the 300 ms request timeout must end the wait, in
	// less than half of that deadline.
	const callerDeadline = 30 * time.Second
	wctx, cancel := context.WithTimeout(ctx, callerDeadline)
	defer cancel()
	start := time.Now()
	r := w.Do(wctx, Request{URL: srv.URL + "/n/300000"})
	if took := time.Since(start); took >= callerDeadline/2 {
		t.Errorf("waiting for memory took %s with a 300 ms request timeout", took)
	}
	if !errors.Is(r.BodyErr, ErrBodyBudget) || r.Found() || !strings.Contains(r.Cut, "busy with other scans") {
		t.Errorf("starved body: bodyErr %v found %v cut %q", r.BodyErr, r.Found(), r.Cut)
	}
}

// When the pool is busy, a scan that already holds more than its share is
// cut at once instead of waiting: scans never sit on memory waiting for each
// other. While the pool has room, a scan takes what it needs.
//
// "At once" is a relation: the other scans hold their memory until the test
// ends, so a scan that waited for it would wait out its request timeout (a
// minute here); the cut comes in less than half of that.
func TestFairShareCutsAtOnce(t *testing.T) {
	const requestTimeout = time.Minute
	srv := startSized(t)
	c := devClient(Config{SharedBodyBytes: 1 << 20, FreeScanBytes: 32 << 10, RequestTimeout: requestTimeout})
	ctx := context.Background()
	s := c.NewSession()
	if r := s.Do(ctx, Request{URL: srv.URL + "/n/600000"}); !r.Complete() {
		t.Fatalf("alone with a free pool: cut %q", r.Cut)
	}
	var others []*Session
	for i := 0; i < 2; i++ {
		o := c.NewSession()
		if r := o.Do(ctx, Request{URL: fmt.Sprintf("%s/n/%d", srv.URL, 250<<10+i)}); !r.Complete() {
			t.Fatalf("scan %d cut: %s", i, r.Cut)
		}
		others = append(others, o)
	}
	// Three scans use the pool, which is nearly full: a share is a third of
	// it, and s holds more.
	start := time.Now()
	r := s.Do(ctx, Request{URL: srv.URL + "/n/100000"})
	if took := time.Since(start); took >= requestTimeout/2 {
		t.Errorf("the cut took %s: it waited", took)
	}
	if !r.Truncated || !strings.Contains(r.Cut, "used its share") || len(r.Body) > 32<<10 {
		t.Errorf("over its share: %d bytes kept, truncated %v, cut %q", len(r.Body), r.Truncated, r.Cut)
	}
	s.Close()
	for _, o := range others {
		o.Close()
	}
	if !poolFree(c) {
		t.Error("pool not whole after every session closed")
	}
}

// A session nobody closes gives its memory back once it is garbage.
func TestDroppedSessionReturnsMemory(t *testing.T) {
	srv := startSized(t)
	c := devClient(Config{SharedBodyBytes: 1 << 20, FreeScanBytes: 32 << 10})
	func() {
		s := c.NewSession()
		s.Do(context.Background(), Request{URL: srv.URL + "/n/500000"})
	}()
	if poolFree(c) {
		t.Fatal("the open session's bytes were not counted")
	}
	testenv.Eventually(t, 30*time.Second, "the dropped session's memory", func() bool { runtime.GC(); return poolFree(c) })
}

// A brotli stream's window (up to 16 MiB, allocated by the decoder whatever
// the body's size) is taken from the budget for the read.
func TestBrotliWindowIsBudgeted(t *testing.T) {
	var big bytes.Buffer
	bw := brotli.NewWriterOptions(&big, brotli.WriterOptions{Quality: 1, LGWin: 24})
	bw.Write([]byte("hello brotli"))
	bw.Close()
	if w := brotliWindowBits(big.Bytes()[0]); w != 24 {
		t.Fatalf("window bits %d, want 24", w)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "br")
		w.Write(big.Bytes())
	}))
	defer srv.Close()
	small := devClient(Config{SharedBodyBytes: 4 << 20}).NewSession()
	defer small.Close()
	r := small.Do(context.Background(), Request{URL: srv.URL})
	if r.Found() || !errors.Is(r.BodyErr, ErrBodyBudget) || !strings.Contains(r.Cut, "busy with other scans") {
		t.Errorf("16 MiB window on a 4 MiB pool: body %q bodyErr %v cut %q", r.Body, r.BodyErr, r.Cut)
	}
	c := devClient(Config{SharedBodyBytes: 64 << 20})
	roomy := c.NewSession()
	if r := roomy.Do(context.Background(), Request{URL: srv.URL}); string(r.Body) != "hello brotli" || !r.Complete() {
		t.Errorf("brotli body %q cut %q", r.Body, r.Cut)
	}
	roomy.Close()
	if !poolFree(c) {
		t.Error("the window was not given back")
	}
	for b, want := range map[byte]uint{0x00: 16, 0x0b: 22, 0x01: 17, 0x21: 10, 0x11: 24, 0x41: 12} {
		if got := brotliWindowBits(b); got != want {
			t.Errorf("window bits of %#x: %d, want %d", b, got, want)
		}
	}
}

// Many scans of sites whose every answer is endless or a gzip bomb keep the
// bodies they hold at once within SharedBodyBytes + FreeScanBytes per scan,
// and the heap within that plus the connections and decoders in flight.
func TestHostileScansStayInBudget(t *testing.T) {
	chunk := bytes.Repeat([]byte("# endless\n- [x](https://e.example/)\n"), 1024)
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(make([]byte, 1<<20))
	zw.Close()
	bomb := bytes.Repeat(member.Bytes(), 64) // 64 MiB of zeros
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".json") {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(bomb)
			return
		}
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer hostile.Close()

	const (
		scans   = 20
		perScan = 16
		shared  = 32 << 20
		free    = 256 << 10
	)
	c := devClient(Config{SharedBodyBytes: shared, FreeScanBytes: free, RequestTimeout: 10 * time.Second})
	defer c.CloseIdle()
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	// Unbudgeted, the scans keep 20 × 16 × 2 MiB = 640 MiB (well over 1 GiB
	// of heap); the bound is a third of that.
	bound := uint64(shared + scans*free + 192<<20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	open := map[*Session]bool{}
	var peakHeap, peakKept atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			if h := s[0].Value.Uint64() - min(base, s[0].Value.Uint64()); h > peakHeap.Load() {
				peakHeap.Store(h)
				if h > 2*bound {
					cancel() // failing: stop before the machine suffers
				}
			}
			var kept int64
			mu.Lock()
			for sess := range open {
				kept += sess.Held()
			}
			mu.Unlock()
			if uint64(kept) > peakKept.Load() {
				peakKept.Store(uint64(kept))
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	// Each scan makes its requests at once and, like engine.Scan, closes
	// its session when they are all done.
	var cut, unanswered atomic.Int64
	var scansDone sync.WaitGroup
	for i := 0; i < scans; i++ {
		scansDone.Add(1)
		go func() {
			defer scansDone.Done()
			s := c.NewSession()
			mu.Lock()
			open[s] = true
			mu.Unlock()
			defer func() {
				mu.Lock()
				delete(open, s)
				mu.Unlock()
				s.Close()
			}()
			var wg sync.WaitGroup
			for j := 0; j < perScan; j++ {
				wg.Add(1)
				go func(j int) {
					defer wg.Done()
					path := fmt.Sprintf("/doc%d", j)
					if j%2 == 0 {
						path += ".json"
					}
					switch r := s.Do(ctx, Request{URL: hostile.URL + path}); {
					case r.Err != nil: // not answered in time on a loaded machine: no body at all
						unanswered.Add(1)
					case !r.Complete():
						cut.Add(1)
					}
				}(j)
			}
			wg.Wait()
		}()
	}
	scansDone.Wait()
	close(stop)
	<-sampled
	t.Logf("%d scans × %d hostile bodies: at most %d MiB kept at once, heap peak +%d MiB (bound %d MiB), %d bodies cut, %d requests unanswered",
		scans, perScan, peakKept.Load()>>20, peakHeap.Load()>>20, bound>>20, cut.Load(), unanswered.Load())
	if ctx.Err() != nil {
		t.Fatalf("heap passed twice the bound (%d MiB): stopped", 2*bound>>20)
	}
	if k := peakKept.Load(); k > shared+scans*free {
		t.Errorf("scans kept %d MiB at once, over the budget of %d MiB", k>>20, (shared+scans*free)>>20)
	}
	if p := peakHeap.Load(); p > bound {
		t.Errorf("heap peaked %d MiB above the start, bound %d MiB", p>>20, bound>>20)
	}
	if whole := scans*perScan - cut.Load() - unanswered.Load(); whole != 0 {
		t.Errorf("%d of %d hostile bodies reported whole", whole, scans*perScan)
	}
	if unanswered.Load() > scans*perScan/2 {
		t.Errorf("%d of %d requests got no answer: the test measured little", unanswered.Load(), scans*perScan)
	}
	if !poolFree(c) {
		t.Error("pool not whole after every scan closed")
	}
}
