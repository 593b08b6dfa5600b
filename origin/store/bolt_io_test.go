package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// What a monitor run costs the embedded file (the steady 100-monitor bench:
// docs/benchmarks.md, "Embedded store: bytes written per monitor run"): the
// claim is a read (its lease is held in memory), the run's outcome and
// events one commit, the delivery's outcome one more.
func TestEmbeddedRunCommits(t *testing.T) {
	e, err := openEmbedded(t.TempDir(), embeddedOptions{noSweep: true, noSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	m := e.Monitors()
	now := time.Now().Truncate(time.Millisecond)
	if err := m.Create(ctx, testMonitor("mon_c"), now, 0, 0); err != nil {
		t.Fatal(err)
	}
	commits := func() int64 { return e.Stats().Commits }
	before := commits()
	runs, err := m.ClaimRuns(ctx, now, time.Minute, 10)
	if err != nil || len(runs) != 1 {
		t.Fatalf("claim: %v %v", runs, err)
	}
	if n := commits() - before; n != 0 {
		t.Errorf("claiming a run made %d commits, want none (the lease is held in memory)", n)
	}
	if again, _ := m.ClaimRuns(ctx, now, time.Minute, 10); len(again) != 0 {
		t.Errorf("claimed again within the lease: %v", again)
	}
	if got, _ := m.Get(ctx, "mon_c"); !got.Running {
		t.Error("a claimed run does not show as running")
	}
	before = commits()
	claims, err := m.CompleteRun(ctx, runs[0], RunState{Runs: 1, ReportID: "rep_1"}, now.Add(time.Hour), goldenReport(t), time.Hour,
		[]Delivery{sampleDelivery("evt_c1", "mon_c", now), sampleDelivery("evt_c2", "mon_c", now)}, 30*time.Second)
	if err != nil || len(claims) != 2 {
		t.Fatalf("complete: %v %v", claims, err)
	}
	if n := commits() - before; n != 1 {
		t.Errorf("recording a run with its report and two events made %d commits, want 1", n)
	}
	before = commits()
	if _, err := m.FinishAttempt(ctx, claims[0], Attempt{At: now, Code: 204, Delivered: true}); err != nil {
		t.Fatal(err)
	}
	if n := commits() - before; n != 1 {
		t.Errorf("recording a delivery attempt made %d commits, want 1", n)
	}
	// Nothing due: no commit either.
	before = commits()
	if c, _ := m.ClaimRuns(ctx, now.Add(time.Minute), time.Minute, 10); len(c) != 0 {
		t.Errorf("claimed a run not due: %v", c)
	}
	if c, _ := m.ClaimDeliveries(ctx, now.Add(time.Second), time.Minute, 10); len(c) != 0 {
		t.Errorf("claimed a delivery its run holds: %v", c)
	}
	if n := commits() - before; n != 0 {
		t.Errorf("claims that found nothing made %d commits", n)
	}
}

// No B-tree node of the file spans more than one page, however large the
// values: a node of several pages is written with one write, which Linux
// caches as one large folio, and every later commit that reuses one of its
// pages then writes the whole folio (see chunkBytes). Values come back as
// they went in.
func TestEmbeddedNodesFitAPage(t *testing.T) {
	e, err := openEmbedded(t.TempDir(), embeddedOptions{noSweep: true, noSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	shot := make([]byte, 200<<10) // incompressible, as a PNG is
	rand.Read(shot)
	at := time.Now().UTC().Truncate(time.Second)
	if err := e.Screenshots().Put(ctx, "https://a.example/", shot, at, time.Hour); err != nil {
		t.Fatal(err)
	}
	blobEntries := func() int {
		n := 0
		e.db.View(func(tx *bolt.Tx) error {
			c := tx.Bucket(bucketKV).Cursor()
			for k, _ := c.Seek(blobPrefix); k != nil && bytes.HasPrefix(k, blobPrefix); k, _ = c.Next() {
				n++
			}
			return nil
		})
		return n
	}
	shotEntries := blobEntries() // the store held nothing else yet
	report := goldenReport(t)
	for i := range 20 {
		url := "https://s" + strings.Repeat("x", i) + ".example/"
		if err := e.ScanCache().Put(ctx, url, scanOf(report, url, at), at, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	delivery := strings.Repeat(`{"a":"evt_0123456789","b":"https://hooks.example/x"}`, 20) // about 1 KB, compressible
	for i := range 50 {
		if err := e.set(ctx, "d"+string(rune('a'+i%26))+strings.Repeat("z", i), []byte(delivery), 0); err != nil {
			t.Fatal(err)
		}
	}
	got, err := e.Screenshots().Get(ctx, "https://a.example/")
	if err != nil || !bytes.Equal(got.PNG, shot) {
		t.Fatalf("the screenshot came back as %d bytes, %v", len(got.PNG), err)
	}
	if b, _, err := e.ScanCache().Get(ctx, "https://s.example/"); err != nil || !bytes.Equal(b, scanOf(report, "https://s.example/", at)) {
		t.Fatalf("the scan came back as %d bytes, %v", len(b), err)
	}
	if b, err := e.get(ctx, "da"); err != nil || string(b) != delivery {
		t.Fatalf("a compressed inline value came back as %q, %v", b, err)
	}
	err = e.db.View(func(tx *bolt.Tx) error {
		st := tx.Bucket(bucketKV).Stats()
		if st.LeafOverflowN != 0 || st.BranchOverflowN != 0 {
			t.Errorf("%d leaf and %d branch pages are overflow pages of multi-page nodes, want none", st.LeafOverflowN, st.BranchOverflowN)
		}
		v := tx.Bucket(bucketKV).Get([]byte("da"))
		if v[8] != kindInlineS2 || len(v) > len(delivery)/2 {
			t.Errorf("a 1 KB JSON value is stored as kind %d in %d bytes, want it compressed", v[8], len(v))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every chunk goes with its blob once nothing refers to it.
	before := blobEntries()
	if err := e.del(ctx, "shot:https://a.example/"); err != nil {
		t.Fatal(err)
	}
	if err := e.sweepAll(); err != nil {
		t.Fatal(err)
	}
	if err := e.sweepAll(); err != nil { // the first pass may have marked it before the delete
		t.Fatal(err)
	}
	// The screenshot's chunks (200 KB in chunks of at most chunkBytes)
	// are gone, and the 20 reports' are all left.
	if after := blobEntries(); before-after != shotEntries || shotEntries < len(shot)/chunkBytes || after < 20 {
		t.Errorf("the screenshot took %d blob entries; %d before it went and %d after, want %d fewer and the reports' left", shotEntries, before, after, shotEntries)
	}
}

// A file written by an earlier build keeps what it wrote readable: a blob
// whole in one entry, an inline value uncompressed, and a lease (claims were
// written to the file), which is handed back at open like any dead claim.
func TestEmbeddedReadsEarlierEntries(t *testing.T) {
	dir := t.TempDir()
	e, err := openEmbedded(dir, embeddedOptions{noSweep: true, noSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now().Truncate(time.Millisecond)
	m := e.Monitors()
	if err := m.Create(ctx, testMonitor("mon_e"), now.Add(-time.Minute), 0, 0); err != nil {
		t.Fatal(err)
	}
	report := goldenReport(t)
	k := embeddedLayout.keys("mon_e")
	err = e.db.Update(func(tx *bolt.Tx) error {
		kvb := tx.Bucket(bucketKV)
		// As the earlier build wrote them: the blob whole (raw), its
		// reference, an inline value, and the run's lease, claimed.
		h := bytes.Repeat([]byte{7}, blobHash)
		if err := kvb.Put(blobKey(h), append(append(zentry(kindBlobBody, nil), blobRaw), report...)); err != nil {
			return err
		}
		if err := kvb.Put([]byte(k.report("rep_old")), append(zentry(kindBlob, nil), h...)); err != nil {
			return err
		}
		if err := kvb.Put([]byte("plain"), append(zentry(kindInline, nil), strings.Repeat("p", 900)...)); err != nil {
			return err
		}
		if err := zadd(tx, k.runs(), "mon_e", ms(now.Add(time.Hour))); err != nil { // the lease's end
			return err
		}
		lease := []byte("token|" + strconv.FormatInt(ms(now.Add(-time.Minute)), 10))
		return kvb.Put([]byte(k.runLease()), append(zentry(kindInline, nil), lease...))
	})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	e, err = openEmbedded(dir, embeddedOptions{noSweep: true, noSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	m = e.Monitors()
	if r, err := m.Report(ctx, "mon_e", "rep_old"); err != nil || !bytes.Equal(r, report) {
		t.Errorf("a blob written whole: %d bytes, %v", len(r), err)
	}
	if b, err := e.get(ctx, "plain"); err != nil || string(b) != strings.Repeat("p", 900) {
		t.Errorf("an uncompressed inline value: %q, %v", b, err)
	}
	c, err := m.ClaimRuns(ctx, time.Now(), time.Minute, 10)
	if err != nil || len(c) != 1 || !c[0].Due.Equal(now.Add(-time.Minute)) {
		t.Errorf("the claim left in the file: %+v %v, want mon_e due again with its own due time", c, err)
	}
	e.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketKV).Get([]byte(k.runLease())) != nil {
			t.Error("the lease is still in the file")
		}
		return nil
	})
}
