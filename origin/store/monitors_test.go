package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

func testMonitor(id string) Monitor {
	return Monitor{ID: id, URL: "https://a.example/", CallbackURL: "https://hooks.example/x", Cadence: "1h", Interval: time.Hour,
		Events: []string{"scan.completed", "score.changed"}, Secret: "whsec_x", Quota: "ip:192.0.2.1", Created: time.Now().UTC().Truncate(time.Second)}
}

func testMonitorLifecycle(t *testing.T, b Backend) {
	ctx := context.Background()
	m := b.Monitors()
	first := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	if err := m.Create(ctx, testMonitor("mon_1"), first, 2, 0); err != nil {
		t.Fatal(err)
	}
	if err := m.Create(ctx, testMonitor("mon_1"), first, 2, 0); err == nil || errors.Is(err, ErrQuota) {
		t.Errorf("creating the same id twice: %v, want an 'exists' error", err)
	}
	if err := m.Create(ctx, testMonitor("mon_2"), first, 2, 0); err != nil {
		t.Fatal(err)
	}
	if err := m.Create(ctx, testMonitor("mon_3"), first, 2, 0); !errors.Is(err, ErrQuota) {
		t.Errorf("third monitor of a quota of 2: %v, want ErrQuota", err)
	}
	other := testMonitor("mon_4")
	other.Quota = "key:other"
	if err := m.Create(ctx, other, first, 2, 0); err != nil {
		t.Errorf("another caller's quota is separate: %v", err)
	}
	got, err := m.Get(ctx, "mon_1")
	if err != nil || got.URL != "https://a.example/" || got.Secret != "whsec_x" || got.Interval != time.Hour || !got.NextRun.Equal(first) {
		t.Fatalf("%+v %v (next run %s, want %s)", got, err, got.NextRun, first)
	}
	if err := m.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Get(ctx, "mon_1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("after delete: %v", err)
	}
	if err := m.Delete(ctx, got); !errors.Is(err, ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if err := m.Create(ctx, testMonitor("mon_5"), first, 2, 0); err != nil {
		t.Errorf("a deleted monitor still counts against the quota: %v", err)
	}
	if c, _ := m.ClaimRuns(ctx, first.Add(time.Hour), time.Minute, 10); len(c) != 3 {
		t.Errorf("claimed %v, want the three live monitors (a deleted one is never claimed)", c)
	}
}

// completeRun is CompleteRun queueing the deliveries (not claiming them).
func completeRun(ctx context.Context, m Monitors, c RunClaim, st RunState, next time.Time, report []byte, ttl time.Duration, ds []Delivery) error {
	_, err := m.CompleteRun(ctx, c, st, next, report, ttl, ds, 0)
	return err
}

func sampleDelivery(id, mon string, at time.Time) Delivery {
	return Delivery{ID: id, MonitorID: mon, Type: "scan.completed", Payload: json.RawMessage(`{"id":"` + id + `"}`),
		Created: at.UTC(), Status: DeliveryPending, NextAttempt: at.UTC(), Scheduled: true}
}

func testMonitorRuns(t *testing.T, b Backend) {
	ctx := context.Background()
	m := b.Monitors()
	now := time.Now().Truncate(time.Millisecond)
	if err := m.Create(ctx, testMonitor("mon_1"), now.Add(time.Minute), 0, 0); err != nil {
		t.Fatal(err)
	}
	if c, _ := m.ClaimRuns(ctx, now, time.Minute, 10); len(c) != 0 {
		t.Errorf("claimed a run not yet due: %v", c)
	}
	later := now.Add(2 * time.Minute)
	c, err := m.ClaimRuns(ctx, later, time.Minute, 10)
	if err != nil || len(c) != 1 || c[0].MonitorID != "mon_1" || !c[0].Due.Equal(now.Add(time.Minute)) || c[0].Token == "" {
		t.Fatalf("due run: %+v %v", c, err)
	}
	if again, _ := m.ClaimRuns(ctx, later, time.Minute, 10); len(again) != 0 {
		t.Errorf("claimed twice within the lease: %v", again)
	}
	if got, _ := m.Get(ctx, "mon_1"); !got.Running || !got.NextRun.IsZero() {
		t.Errorf("while claimed: running=%v next %s, want running and no next run (the schedule holds the lease's end)", got.Running, got.NextRun)
	}
	// The lease runs out: another origin takes the run over, and the first
	// holder can no longer complete it.
	taken, _ := m.ClaimRuns(ctx, later.Add(2*time.Minute), time.Minute, 10)
	if len(taken) != 1 {
		t.Fatalf("an expired lease was not taken over: %v", taken)
	}
	if !taken[0].Due.Equal(c[0].Due) {
		t.Errorf("the run taken over is due %s, want its own due time %s (not the lease's end)", taken[0].Due, c[0].Due)
	}
	st := RunState{Runs: 1, LastRun: later, Baseline: true, Score: 80, Level: 3, ReportID: "r1"}
	if err := completeRun(ctx, m, c[0], st, later.Add(time.Hour), []byte("report"), time.Hour, []Delivery{sampleDelivery("evt_stale", "mon_1", later)}); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("completing under a lost lease: %v, want ErrLeaseLost", err)
	}
	next := later.Add(time.Hour)
	if err := completeRun(ctx, m, taken[0], st, next, []byte("report"), time.Hour, []Delivery{sampleDelivery("evt_1", "mon_1", later)}); err != nil {
		t.Fatal(err)
	}
	if err := completeRun(ctx, m, taken[0], st, next, nil, 0, nil); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("completing twice: %v, want ErrLeaseLost", err)
	}
	got, _ := m.Get(ctx, "mon_1")
	if got.Run.Score != 80 || !got.Run.Baseline || !got.NextRun.Equal(next) || got.Running {
		t.Errorf("after the run: %+v next %s, want score 80 and next %s", got.Run, got.NextRun, next)
	}
	if r, err := m.Report(ctx, "mon_1", "r1"); err != nil || string(r) != "report" {
		t.Errorf("report: %q %v", r, err)
	}
	// A real report, as large as they are, comes back as it went in.
	big := goldenReport(t)
	c4, _ := m.ClaimRuns(ctx, next, time.Minute, 10)
	if len(c4) != 1 {
		t.Fatalf("the next run: %v", c4)
	}
	if err := completeRun(ctx, m, c4[0], RunState{Runs: 2, ReportID: "r2"}, next.Add(time.Hour), big, time.Hour, nil); err != nil {
		t.Fatal(err)
	}
	if r, err := m.Report(ctx, "mon_1", "r2"); err != nil || !bytes.Equal(r, big) {
		t.Fatalf("a 23 KB report: %d bytes back, %v", len(r), err)
	}
	next = next.Add(time.Hour)
	ds, _ := m.Deliveries(ctx, "mon_1", 10)
	if len(ds) != 1 || ds[0].ID != "evt_1" {
		t.Errorf("the outbox holds %+v, want only evt_1 (the stale completion wrote nothing)", ds)
	}
	// A released run is due again at once.
	c2, _ := m.ClaimRuns(ctx, next, time.Minute, 10)
	if len(c2) != 1 {
		t.Fatalf("the next run: %v", c2)
	}
	if err := m.ReleaseRun(ctx, c2[0], next); err != nil {
		t.Fatal(err)
	}
	if got, _ := m.Get(ctx, "mon_1"); got.Running {
		t.Error("a handed-back run still shows as running")
	}
	if c3, _ := m.ClaimRuns(ctx, next, time.Minute, 10); len(c3) != 1 || !c3[0].Due.Equal(c2[0].Due) {
		t.Errorf("a released run: %v, want it claimable with its due time %s", c3, c2[0].Due)
	}
}

