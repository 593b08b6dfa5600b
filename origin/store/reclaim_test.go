package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// goldenReport is a real report (the engine's golden report of the full
// fixture site), about 23 KB of JSON; each scan below gets its own URL and
// time in it, so no two are the same bytes.
func goldenReport(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("../../engine/testdata/golden/full.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func scanOf(golden []byte, url string, at time.Time) []byte {
	r := bytes.Replace(golden, []byte("http://{{HOST}}/"), []byte(url), 1)
	return bytes.Replace(r, []byte("2026-11-22T12:00:00Z"), []byte(at.UTC().Format(time.RFC3339Nano)), 1)
}

// fileCensus counts what the embedded file holds.
type fileCensus struct {
	hwm                        int64 // bytes of the file in use (bbolt's high-water mark)
	free                       int   // pages free within it
	leafPages, branchPages     int
	leafInuse                  int64
	reports, cache, deliveries int
	blobs                      int
	deliveryBytes, reportBlobs int64 // bytes of delivery records and of the blobs reports refer to
	otherBytes                 int64 // bytes of every other entry (keys and values)
}

func census(t *testing.T, e *Embedded) fileCensus {
	t.Helper()
	var c fileCensus
	now := e.now().UnixNano()
	err := e.db.View(func(tx *bolt.Tx) error {
		c.hwm = tx.Size()
		kvb := tx.Bucket(bucketKV)
		st := kvb.Stats()
		c.leafPages, c.branchPages, c.leafInuse = st.LeafPageN+st.LeafOverflowN, st.BranchPageN+st.BranchOverflowN, int64(st.LeafInuse)
		reportBlobs := map[string]bool{}
		cur := kvb.Cursor()
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			key := string(k)
			switch {
			case bytes.HasPrefix(k, blobPrefix):
				if len(k) == len(blobPrefix)+blobHash {
					c.blobs++ // a blob's first entry (the rest are its chunks)
				}
				if reportBlobs[string(blobOf(k))] {
					c.reportBlobs += int64(len(k) + len(v))
				}
				continue
			case expired(v, now):
				continue // the next sweep's
			case strings.Contains(key, ":rep:"):
				c.reports++
				reportBlobs[string(v[valHeader:valHeader+blobHash])] = true
			case strings.HasPrefix(key, "scan:"):
				c.cache++
			case strings.HasPrefix(key, "{m") && strings.Contains(key, ":idx:"):
				c.deliveryBytes += int64(len(k) + len(v))
				continue
			case strings.HasPrefix(key, "{m") && strings.Contains(key, "/") && !strings.Contains(key, "\x00") && !strings.HasSuffix(key, keyLease):
				c.deliveries++
				c.deliveryBytes += int64(len(k) + len(v))
				continue
			}
			c.otherBytes += int64(len(k) + len(v))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c.free = e.db.Stats().FreePageN
	return c
}

// TestReclamationOverADay runs 1,000 monitors every 15 minutes for 26
// simulated hours on the embedded file, with a fake clock and a fake
// scanner: each run's report is a real 23 KB report with its own URL and
// time, put in the scan cache and recorded as the run's report (so the two
// share one blob), and every event is delivered at once. The store's sweep
// runs every 30 simulated minutes (it visits 5,000 keys every 10 s, so a
// pass over this file takes about that long).
//
// What must not grow: reports (a monitor keeps its latest, and those
// superseded less than ReportGrace ago), scan-cache entries (one per site,
// 10 minutes), and the blobs behind them (none left without a reference).
// What grows, by design: the delivery lists, which keep the newest
// KeptDeliveries of each monitor, a week once finished (docs/api.md): at a
// 15-minute cadence a list fills in 25 hours, from 4 after the first hour
// to 96 after a day.
//
// Hence the stated margin: the file (bbolt's high-water mark) after 24
// hours is no larger than after the first hour plus three times the bytes
// the delivery lists and the reports added (B-tree pages are 50–100% full
// and each entry carries a 16-byte header; the reports' window of
// ReportGrace fills in the first hour and a quarter) plus 4 MB and 4 KB
// per monitor (free pages, which vary with how writes were grouped, and
// branch pages). And once every list is full, at 25 hours, the file stops
// growing: after 26 hours it is no larger than at 25½ plus 4 MB.
//
// The file is written without fsync (NoSync): its size and content do not
// depend on syncs. Under the race detector the store's work is several
// times slower, so the day runs with 100 monitors there (every bound
// scales); go test without -race runs the 1,000.
func TestReclamationOverADay(t *testing.T) {
	if testing.Short() {
		t.Skip("a simulated day of 1,000 monitors")
	}
	monitorsN := 1000
	if raceDetector {
		monitorsN = 100
	}
	const (
		cadence = 15 * time.Minute
		workers = 32
		minutes = 26 * 60
	)
	start := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: start}
	e, err := openEmbedded(t.TempDir(), embeddedOptions{now: clock.Now, noSweep: true, noSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	ms := e.Monitors()
	golden := goldenReport(t)
	wantRuns := map[int]int{} // by the minute a census is taken: runs due by then
	// Each right after a sweep, which deletes the blobs nothing refers to.
	censusAt := map[int]string{59: "after 1 hour", 24*60 - 1: "after 24 hours", 25*60 + 29: "after 25½ hours", minutes - 1: "after 26 hours"}
	for i := range monitorsN {
		m := testMonitor(fmt.Sprintf("mon_%04d", i))
		m.URL, m.Interval, m.Cadence = fmt.Sprintf("https://site-%04d.example/", i), cadence, "15m"
		// Due times spread over the cadence, as monitors created over time are.
		first := start.Add(time.Duration(i) * cadence / time.Duration(monitorsN))
		if err := ms.Create(ctx, m, first, 0, 0); err != nil {
			t.Fatal(err)
		}
		for at := range censusAt {
			if last := start.Add(time.Duration(at) * time.Minute); !first.After(last) {
				wantRuns[at] += int(last.Sub(first)/cadence) + 1
			}
		}
	}

	runs := 0
	step := func(now time.Time) {
		clock.Set(now)
		claims, err := ms.ClaimRuns(ctx, now, 2*time.Minute, monitorsN)
		if err != nil {
			t.Fatal(err)
		}
		runs += len(claims)
		work := make(chan RunClaim)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for c := range work {
					m := c.Monitor
					raw := scanOf(golden, m.URL, now)
					if err := e.ScanCache().Put(ctx, m.URL, raw, now, 10*time.Minute); err != nil {
						t.Error(err)
					}
					st := m.Run
					st.Runs++
					st.LastRun, st.LastScheduled, st.ReportID = now, c.Due, fmt.Sprintf("rep_%s_%d", m.ID, st.Runs)
					d := sampleDelivery(fmt.Sprintf("evt_%s_%d", m.ID, st.Runs), m.ID, now)
					dcs, err := ms.CompleteRun(ctx, c, st, c.Due.Add(cadence), raw, 29*time.Hour, []Delivery{d}, 35*time.Second)
					if err != nil {
						t.Error(err)
						continue
					}
					for _, dc := range dcs {
						if _, err := ms.FinishAttempt(ctx, dc, Attempt{At: now, Code: 204, Delivered: true}); err != nil {
							t.Error(err)
						}
					}
				}
			})
		}
		for _, c := range claims {
			work <- c
		}
		close(work)
		wg.Wait()
	}

	began := time.Now()
	got := map[string]fileCensus{}
	for m := range minutes {
		step(start.Add(time.Duration(m) * time.Minute))
		if m%30 == 29 {
			if err := e.sweepAll(); err != nil {
				t.Fatal(err)
			}
		}
		if when, ok := censusAt[m]; ok {
			c := census(t, e)
			got[when] = c
			t.Logf("%s: file %.1f MB in use (%d pages free); %d reports (their blobs %.1f MB), %d scan-cache entries, %d blobs, %d deliveries (records and index %.1f MB), other entries %.1f MB",
				when, mb(c.hwm), c.free, c.reports, mb(c.reportBlobs), c.cache, c.blobs, c.deliveries, mb(c.deliveryBytes), mb(c.otherBytes))
			if runs != wantRuns[m] {
				t.Errorf("%s: %d runs, want %d (every monitor every 15 minutes)", when, runs, wantRuns[m])
			}
			n := monitorsN
			if c.reports > 5*n+n/10 || c.cache > n || c.blobs > c.reports+c.cache || c.blobs < c.reports {
				t.Errorf("%s: %d reports, %d cache entries, %d blobs: want at most %d reports (the latest of each monitor and those superseded within ReportGrace), %d cache entries, and no blob without a reference", when, c.reports, c.cache, c.blobs, 5*n+n/10, n)
			}
			if want := min(wantRuns[m], KeptDeliveries*n); c.deliveries != want {
				t.Errorf("%s: %d deliveries kept, want %d (every one, up to %d per monitor)", when, c.deliveries, want, KeptDeliveries)
			}
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	t.Logf("%d runs of %d monitors in %s", runs, monitorsN, time.Since(began).Round(time.Millisecond))
	hour, day, full, end := got["after 1 hour"], got["after 24 hours"], got["after 25½ hours"], got["after 26 hours"]
	margin := 3*(day.deliveryBytes-hour.deliveryBytes+day.reportBlobs-hour.reportBlobs) + 4<<20 + int64(monitorsN)*4<<10
	if day.hwm > hour.hwm+margin {
		t.Errorf("the file grew from %.1f MB after an hour to %.1f MB after a day, more than the margin of %.1f MB", mb(hour.hwm), mb(day.hwm), mb(margin))
	} else {
		t.Logf("the file grew %.1f MB from the first hour to the end of the day, within the margin of %.1f MB (three times the %.1f MB the delivery lists and the reports added, plus 4 MB and 4 KB per monitor)",
			mb(day.hwm-hour.hwm), mb(margin), mb(day.deliveryBytes-hour.deliveryBytes+day.reportBlobs-hour.reportBlobs))
	}
	if end.hwm > full.hwm+4<<20 {
		t.Errorf("with every delivery list full the file still grew, from %.1f MB to %.1f MB in half an hour", mb(full.hwm), mb(end.hwm))
	}
	// Without reclamation every report would stay for its 29 hours.
	t.Logf("kept for 29 hours instead, the 24 hours' %d reports would take about %.0f MB of blobs", wantRuns[24*60-1], mb(day.reportBlobs)/float64(max(day.reports, 1))*float64(wantRuns[24*60-1]))
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// Values of the same bytes under several keys are stored once; the sweep
// deletes a blob once nothing refers to it, and not before.
func TestEmbeddedBlobsSharedAndSwept(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)}
	e, err := openEmbedded(t.TempDir(), embeddedOptions{now: clock.Now, noSweep: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	report := goldenReport(t)
	blobs := func() int { return census(t, e).blobs }
	if err := e.ScanCache().Put(ctx, "https://a.example/", report, clock.Now(), 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := e.set(ctx, "copy", report, time.Hour); err != nil {
		t.Fatal(err)
	}
	st := e.Stats()
	if st.BlobsNew != 1 || st.BlobsShared != 1 || blobs() != 1 {
		t.Fatalf("two keys with the same bytes: %d blobs written, %d shared, %d in the file; want 1, 1, 1", st.BlobsNew, st.BlobsShared, blobs())
	}
	if fi, _ := os.Stat(e.db.Path()); fi.Size() > 4<<20 {
		t.Errorf("the file is %d bytes", fi.Size())
	}
	// The cache entry expires: the blob stays for the other key.
	clock.Set(clock.Now().Add(11 * time.Minute))
	if err := e.sweepAll(); err != nil {
		t.Fatal(err)
	}
	if got, _, err := e.ScanCache().Get(ctx, "https://a.example/"); !errors.Is(err, ErrNotFound) {
		t.Errorf("an expired cache entry: %d bytes, %v", len(got), err)
	}
	if got, err := e.get(ctx, "copy"); err != nil || !bytes.Equal(got, report) {
		t.Fatalf("the other key lost its value: %v", err)
	}
	if blobs() != 1 {
		t.Fatalf("%d blobs after the cache entry went, want the one the other key refers to", blobs())
	}
	// Overwritten with small bytes: nothing refers to the blob any more.
	if err := e.set(ctx, "copy", []byte("small"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := e.sweepAll(); err != nil {
		t.Fatal(err)
	}
	if blobs() != 0 {
		t.Errorf("%d blobs left with nothing referring to them", blobs())
	}
}

// A commit whose keys would live in different slots of a Redis Cluster is
// refused before it is sent, on one Redis as on a Cluster: a test on one
// Redis catches what a Cluster would refuse.
func TestRedisCommitRefusesKeysOfTwoSlots(t *testing.T) {
	for name, open := range backends(t) {
		if name == "embedded" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			r := open(t).(*Redis)
			ok, err := redisTx{r}.commit(context.Background(), nil, []op{
				{kind: opSet, key: "{m1}mon:a:cfg", val: []byte("x")},
				{kind: opSet, key: "{m2}mon:b:cfg", val: []byte("y")},
			})
			if ok || !errors.Is(err, errCrossSlot) {
				t.Fatalf("a commit over {m1} and {m2}: %v, %v; want errCrossSlot", ok, err)
			}
			if v, _ := r.get(context.Background(), "{m1}mon:a:cfg"); v != nil {
				t.Error("a refused commit wrote")
			}
		})
	}
}
