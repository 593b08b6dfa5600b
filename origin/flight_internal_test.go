package origin

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/testenv"
)

// fakeRun is a scan the test drives by hand: it publishes what the test
// sends on events and ends with what it sends on end.
type fakeRun struct {
	started chan context.Context // the run's context, once it runs
	events  chan engine.Event
	end     chan error
	runs    int
	mu      sync.Mutex
}

func newFakeRun() *fakeRun {
	return &fakeRun{started: make(chan context.Context, 8), events: make(chan engine.Event), end: make(chan error)}
}

func (f *fakeRun) run(ctx context.Context, publish func(engine.Event)) (*scanned, error) {
	f.mu.Lock()
	f.runs++
	f.mu.Unlock()
	f.started <- ctx
	for {
		select {
		case e := <-f.events:
			publish(e)
		case err := <-f.end:
			if err != nil {
				return nil, err
			}
			return &scanned{raw: []byte(`{}`)}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (f *fakeRun) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.runs
}

func checkEvent(id string) engine.Event {
	return engine.Event{Kind: engine.EventCheckFinished, Check: report.Check{ID: id}}
}

// recorder collects the events one caller saw.
type recorder struct {
	mu  sync.Mutex
	ids []string
}

func (r *recorder) on(e engine.Event) {
	r.mu.Lock()
	r.ids = append(r.ids, e.Check.ID)
	r.mu.Unlock()
}

func (r *recorder) seen() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fmt.Sprint(r.ids)
}

type flightOutcome struct {
	res *scanned
	err error
}

// A caller that joins a running scan sees every event from the first, in
// order, then the live ones, and the same outcome as the caller that started it.
func TestFlightLateJoinerGetsEveryEvent(t *testing.T) {
	var f flights
	fr := newFakeRun()
	var first, late recorder
	out := make(chan flightOutcome, 2)
	go func() {
		res, err := f.do(context.Background(), context.Background(), "u", fr.run, first.on)
		out <- flightOutcome{res, err}
	}()
	<-fr.started
	fr.events <- checkEvent("a")
	fr.events <- checkEvent("b")
	testenv.Eventually(t, 5*time.Second, "the first caller to see a and b", func() bool { return first.seen() == "[a b]" })
	go func() {
		res, err := f.do(context.Background(), context.Background(), "u", fr.run, late.on)
		out <- flightOutcome{res, err}
	}()
	testenv.Eventually(t, 5*time.Second, "the second caller to join", func() bool { return f.waiting("u") == 2 })
	fr.events <- checkEvent("c")
	fr.end <- nil
	a, b := <-out, <-out
	if a.err != nil || b.err != nil || a.res != b.res {
		t.Fatalf("outcomes differ: %+v %+v", a, b)
	}
	if first.seen() != "[a b c]" {
		t.Errorf("the first caller saw %s, want [a b c]", first.seen())
	}
	if late.seen() != "[a b c]" {
		t.Errorf("the late caller saw %s, want the whole sequence [a b c]", late.seen())
	}
	if fr.count() != 1 {
		t.Errorf("%d runs for two callers of one key, want 1", fr.count())
	}
	if f.waiting("u") != 0 {
		t.Errorf("the finished flight still has %d waiters", f.waiting("u"))
	}
}

// A caller that leaves does not cancel the scan while another waits; the last
// one to leave cancels it, and the next caller starts a new scan instead of
// inheriting the cancellation.
func TestFlightCancelOnlyWhenLastLeaves(t *testing.T) {
	var f flights
	fr := newFakeRun()
	leaver, cancelLeaver := context.WithCancel(context.Background())
	stayer, cancelStayer := context.WithCancel(context.Background())
	defer cancelStayer()
	out := make(chan flightOutcome, 1)
	left := make(chan error, 1)
	go func() {
		_, err := f.do(leaver, context.Background(), "u", fr.run, nil)
		left <- err
	}()
	runCtx := <-fr.started
	go func() {
		res, err := f.do(stayer, context.Background(), "u", fr.run, nil)
		out <- flightOutcome{res, err}
	}()
	testenv.Eventually(t, 5*time.Second, "two waiters", func() bool { return f.waiting("u") == 2 })
	cancelLeaver()
	if err := <-left; !errors.Is(err, context.Canceled) {
		t.Fatalf("the leaving caller got %v, want context.Canceled", err)
	}
	if runCtx.Err() != nil {
		t.Fatal("the scan was canceled although a caller still waits for it")
	}
	if f.waiting("u") != 1 {
		t.Fatalf("%d waiters after one left, want 1", f.waiting("u"))
	}
	cancelStayer()
	if o := <-out; !errors.Is(o.err, context.Canceled) {
		t.Fatalf("the last caller got %v, want context.Canceled", o.err)
	}
	testenv.Eventually(t, 5*time.Second, "the scan to be canceled once nobody waits", func() bool { return runCtx.Err() != nil })
	// A new caller must get a new scan, not the dying one.
	go func() {
		res, err := f.do(context.Background(), context.Background(), "u", fr.run, nil)
		out <- flightOutcome{res, err}
	}()
	second := <-fr.started
	if second.Err() != nil {
		t.Fatal("the new scan started canceled")
	}
	fr.end <- nil
	if o := <-out; o.err != nil || o.res == nil {
		t.Errorf("the caller after the cancellation got %+v, want the new scan's result", o)
	}
	if fr.count() != 2 {
		t.Errorf("%d runs, want 2 (the canceled one and the new one)", fr.count())
	}
}

// A failed scan's error reaches every caller waiting for it, followers of
// events and plain waiters alike.
func TestFlightErrorReachesEveryWaiter(t *testing.T) {
	var f flights
	fr := newFakeRun()
	boom := errors.New("site unreachable")
	out := make(chan flightOutcome, 4)
	var rec recorder
	for i := range 4 {
		on := rec.on
		if i%2 == 1 {
			on = nil
		}
		go func() {
			res, err := f.do(context.Background(), context.Background(), "u", fr.run, on)
			out <- flightOutcome{res, err}
		}()
		if i == 0 {
			<-fr.started
		}
	}
	testenv.Eventually(t, 5*time.Second, "four waiters", func() bool { return f.waiting("u") == 4 })
	fr.end <- boom
	for range 4 {
		if o := <-out; !errors.Is(o.err, boom) || o.res != nil {
			t.Errorf("a waiter got %+v, want the scan's error", o)
		}
	}
	if fr.count() != 1 {
		t.Errorf("%d runs, want 1", fr.count())
	}
}

// Shutdown waits for flights: the WaitGroup counts a flight from the moment
// it is created until its goroutine (and the writes it makes) ends.
func TestFlightCountedUntilItEnds(t *testing.T) {
	var wg sync.WaitGroup
	f := flights{running: &wg}
	fr := newFakeRun()
	go f.do(context.Background(), context.Background(), "u", fr.run, nil)
	<-fr.started
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
		t.Fatal("Wait returned while a flight runs")
	case <-time.After(20 * time.Millisecond):
	}
	fr.end <- nil
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not return after the flight ended")
	}
}
