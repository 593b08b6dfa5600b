package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/redis/go-redis/v9"
	bolt "go.etcd.io/bbolt"

	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/redistest"
	"github.com/agentready/agentready/internal/testing/testenv"
)

// backends returns every backend the conformance suite runs against: the
// embedded file always, Redis when REDIS_URL is set (and CI=true demands it).
func backends(t *testing.T) map[string]func(t *testing.T) Backend {
	m := map[string]func(t *testing.T) Backend{
		"embedded": func(t *testing.T) Backend {
			e, err := OpenEmbedded(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { e.Close() })
			return e
		},
	}
	redisBackend := func(url string) func(t *testing.T) Backend {
		return func(t *testing.T) Backend {
			r, err := OpenRedis(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			// A fresh key prefix per test keeps runs independent on a shared
			// server; the keys go when the test ends.
			r = r.WithPrefix(fmt.Sprintf("agentready-test:%s:%d:", t.Name(), time.Now().UnixNano()))
			t.Cleanup(func() {
				r.DeleteAll(context.Background())
				r.Close()
			})
			return r
		}
	}
	if url := os.Getenv("REDIS_URL"); testenv.Optional(t, url != "", "REDIS_URL: the Redis backend (.ci/run starts redis-server)") {
		m["redis"] = redisBackend(url)
	}
	if url, ok := testenv.OptionalRedisCluster(t); ok {
		m["redis-cluster"] = redisBackend(url)
	}
	return m
}

func TestConformance(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Run("scan cache round trip and TTL", func(t *testing.T) { testScanCache(t, open(t)) })
			t.Run("idempotency lifecycle", func(t *testing.T) { testIdempotency(t, open(t)) })
			t.Run("concurrent put-if-absent", func(t *testing.T) { testConcurrentBegin(t, open(t)) })
			t.Run("screenshots", func(t *testing.T) { testScreenshots(t, open(t)) })
			t.Run("monitors: create, quota, read, delete", func(t *testing.T) { testMonitorLifecycle(t, open(t)) })
			t.Run("monitors: runs are claimed once and completed atomically", func(t *testing.T) { testMonitorRuns(t, open(t)) })
			t.Run("monitors: concurrent claims", func(t *testing.T) { testConcurrentClaims(t, open(t)) })
			t.Run("monitors: outbox attempts, retries, redelivery", func(t *testing.T) { testOutbox(t, open(t)) })
			t.Run("monitors: 410 and repeated failures disable", func(t *testing.T) { testDisable(t, open(t)) })
			t.Run("monitors: delete drops pending deliveries", func(t *testing.T) { testDeleteDropsOutbox(t, open(t)) })
			t.Run("monitors: the delivery list keeps the newest", func(t *testing.T) { testIndexTrim(t, open(t)) })
			t.Run("monitors: deliveries claimed with their run", func(t *testing.T) { testPreclaimed(t, open(t)) })
			t.Run("monitors: reports go once superseded and done with", func(t *testing.T) { testReportRetention(t, open(t)) })
			if name != "embedded" { // which writes a monitor and its quota entries in one commit
				t.Run("monitors: quota entries left without a monitor", func(t *testing.T) { testQuotaRepair(t, open(t)) })
			}
			t.Run("history ranking", func(t *testing.T) { testHistory(t, open(t)) })
			t.Run("history series", func(t *testing.T) { testSeries(t, open(t)) })
			t.Run("history series: concurrent records", func(t *testing.T) { testSeriesConcurrent(t, open(t)) })
		})
	}
}

