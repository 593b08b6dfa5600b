package wasm

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

func testPool(warm, max int) (*pool, *atomic.Int64, *atomic.Int64) {
	var made, closed atomic.Int64
	p := &pool{warm: warm, max: max,
		fresh:   func(context.Context) (*instance, error) { made.Add(1); return &instance{}, nil },
		discard: func(*instance) { closed.Add(1) }}
	return p, &made, &closed
}

// The pool grows to max while lent instances wait in host calls, no
// further; past max a request waits, and gets the next instance returned.
func TestPoolGrowsToMaxThenWaits(t *testing.T) {
	p, made, _ := testPool(2, 5)
	ctx := context.Background()
	var lent []*instance
	for i := 0; i < 5; i++ {
		inst, err := p.get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p.block()
		lent = append(lent, inst)
	}
	if made.Load() != 5 {
		t.Fatalf("made %d instances for 5 requests", made.Load())
	}
	got := make(chan *instance)
	go func() {
		inst, _ := p.get(ctx)
		got <- inst
	}()
	select {
	case <-got:
		t.Fatal("a sixth request got an instance past max")
	case <-time.After(50 * time.Millisecond):
	}
	p.unblock()
	p.put(lent[0])
	select {
	case inst := <-got:
		if inst != lent[0] {
			t.Error("the waiter did not get the returned instance")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter was not handed the returned instance")
	}
	if made.Load() != 5 {
		t.Errorf("made %d instances, want 5", made.Load())
	}
}

// After a burst the pool closes what it grew beyond warm.
func TestPoolShrinksToWarm(t *testing.T) {
	p, _, closed := testPool(2, 8)
	var lent []*instance
	for i := 0; i < 8; i++ {
		inst, _ := p.get(context.Background())
		p.block()
		lent = append(lent, inst)
	}
	for _, inst := range lent {
		p.unblock()
		p.put(inst)
	}
	if idle, live := p.sizes(); idle != 2 || live != 2 || closed.Load() != 6 {
		t.Errorf("after the burst: %d idle, %d live, %d closed; want 2, 2, 6", idle, live, closed.Load())
	}
}

// A waiter whose context ends leaves no slot behind; a trapped instance's
// slot goes to a waiter, which makes a fresh instance.
func TestPoolWaitersAndTraps(t *testing.T) {
	p, made, _ := testPool(1, 1)
	inst, _ := p.get(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := p.get(ctx); err == nil {
		t.Fatal("a request past max got an instance without one coming back")
	}
	if _, live := p.sizes(); live != 1 || len(p.waiters) != 0 {
		t.Fatalf("a canceled waiter left %d live, %d waiters", live, len(p.waiters))
	}
	got := make(chan *instance)
	go func() {
		inst, _ := p.get(context.Background())
		got <- inst
	}()
	for deadline := time.Now().Add(5 * time.Second); ; {
		p.mu.Lock()
		n := len(p.waiters)
		p.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second request never waited")
		}
		time.Sleep(time.Millisecond)
	}
	p.release() // inst trapped
	select {
	case fresh := <-got:
		if fresh == nil || fresh == inst || made.Load() != 2 {
			t.Errorf("the waiter got %p (trapped %p), %d made", fresh, inst, made.Load())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter was not given the trapped instance's slot")
	}
	if _, live := p.sizes(); live != 1 {
		t.Errorf("live %d after a trap and its replacement, want 1", live)
	}
}