func testConcurrentClaims(t *testing.T, b Backend) {
	ctx := context.Background()
	m := b.Monitors()
	now := time.Now()
	for i := range 60 {
		if err := m.Create(ctx, testMonitor(fmt.Sprintf("mon_%02d", i)), now.Add(-time.Duration(i)*time.Second), 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var all []string
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				c, err := m.ClaimRuns(ctx, now, time.Hour, 4)
				if err != nil {
					t.Error(err)
					return
				}
				if len(c) == 0 {
					return
				}
				mu.Lock()
				for _, x := range c {
					all = append(all, x.MonitorID)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	sort.Strings(all)
	if len(all) != 60 {
		t.Fatalf("claimed %d runs, want 60: %v", len(all), all)
	}
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			t.Errorf("%s claimed twice", all[i])
		}
	}
}

// runOnce creates a monitor and completes one run that writes deliveries.
func runOnce(t *testing.T, m Monitors, id string, at time.Time, ds ...Delivery) {
	t.Helper()
	ctx := context.Background()
	if _, err := m.Get(ctx, id); errors.Is(err, ErrNotFound) {
		if err := m.Create(ctx, testMonitor(id), at, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	c, err := m.ClaimRuns(ctx, at, time.Minute, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range c {
		if x.MonitorID == id {
			if err := completeRun(ctx, m, x, RunState{Runs: 1}, at.Add(time.Hour), nil, 0, ds); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no run of %s was due at %s", id, at)
}

func claimOne(t *testing.T, m Monitors, at time.Time) DeliveryClaim {
	t.Helper()
	c, err := m.ClaimDeliveries(context.Background(), at, time.Minute, 10)
	if err != nil || len(c) != 1 {
		t.Fatalf("claiming one delivery at %s: %+v %v", at, c, err)
	}
	return c[0]
}

func testOutbox(t *testing.T, b Backend) {
	ctx := context.Background()
	m := b.Monitors()
	now := time.Now().Truncate(time.Millisecond)
	runOnce(t, m, "mon_1", now, sampleDelivery("evt_1", "mon_1", now))
	c := claimOne(t, m, now)
	if c.Delivery.ID != "evt_1" || c.Monitor.Secret != "whsec_x" || c.Cancel != "" {
		t.Fatalf("claim: %+v", c)
	}
	if again, _ := m.ClaimDeliveries(ctx, now, time.Minute, 10); len(again) != 0 {
		t.Errorf("a held delivery was claimed again: %+v", again)
	}
	retry := now.Add(10 * time.Second)
	if _, err := m.FinishAttempt(ctx, c, Attempt{At: now, Code: 500, RetryAt: retry, MaxFailures: 10}); err != nil {
		t.Fatal(err)
	}
	got, _ := m.Get(ctx, "mon_1")
	if got.Delivery.ConsecutiveFailures != 1 || got.Delivery.Last == nil || got.Delivery.Last.Status != "retrying" || got.Delivery.Last.Code != 500 {
		t.Errorf("monitor after a failed first attempt: %+v", got.Delivery)
	}
	if early, _ := m.ClaimDeliveries(ctx, retry.Add(-time.Second), time.Minute, 10); len(early) != 0 {
		t.Errorf("claimed before its retry time: %+v", early)
	}
	c = claimOne(t, m, retry)
	if c.Delivery.Attempts != 1 || c.Delivery.ID != "evt_1" {
		t.Errorf("retry claim: %+v", c.Delivery)
	}
	if _, err := m.FinishAttempt(ctx, c, Attempt{At: retry, Code: 204, Delivered: true, Latency: 12 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	got, _ = m.Get(ctx, "mon_1")
	if got.Delivery.ConsecutiveFailures != 0 || got.Delivery.Last.Status != DeliveryDelivered {
		t.Errorf("monitor after delivery: %+v", got.Delivery)
	}
	list, _ := m.Deliveries(ctx, "mon_1", 10)
	if len(list) != 1 || list[0].Status != DeliveryDelivered || list[0].Attempts != 2 || list[0].LastCode != 204 || list[0].LatencyMS != 12 {
		t.Errorf("delivery list: %+v", list)
	}
	if again, _ := m.ClaimDeliveries(ctx, retry.Add(time.Hour), time.Minute, 10); len(again) != 0 {
		t.Errorf("a delivered delivery was claimed: %+v", again)
	}
	if _, err := m.Redeliver(ctx, Monitor{ID: "mon_2"}, "evt_1", retry); !errors.Is(err, ErrNotFound) {
		t.Errorf("redelivering another monitor's delivery: %v, want ErrNotFound", err)
	}
	d, err := m.Redeliver(ctx, got, "evt_1", retry)
	if err != nil || d.Status != DeliveryPending || d.ID != "evt_1" {
		t.Fatalf("redeliver: %+v %v", d, err)
	}
	c = claimOne(t, m, retry)
	if c.Delivery.ID != "evt_1" || string(c.Delivery.Payload) != `{"id":"evt_1"}` {
		t.Errorf("the redelivery changed the event: %+v", c.Delivery)
	}
	if _, err := m.Redeliver(ctx, got, "evt_1", retry); !errors.Is(err, ErrInFlight) {
		t.Errorf("redelivering while claimed: %v, want ErrInFlight", err)
	}
}

func testDisable(t *testing.T, b Backend) {
	ctx := context.Background()
	m := b.Monitors()
	now := time.Now().Truncate(time.Millisecond)
	runOnce(t, m, "mon_gone", now, sampleDelivery("evt_g", "mon_gone", now))
	c := claimOne(t, m, now)
	disabled, err := m.FinishAttempt(ctx, c, Attempt{At: now, Code: 410, Gone: true, RetryAt: now.Add(time.Minute)})
	if err != nil || !disabled {
		t.Fatalf("410: disabled=%v %v", disabled, err)
	}
	got, _ := m.Get(ctx, "mon_gone")
	if !got.Delivery.Disabled || got.Delivery.DisabledReason == "" || !got.NextRun.IsZero() {
		t.Errorf("after 410: %+v next %s", got.Delivery, got.NextRun)
	}
	if runs, _ := m.ClaimRuns(ctx, now.Add(48*time.Hour), time.Minute, 10); len(runs) != 0 {
		t.Errorf("a disabled monitor still runs: %v", runs)
	}
	list, _ := m.Deliveries(ctx, "mon_gone", 10)
	if len(list) != 1 || list[0].Status != DeliveryFailed {
		t.Errorf("the 410 delivery: %+v", list)
	}
	if _, err := m.Redeliver(ctx, got, "evt_g", now); !errors.Is(err, ErrDisabled) {
		t.Errorf("redelivering for a disabled monitor: %v", err)
	}

	// Three scheduled runs in a row whose first attempt fails disable a
	// monitor with MaxFailures 3; the third run's retry is then canceled.
	for i := range 3 {
		at := now.Add(time.Duration(i) * 2 * time.Hour)
		runOnce(t, m, "mon_f", at, sampleDelivery(fmt.Sprintf("evt_f%d", i), "mon_f", at))
		c := claimOne(t, m, at)
		disabled, err := m.FinishAttempt(ctx, c, Attempt{At: at, Error: "timeout", RetryAt: at.Add(5 * time.Hour), MaxFailures: 3})
		if err != nil || disabled != (i == 2) {
			t.Fatalf("run %d: disabled=%v %v", i, disabled, err)
		}
	}
	got, _ = m.Get(ctx, "mon_f")
	if !got.Delivery.Disabled || got.Delivery.ConsecutiveFailures != 3 {
		t.Errorf("after three failed runs: %+v", got.Delivery)
	}
	// The earlier runs' retries are still queued; when they come due they are
	// closed as canceled, never sent.
	pending, _ := m.ClaimDeliveries(ctx, now.Add(24*time.Hour), time.Minute, 10)
	if len(pending) != 2 {
		t.Fatalf("queued retries: %+v", pending)
	}
	for _, c := range pending {
		if c.Cancel == "" {
			t.Errorf("the retry of %s is not canceled: %+v", c.Delivery.ID, c)
		}
		if _, err := m.FinishAttempt(ctx, c, Attempt{At: now, Canceled: c.Cancel}); err != nil {
			t.Fatal(err)
		}
	}
	list, _ = m.Deliveries(ctx, "mon_f", 10)
	for _, d := range list {
		if d.Status != DeliveryCanceled {
			t.Errorf("%s is %s, want canceled", d.ID, d.Status)
		}
	}
}

func testDeleteDropsOutbox(t *testing.T, b Backend) {
	ctx := context.Background()
	m := b.Monitors()
	now := time.Now().Truncate(time.Millisecond)
	runOnce(t, m, "mon_d", now, sampleDelivery("evt_d1", "mon_d", now), sampleDelivery("evt_d2", "mon_d", now))
	if err := m.Delete(ctx, Monitor{ID: "mon_d", Quota: testMonitor("mon_d").Quota}); err != nil {
		t.Fatal(err)
	}
	if c, _ := m.ClaimDeliveries(ctx, now.Add(time.Hour), time.Minute, 10); len(c) != 0 {
		t.Errorf("a deleted monitor's deliveries are still queued: %+v", c)
	}
	if list, _ := m.Deliveries(ctx, "mon_d", 10); len(list) != 0 {
		t.Errorf("a deleted monitor's deliveries are still listed: %+v", list)
	}
}

func testIndexTrim(t *testing.T, b Backend) {
	ctx := context.Background()
	m := b.Monitors()
	now := time.Now().Truncate(time.Millisecond)
	if err := m.Create(ctx, testMonitor("mon_t"), now, 0, 0); err != nil {
		t.Fatal(err)
	}
	for i := range KeptDeliveries + 5 {
		at := now.Add(time.Duration(i) * time.Hour)
		c, _ := m.ClaimRuns(ctx, at, time.Minute, 1)
		if len(c) != 1 {
			t.Fatalf("run %d not due", i)
		}
		d := sampleDelivery(fmt.Sprintf("evt_%03d", i), "mon_t", at)
		if err := completeRun(ctx, m, c[0], RunState{}, at.Add(time.Hour), nil, 0, []Delivery{d}); err != nil {
			t.Fatal(err)
		}
	}
	list, _ := m.Deliveries(ctx, "mon_t", 1000)
	if len(list) != KeptDeliveries || list[0].ID != fmt.Sprintf("evt_%03d", KeptDeliveries+4) || list[len(list)-1].ID != "evt_005" {
		t.Errorf("kept %d deliveries, newest %s, oldest %s", len(list), list[0].ID, list[len(list)-1].ID)
	}
	// The trimmed deliveries (due at now … now+4h) left the queue too.
	if c, _ := m.ClaimDeliveries(ctx, now.Add(5*time.Hour), time.Minute, 1000); len(c) != 1 || c[0].Delivery.ID != "evt_005" {
		t.Errorf("due by now+5h: %d claims, want only evt_005", len(c))
	}
}

// TestEmbeddedRestartReleasesClaims: a process killed while holding a run or
// a delivery leaves its lease in the file; the next process to open the file
// makes that work due at once instead of waiting for the lease.
func TestEmbeddedRestartReleasesClaims(t *testing.T) {
	dir := t.TempDir()
	e, err := OpenEmbedded(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m := e.Monitors()
	now := time.Now().Truncate(time.Millisecond)
	runOnce(t, m, "mon_1", now.Add(-time.Minute), sampleDelivery("evt_1", "mon_1", now))
	if err := m.Create(ctx, testMonitor("mon_2"), now.Add(-time.Second), 0, 0); err != nil {
		t.Fatal(err)
	}
	if c, _ := m.ClaimRuns(ctx, now, time.Hour, 10); len(c) != 1 {
		t.Fatalf("run claim: %v", c)
	}
	if c, _ := m.ClaimDeliveries(ctx, now, time.Hour, 10); len(c) != 1 {
		t.Fatalf("delivery claim: %v", c)
	}
	e.Close() // as good as a crash: nothing was finished
	e, err = OpenEmbedded(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	m = e.Monitors()
	soon := time.Now().Add(time.Second)
	if c, _ := m.ClaimRuns(ctx, soon, time.Minute, 10); len(c) != 1 || c[0].MonitorID != "mon_2" {
		t.Errorf("the dead process's run claim: %+v, want mon_2 due again", c)
	}
	if c, _ := m.ClaimDeliveries(ctx, soon, time.Minute, 10); len(c) != 1 || c[0].Delivery.ID != "evt_1" {
		t.Errorf("the dead process's delivery claim: %+v, want evt_1 due again", c)
	}
}

// A run's deliveries written claimed by the run's origin (CompleteRun with
// claimFor) are sent by it with the claim it got back: nobody else claims
// them within the claim, and after it they are due again with their own
// due time, like any claim that ran out.
func testPreclaimed(t *testing.T, b Backend) {
	ctx := context.Background()
	m := b.Monitors()
	now := time.Now().Truncate(time.Millisecond)
	if err := m.Create(ctx, testMonitor("mon_p"), now, 0, 0); err != nil {
		t.Fatal(err)
	}
	runs, _ := m.ClaimRuns(ctx, now, time.Minute, 10)
	if len(runs) != 1 {
		t.Fatalf("run claim: %v", runs)
	}
	claims, err := m.CompleteRun(ctx, runs[0], RunState{Runs: 1}, now.Add(time.Hour), nil, 0,
		[]Delivery{sampleDelivery("evt_p1", "mon_p", now), sampleDelivery("evt_p2", "mon_p", now)}, 30*time.Second)
	if err != nil || len(claims) != 2 || claims[0].Token == "" || claims[0].Monitor.Secret != "whsec_x" || claims[1].Delivery.ID != "evt_p2" {
		t.Fatalf("claims written with the run: %+v %v", claims, err)
	}
	if got, _ := m.ClaimDeliveries(ctx, now.Add(29*time.Second), time.Minute, 10); len(got) != 0 {
		t.Errorf("claimed by another within the run's claim: %+v", got)
	}
	if _, err := m.FinishAttempt(ctx, claims[0], Attempt{At: now, Code: 204, Delivered: true}); err != nil {
		t.Fatalf("finishing with the claim CompleteRun returned: %v", err)
	}
	// The second was never sent (its origin died): due again when its claim ends.
	late, _ := m.ClaimDeliveries(ctx, now.Add(31*time.Second), time.Minute, 10)
	if len(late) != 1 || late[0].Delivery.ID != "evt_p2" {
		t.Fatalf("after the claim ran out: %+v", late)
	}
	if _, err := m.FinishAttempt(ctx, claims[1], Attempt{At: now, Code: 204, Delivered: true}); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("the run's claim, run out and taken over, still finished the delivery: %v", err)
	}
	if list, _ := m.Deliveries(ctx, "mon_p", 10); len(list) != 2 || list[0].Report != "" {
		t.Errorf("deliveries: %+v", list)
	}
}

// A report stays while it is the monitor's latest and while an event that
// links to it may still be sent; once both are over it goes ReportGrace
// after the last attempt. The runs here happened hours ago, so "goes" is
// at once.
func testReportRetention(t *testing.T, b Backend) {
	ctx := context.Background()
	m := b.Monitors()
	base := time.Now().Add(-4 * time.Hour).Truncate(time.Millisecond)
	if err := m.Create(ctx, testMonitor("mon_r"), base, 0, 0); err != nil {
		t.Fatal(err)
	}
	run := func(i int, at time.Time) {
		t.Helper()
		c, _ := m.ClaimRuns(ctx, at, time.Minute, 1)
		if len(c) != 1 {
			t.Fatalf("run %d not due at %s", i, at)
		}
		d := sampleDelivery(fmt.Sprintf("evt_r%d", i), "mon_r", at)
		st := RunState{Runs: int64(i), LastRun: at, ReportID: fmt.Sprintf("rep_r%d", i)}
		if err := completeRun(ctx, m, c[0], st, at.Add(10*time.Minute), []byte(fmt.Sprintf("report %d", i)), 29*time.Hour, []Delivery{d}); err != nil {
			t.Fatal(err)
		}
	}
	kept := func(i int) bool {
		_, err := m.Report(ctx, "mon_r", fmt.Sprintf("rep_r%d", i))
		if err != nil && !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	finish := func(at time.Time, a Attempt) {
		t.Helper()
		c := claimOne(t, m, at)
		a.At = at
		if _, err := m.FinishAttempt(ctx, c, a); err != nil {
			t.Fatal(err)
		}
	}
	run(1, base)
	finish(base, Attempt{Code: 204, Delivered: true})
	if !kept(1) {
		t.Fatal("the latest report is gone")
	}
	// Superseded, its event delivered hours ago: gone.
	run(2, base.Add(10*time.Minute))
	if kept(1) || !kept(2) {
		t.Errorf("after a newer report: report 1 kept %v (want gone), report 2 kept %v", kept(1), kept(2))
	}
	// Report 2's event still retrying (due in an hour from now): report 2
	// stays past its replacement, until ReportGrace after that retry.
	finish(base.Add(10*time.Minute), Attempt{Code: 500, RetryAt: time.Now().Add(time.Hour)})
	run(3, base.Add(20*time.Minute))
	if !kept(2) {
		t.Fatal("a superseded report went while its event was still to be retried")
	}
	finish(base.Add(20*time.Minute), Attempt{Code: 204, Delivered: true})  // run 3's event
	finish(time.Now().Add(time.Hour), Attempt{Code: 204, Delivered: true}) // the retry, at its time
	if !kept(2) {
		t.Error("a report went before ReportGrace after its event's last attempt")
	}
	// Once its retried event is delivered (here, long ago), it goes.
	run(4, base.Add(30*time.Minute))
	finish(base.Add(30*time.Minute), Attempt{Code: 500, RetryAt: base.Add(40 * time.Minute)})
	run(5, base.Add(40*time.Minute))
	if !kept(4) {
		t.Fatal("a superseded report went while its event was still to be retried (the retry is overdue)")
	}
	// Run 5's event and run 4's retry, both due.
	both, _ := m.ClaimDeliveries(ctx, base.Add(41*time.Minute), time.Minute, 10)
	if len(both) != 2 {
		t.Fatalf("due at +41m: %d deliveries, want run 5's event and run 4's retry", len(both))
	}
	for _, c := range both {
		if _, err := m.FinishAttempt(ctx, c, Attempt{At: base.Add(41 * time.Minute), Code: 204, Delivered: true}); err != nil {
			t.Fatal(err)
		}
	}
	if kept(4) {
		t.Error("a superseded report stayed hours after its event was delivered")
	}
	// Redelivering an event whose report is still kept keeps it for
	// ReportGrace after the redelivery.
	if _, err := m.Redeliver(ctx, mustGet(t, m, "mon_r"), "evt_r2", time.Now()); err != nil {
		t.Fatal(err)
	}
	if !kept(2) || !kept(5) {
		t.Errorf("after a redelivery: report 2 kept %v, the latest kept %v", kept(2), kept(5))
	}
}

func mustGet(t *testing.T, m Monitors, id string) Monitor {
	t.Helper()
	got, err := m.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// A quota entry left without its monitor (a Create or a Delete that died
// between its writes, possible where quotas are keys of their own) frees
// its place once it is older than a Create takes: the next Create that
// finds the quota full removes it.
func testQuotaRepair(t *testing.T, b Backend) {
	ctx := context.Background()
	s := b.Monitors().(monitors)
	now := time.Now().Truncate(time.Second)
	q := keyQuota + testMonitor("x").Quota
	// Two places taken: one by a real monitor, one by a leftover, and a
	// Create under way right now (a fresh entry: it stays).
	if err := s.Create(ctx, testMonitor("mon_real"), now, 3, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.t.commit(ctx, nil, []op{
		{kind: opZAdd, key: q, member: "mon_leftover", score: ms(now.Add(-time.Hour))},
		{kind: opZAdd, key: q, member: "mon_underway", score: ms(now)},
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, testMonitor("mon_new"), now, 3, 0); err != nil {
		t.Fatalf("a leftover entry still counts against the quota: %v", err)
	}
	res, _ := s.t.view(ctx, zrangeOf(q, false, 10))
	sort.Strings(res[0].members)
	if got := strings.Join(res[0].members, " "); got != "mon_new mon_real mon_underway" {
		t.Errorf("quota entries: %s, want the real, the under-way and the new one", got)
	}
	if err := s.Create(ctx, testMonitor("mon_over"), now, 3, 0); !errors.Is(err, ErrQuota) {
		t.Errorf("a fourth monitor of a quota of 3: %v", err)
	}
}