func testScanCache(t *testing.T, b Backend) {
	ctx := context.Background()
	c := b.ScanCache()
	if _, _, err := c.Get(ctx, "https://a.example/"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("empty cache: %v", err)
	}
	at := time.Date(2026, 11, 22, 10, 0, 0, 123, time.UTC)
	if err := c.Put(ctx, "https://a.example/", []byte(`{"url":"a"}`), at, time.Hour); err != nil {
		t.Fatal(err)
	}
	got, gotAt, err := c.Get(ctx, "https://a.example/")
	if err != nil || string(got) != `{"url":"a"}` || !gotAt.Equal(at) {
		t.Fatalf("%s %s %v", got, gotAt, err)
	}
	if err := c.Put(ctx, "https://short.example/", []byte("x"), time.Now(), 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, "TTL expiry", func() bool {
		_, _, err := c.Get(ctx, "https://short.example/")
		return errors.Is(err, ErrNotFound)
	})
	if _, _, err := c.Get(ctx, "https://a.example/"); err != nil {
		t.Errorf("a long-lived entry expired with the short one: %v", err)
	}
	// A real report (23 KB): the embedded file keeps it apart, compressed.
	report := goldenReport(t)
	if err := c.Put(ctx, "https://big.example/", report, at, time.Hour); err != nil {
		t.Fatal(err)
	}
	if got, gotAt, err := c.Get(ctx, "https://big.example/"); err != nil || !bytes.Equal(got, report) || !gotAt.Equal(at) {
		t.Fatalf("a 23 KB report: %d bytes back (equal %v), at %s, %v", len(got), bytes.Equal(got, report), gotAt, err)
	}
}

func testIdempotency(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Idempotency()
	before := time.Now()
	c, existing, err := s.Begin(ctx, "ip:1", "k1", "fp-a", time.Minute)
	if err != nil || c == nil || existing != nil || c.Owner == "" {
		t.Fatalf("first Begin: %+v %v %v", c, existing, err)
	}
	if c.Expires.Before(before.Add(time.Minute)) || c.Expires.After(time.Now().Add(time.Minute)) {
		t.Errorf("lease ends at %s, want one minute from the claim", c.Expires)
	}
	c2, existing, _ := s.Begin(ctx, "ip:1", "k1", "fp-a", time.Minute)
	if c2 != nil || existing == nil || existing.State != IdemInFlight || existing.Fingerprint != "fp-a" || !existing.Expires.Equal(c.Expires) {
		t.Fatalf("second Begin while in flight: %+v %+v", c2, existing)
	}
	if other, _, _ := s.Begin(ctx, "ip:2", "k1", "fp-a", time.Minute); other == nil {
		t.Fatal("keys are scoped to the caller")
	}
	// Renewing moves the lease end that waiting callers are told about.
	if err := s.Renew(ctx, c, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, existing, _ = s.Begin(ctx, "ip:1", "k1", "fp-a", time.Minute); existing == nil || !existing.Expires.Equal(c.Expires) || existing.Expires.Before(before.Add(3*time.Minute)) {
		t.Errorf("after Renew: record lease %v, claim lease %s", existing, c.Expires)
	}
	// Only the holder may finish the key.
	stranger := &Claim{Scope: "ip:1", Key: "k1", Owner: "someone-else"}
	rec := IdemRecord{Fingerprint: "fp-a", Status: 200, Header: map[string]string{"Content-Type": "application/json"}, Body: []byte(`{"ok":true}`)}
	if err := s.Release(ctx, stranger); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("a stranger released the key: %v", err)
	}
	if err := s.Complete(ctx, stranger, rec, time.Hour); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("a stranger completed the key: %v", err)
	}
	if err := s.Complete(ctx, c, rec, time.Hour); err != nil {
		t.Fatal(err)
	}
	_, existing, _ = s.Begin(ctx, "ip:1", "k1", "fp-b", time.Minute)
	if existing == nil || existing.State != IdemDone || existing.Status != 200 || !bytes.Equal(existing.Body, rec.Body) || existing.Fingerprint != "fp-a" || existing.Owner != "" {
		t.Fatalf("after Complete: %+v", existing)
	}
	if err := s.Renew(ctx, c, time.Minute); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("Renew of a completed key: %v", err)
	}
	if err := s.Release(ctx, c); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("Release of a completed key: %v", err)
	}
	if _, existing, _ = s.Begin(ctx, "ip:1", "k1", "fp-a", time.Minute); existing == nil || existing.State != IdemDone {
		t.Error("a late Release removed the completed response")
	}
	// Release frees the key for a retry.
	c, _, _ = s.Begin(ctx, "ip:1", "k2", "fp-a", time.Minute)
	if err := s.Release(ctx, c); err != nil {
		t.Fatal(err)
	}
	if again, _, _ := s.Begin(ctx, "ip:1", "k2", "fp-b", 100*time.Millisecond); again == nil {
		t.Fatal("Begin after Release")
	}
	// An abandoned key frees itself when its lease ends; the old holder can
	// no longer overwrite what the new one does.
	var next *Claim
	testenv.Eventually(t, 5*time.Second, "an abandoned in-flight key to expire", func() bool {
		next, _, _ = s.Begin(ctx, "ip:1", "k2", "fp-c", time.Minute)
		return next != nil
	})
	if err := s.Complete(ctx, c, rec, time.Hour); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("an expired claim completed the key its successor holds: %v", err)
	}
}

func testConcurrentBegin(t *testing.T, b Backend) {
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	winners := 0
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			claim, existing, err := b.Idempotency().Begin(ctx, "scope", "race", "fp", time.Minute)
			if err != nil || (claim == nil && existing == nil) {
				t.Errorf("Begin: %v", err)
			}
			if claim != nil {
				mu.Lock()
				winners++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if winners != 1 {
		t.Fatalf("%d callers own the key, want exactly 1", winners)
	}
}

func testScreenshots(t *testing.T, b Backend) {
	ctx := context.Background()
	shots := b.Screenshots()
	png := []byte("\x89PNG\r\n\x1a\nfake")
	at := time.Date(2026, 11, 22, 10, 0, 7, 900, time.UTC)
	if err := shots.Put(ctx, "https://a.example/", png, at, time.Hour); err != nil {
		t.Fatal(err)
	}
	got, err := shots.Get(ctx, "https://a.example/")
	if err != nil || !bytes.Equal(got.PNG, png) {
		t.Fatalf("%q %v", got.PNG, err)
	}
	if !got.CapturedAt.Equal(at.Truncate(time.Second)) {
		t.Errorf("captured at %v, want %v (whole seconds)", got.CapturedAt, at.Truncate(time.Second))
	}
	if len(got.ETag) < 10 || got.ETag[0] != '"' || got.ETag[len(got.ETag)-1] != '"' {
		t.Errorf("ETag %q is not a quoted strong tag", got.ETag)
	}
	if _, err := shots.Get(ctx, "https://b.example/"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing screenshot: %v", err)
	}

	// A new image replaces the old one and gets a new tag; the same bytes
	// keep theirs, so a client's If-None-Match survives a recapture of an
	// unchanged page.
	other := append(bytes.Clone(png), 'x')
	if err := shots.Put(ctx, "https://a.example/", other, at.Add(time.Minute), time.Hour); err != nil {
		t.Fatal(err)
	}
	got2, err := shots.Get(ctx, "https://a.example/")
	if err != nil || !bytes.Equal(got2.PNG, other) || got2.ETag == got.ETag {
		t.Fatalf("after replacing: %q etag %q (was %q) %v", got2.PNG, got2.ETag, got.ETag, err)
	}
	if err := shots.Put(ctx, "https://c.example/", png, at, time.Hour); err != nil {
		t.Fatal(err)
	}
	if got3, _ := shots.Get(ctx, "https://c.example/"); got3.ETag != got.ETag {
		t.Errorf("same bytes, different tags: %q and %q", got3.ETag, got.ETag)
	}

	// A large image that does not compress: kept as it is.
	noise := make([]byte, 300<<10)
	for i := range noise {
		noise[i] = byte(i*7919 ^ i>>3*31)
	}
	if err := shots.Put(ctx, "https://noise.example/", noise, at, time.Hour); err != nil {
		t.Fatal(err)
	}
	if got, err := shots.Get(ctx, "https://noise.example/"); err != nil || !bytes.Equal(got.PNG, noise) {
		t.Fatalf("a 300 KB image: %d bytes back, %v", len(got.PNG), err)
	}

	// Size cap: refused, and the previous image stays.
	if err := shots.Put(ctx, "https://a.example/", make([]byte, MaxScreenshotBytes+1), at, time.Hour); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversized screenshot: %v, want ErrTooLarge", err)
	}
	if got4, err := shots.Get(ctx, "https://a.example/"); err != nil || !bytes.Equal(got4.PNG, other) {
		t.Fatalf("an oversized put replaced the stored image: %v", err)
	}

	// TTL: gone once it expires.
	if err := shots.Put(ctx, "https://d.example/", png, at, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, "screenshot expiry", func() bool {
		_, err := shots.Get(ctx, "https://d.example/")
		return errors.Is(err, ErrNotFound)
	})
}

func TestEmbeddedPersistsAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	e, err := OpenEmbedded(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenEmbedded(dir); err == nil || !bytes.Contains([]byte(err.Error()), []byte("in use")) {
		t.Errorf("a second process on the same data directory: %v", err)
	}
	e.Monitors().Create(ctx, Monitor{ID: "mon_keep", URL: "https://a.example/", Quota: "q"}, time.Now(), 0, 0)
	e.ScanCache().Put(ctx, "https://a.example/", []byte("r"), time.Now(), time.Hour)
	// Recorded, visible at once, written with the next commit: Close makes that one.
	e.History().Record(ctx, HistoryEntry{URL: "https://a.example/", Score: 77, ScannedAt: time.Now(), Checks: marksOf(2)})
	if top, n, _ := e.History().Top(ctx, 0, 10); n != 1 || top[0].Score != 77 {
		t.Errorf("the history just recorded: %+v", top)
	}
	if s, _ := e.History().Series(ctx, "https://a.example/", true); len(s) != 1 || s[0].Score != 77 {
		t.Errorf("the series just recorded: %+v", s)
	}
	c, _, _ := e.Idempotency().Begin(ctx, "s", "k", "f", time.Minute)
	e.Idempotency().Complete(ctx, c, IdemRecord{Fingerprint: "f", Status: 200, Body: []byte("b")}, time.Hour)
	// A request in flight when the process dies (kill -9: nothing releases
	// its key) must not answer 409 after the restart.
	if c, _, _ := e.Idempotency().Begin(ctx, "s", "dead", "f", time.Hour); c == nil {
		t.Fatal("claim")
	}
	e.Close()
	e, err = OpenEmbedded(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Monitors().Get(ctx, "mon_keep"); err != nil {
		t.Errorf("monitor lost: %v", err)
	}
	if ids, _ := e.Monitors().ClaimRuns(ctx, time.Now(), time.Minute, 5); len(ids) != 1 {
		t.Errorf("schedule lost: %v", ids)
	}
	if r, _, err := e.ScanCache().Get(ctx, "https://a.example/"); err != nil || string(r) != "r" {
		t.Errorf("cache lost: %v", err)
	}
	if top, n, _ := e.History().Top(ctx, 0, 10); n != 1 || top[0].Score != 77 {
		t.Errorf("history lost: %+v", top)
	}
	if s, _ := e.History().Series(ctx, "https://a.example/", true); len(s) != 1 || !reflect.DeepEqual(s[0].Checks, marksOf(2)) {
		t.Errorf("series lost: %+v", s)
	}
	if _, ex, _ := e.Idempotency().Begin(ctx, "s", "k", "f", time.Minute); ex == nil || ex.State != IdemDone {
		t.Errorf("idempotency record lost: %+v", ex)
	}
	if c, ex, _ := e.Idempotency().Begin(ctx, "s", "dead", "f", time.Minute); c == nil {
		t.Errorf("the dead process's in-flight key still held after restart: %+v", ex)
	}
}

func testHistory(t *testing.T, b Backend) {
	ctx := context.Background()
	h := b.History()
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i, e := range []HistoryEntry{
		{URL: "https://a.example/", Score: 60}, {URL: "https://b.example/", Score: 90}, {URL: "https://c.example/", Score: 75},
		{URL: "https://d.example/", Score: 90}, {URL: "https://a.example/", Score: 95}, // a rescanned: its latest outcome counts
	} {
		e.ScannedAt = base.Add(time.Duration(i) * time.Hour)
		if err := h.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	top, total, err := h.Top(ctx, 0, 3)
	if err != nil || total != 4 || len(top) != 3 {
		t.Fatalf("%v total %d err %v", top, total, err)
	}
	want := []string{"https://a.example/", "https://d.example/", "https://b.example/"} // d is newer than b at 90
	for i, w := range want {
		if top[i].URL != w {
			t.Errorf("rank %d: %s, want %s", i+1, top[i].URL, w)
		}
	}
	next, _, _ := h.Top(ctx, 3, 3)
	if len(next) != 1 || next[0].URL != "https://c.example/" {
		t.Errorf("second page: %v", next)
	}
	if empty, _, _ := h.Top(ctx, 10, 3); len(empty) != 0 {
		t.Errorf("past the end: %v", empty)
	}
}

// marksOf makes the checks of scan i: check 1.k passes when k ≤ i, with a
// message that names i for every third check.
func marksOf(i int) report.Marks {
	m := make(report.Marks, 12)
	for k := range m {
		st, msg := report.Fail, "missing"
		if k+1 <= i {
			st = report.Pass
		}
		if k%3 == 0 {
			msg = fmt.Sprintf("scan %d", i)
		}
		m[k] = report.Mark{ID: fmt.Sprintf("1.%d", k+1), Status: st, Message: report.MessageHash(msg)}
	}
	return m
}

func testSeries(t *testing.T, b Backend) {
	ctx := context.Background()
	h := b.History()
	if s, err := h.Series(ctx, "https://never.example/", true); err != nil || s == nil || len(s) != 0 {
		t.Fatalf("a site never scanned: %v %v", s, err)
	}
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	const a, other = "https://a.example/", "https://other.example/"
	entry := func(url string, i int) HistoryEntry {
		return HistoryEntry{URL: url, Score: i, Grade: "C", Level: i % 4, LevelName: report.LevelName(i % 4), ScannedAt: base.Add(time.Duration(i) * time.Hour), Checks: marksOf(i)}
	}
	n := SeriesMax + 5
	for i := 1; i <= n; i++ {
		if err := h.Record(ctx, entry(a, i)); err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			if err := h.Record(ctx, entry(other, i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	s, err := h.Series(ctx, a, true)
	if err != nil || len(s) != SeriesMax {
		t.Fatalf("%d outcomes (%v), want the newest %d", len(s), err, SeriesMax)
	}
	for k, e := range s {
		want := entry(a, n-SeriesMax+1+k)
		if e.URL != a || e.Score != want.Score || e.Grade != "C" || e.Level != want.Level || e.LevelName != want.LevelName || !e.ScannedAt.Equal(want.ScannedAt) || !reflect.DeepEqual(e.Checks, want.Checks) {
			t.Fatalf("outcome %d: %+v, want %+v", k, e, want)
		}
	}
	if o, _ := h.Series(ctx, other, true); len(o) != 3 || o[2].Score != 30 {
		t.Errorf("another site's series: %+v", o)
	}
	// An outcome recorded late (another origin's, slower) takes its place
	// in time; the oldest goes.
	late := entry(a, n-2)
	late.Score, late.ScannedAt = 99, late.ScannedAt.Add(time.Minute)
	if err := h.Record(ctx, late); err != nil {
		t.Fatal(err)
	}
	s, _ = h.Series(ctx, a, true)
	if len(s) != SeriesMax || s[0].Score != n-SeriesMax+2 || s[SeriesMax-3].Score != 99 || s[SeriesMax-1].Score != n {
		t.Errorf("after a late record: first %d, third-last %d, last %d", s[0].Score, s[SeriesMax-3].Score, s[SeriesMax-1].Score)
	}
	// An outcome without checks is kept without them.
	bare := HistoryEntry{URL: a, Score: 7, ScannedAt: base.Add(1000 * time.Hour)}
	if err := h.Record(ctx, bare); err != nil {
		t.Fatal(err)
	}
	if s, _ = h.Series(ctx, a, true); s[len(s)-1].Score != 7 || s[len(s)-1].Checks != nil || s[len(s)-2].Checks == nil {
		t.Errorf("an outcome without checks: %+v", s[len(s)-1])
	}
	// The showcase is unchanged by the series: one entry per site, the latest, no checks.
	top, total, err := h.Top(ctx, 0, 10)
	if err != nil || total != 2 || top[0].URL != other || top[1].Score != 7 || top[0].Checks != nil {
		t.Errorf("top: %+v %d %v", top, total, err)
	}
	// The series is reclaimed SeriesIdle after the last record: on Redis
	// the key's TTL says so (the embedded file's sweep is held to it with
	// a clock in TestSeriesReclaimed).
	if r, ok := b.(*Redis); ok {
		ttl, err := r.c.PTTL(ctx, r.prefix+seriesKey(a)).Result()
		if err != nil || ttl > SeriesIdle || ttl < SeriesIdle-time.Minute {
			t.Errorf("the series expires in %s (%v), want %s", ttl, err, SeriesIdle)
		}
	}
}

// Origins recording scans of one site at once lose none of them.
func testSeriesConcurrent(t *testing.T, b Backend) {
	ctx := context.Background()
	h := b.History()
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	const n = 24
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := h.Record(ctx, HistoryEntry{URL: "https://busy.example/", Score: i, ScannedAt: base.Add(time.Duration(i) * time.Second), Checks: marksOf(i)}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	s, err := h.Series(ctx, "https://busy.example/", true)
	if err != nil || len(s) != n {
		t.Fatalf("%d of %d concurrent records kept (%v)", len(s), n, err)
	}
	for i, e := range s {
		if e.Score != i || !reflect.DeepEqual(e.Checks, marksOf(i)) {
			t.Errorf("outcome %d: %+v", i, e)
		}
	}
}

// The embedded file's sweep reclaims the series of a site not scanned for
// SeriesIdle, and only it: a record within the period keeps the series.
func TestSeriesReclaimed(t *testing.T) {
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: start}
	e, err := openEmbedded(t.TempDir(), embeddedOptions{now: clock.Now, noSweep: true, noSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	h := e.History()
	record := func(url string) {
		t.Helper()
		if err := h.Record(ctx, HistoryEntry{URL: url, Score: 50, ScannedAt: clock.Now(), Checks: marksOf(3)}); err != nil {
			t.Fatal(err)
		}
	}
	record("https://idle.example/")
	record("https://busy.example/")
	clock.Set(start.Add(SeriesIdle - time.Hour))
	record("https://busy.example/")
	clock.Set(start.Add(SeriesIdle + time.Second))
	// Committed (updateLater), then swept.
	if err := e.update(func(*bolt.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := e.sweepAll(); err != nil {
		t.Fatal(err)
	}
	if s, err := h.Series(ctx, "https://idle.example/", true); err != nil || len(s) != 0 {
		t.Errorf("the idle site's series: %+v %v", s, err)
	}
	if s, err := h.Series(ctx, "https://busy.example/", true); err != nil || len(s) != 2 {
		t.Errorf("the busy site's series: %+v %v", s, err)
	}
	n := 0
	e.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketKV).Cursor()
		for k, _ := c.Seek(seriesPrefix); k != nil && bytes.HasPrefix(k, seriesPrefix); k, _ = c.Next() {
			n++
		}
		return nil
	})
	if n != 1 {
		t.Errorf("%d series left in the file, want 1", n)
	}
	// The showcase keeps both sites.
	if _, total, _ := h.Top(ctx, 0, 10); total != 2 {
		t.Errorf("the showcase lists %d sites, want 2", total)
	}
}

func FuzzSeries(f *testing.F) {
	e := HistoryEntry{URL: "https://a.example/", Score: 70, Grade: "C", Level: 2, LevelName: "Usable", ScannedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), Checks: marksOf(2)}
	one := appendSeries(nil, e)
	f.Add(one)
	f.Add(s2.Encode(nil, []byte("1700000000000000000 1 0 F Not Ready\t1.1F00000000\n")))
	f.Add(s2.Encode(nil, []byte("1 2 3 - \tgarbage\n")))
	f.Add(s2.Encode(nil, []byte("x y\n")))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeSeries(e.URL, b, true)
		if err == nil && len(s) > SeriesMax {
			t.Fatalf("%d outcomes read", len(s))
		}
		if bare, err2 := decodeSeries(e.URL, b, false); (err == nil) != (err2 == nil) || len(bare) != len(s) {
			t.Fatalf("read with checks: %d (%v); without: %d (%v)", len(s), err, len(bare), err2)
		}
		// Whatever is stored, a record still lands.
		next := appendSeries(b, e)
		got, err := decodeSeries(e.URL, next, true)
		if err != nil || len(got) == 0 || len(got) > SeriesMax {
			t.Fatalf("after a record: %d outcomes, %v", len(got), err)
		}
		if !slices.ContainsFunc(got, func(g HistoryEntry) bool { return g.Score == 70 && reflect.DeepEqual(g.Checks, e.Checks) }) {
			t.Fatalf("the record is not in %+v", got)
		}
	})
}

// A Redis holding monitors in the earlier key layout (before hash tags) is
// refused with what to do, not opened as if it held none.
func TestRedisRefusesTheEarlierLayout(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	r, err := OpenRedis(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.c.ZAdd(ctx, "agentready:sched:runs", redis.Z{Score: 1, Member: "mon_old"}).Err(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if _, err := OpenRedis(ctx, srv.URL); err == nil || !strings.Contains(err.Error(), "earlier agentready") {
		t.Fatalf("opening a Redis with the earlier layout: %v", err)
	}
}

// So is a data file of the earlier layout (one bucket per concern, values
// inline).
func TestEmbeddedRefusesTheEarlierLayout(t *testing.T) {
	dir := t.TempDir()
	db, err := bolt.Open(filepath.Join(dir, "agentready.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		for _, b := range []string{"kv", "zsets", "history"} {
			if _, err := tx.CreateBucket([]byte(b)); err != nil {
				return err
			}
		}
		return nil
	})
	db.Close()
	if _, err := OpenEmbedded(dir); err == nil || !strings.Contains(err.Error(), "earlier agentready") {
		t.Fatalf("opening a file of the earlier layout: %v", err)
	}
}

// A file of layout 2 (every value this build reads as it was) is taken
// over, and then says layout 3, which a build of layout 2 refuses. A file of a layout
// this build does not know is refused with what to do.
func TestEmbeddedLayoutVersions(t *testing.T) {
	write := func(t *testing.T, dir, version string) {
		db, err := bolt.Open(filepath.Join(dir, "agentready.db"), 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.Update(func(tx *bolt.Tx) error {
			if _, err := tx.CreateBucket(bucketKV); err != nil {
				return err
			}
			meta, err := tx.CreateBucket(bucketMeta)
			if err != nil {
				return err
			}
			return meta.Put(layoutKey, []byte(version))
		}); err != nil {
			t.Fatal(err)
		}
	}
	layoutOf := func(t *testing.T, dir string) string {
		db, err := bolt.Open(filepath.Join(dir, "agentready.db"), 0o600, &bolt.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var v string
		db.View(func(tx *bolt.Tx) error { v = string(tx.Bucket(bucketMeta).Get(layoutKey)); return nil })
		return v
	}
	t.Run("layout 2 is upgraded", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "2")
		e, err := OpenEmbedded(dir)
		if err != nil {
			t.Fatalf("a layout-2 file was refused: %v", err)
		}
		e.Close()
		if v := layoutOf(t, dir); v != layoutVersion {
			t.Errorf("after opening, the file says layout %q, want %q", v, layoutVersion)
		}
	})
	t.Run("an unknown layout is refused", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "9")
		_, err := OpenEmbedded(dir)
		if err == nil || !strings.Contains(err.Error(), `layout "9"`) || !strings.Contains(err.Error(), "move the file away") {
			t.Fatalf("a layout-9 file: %v", err)
		}
		if v := layoutOf(t, dir); v != "9" {
			t.Errorf("a refused file was changed to layout %q", v)
		}
	})
}
