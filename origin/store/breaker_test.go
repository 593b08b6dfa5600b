package store

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/testing/redistest"
)

func TestBreakerStates(t *testing.T) {
	now := time.Unix(1000, 0)
	b := newBreaker(3, 2*time.Second)
	b.now = func() time.Time { return now }
	for i := 0; i < 2; i++ {
		probe, err := b.allow()
		if err != nil || probe {
			t.Fatalf("closed breaker refused call %d: %v", i, err)
		}
		b.done(false, true)
	}
	if _, err := b.allow(); err != nil {
		t.Fatal("two failures of three opened the breaker")
	}
	b.done(false, true)
	_, err := b.allow()
	if err == nil || err.RetryAfter != 2*time.Second || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("after three failures: %v", err)
	}
	now = now.Add(1500 * time.Millisecond)
	if _, err := b.allow(); err == nil || err.RetryAfter != 500*time.Millisecond {
		t.Fatalf("during the cool-down: %v", err)
	}
	now = now.Add(time.Second)
	probe, err := b.allow()
	if err != nil || !probe {
		t.Fatalf("after the cool-down a probe goes through: %v %v", probe, err)
	}
	if _, err := b.allow(); err == nil {
		t.Fatal("a second call went through while the probe runs")
	}
	b.done(true, true) // the probe failed: open again for a full cool-down
	if _, err := b.allow(); err == nil || err.RetryAfter != 2*time.Second {
		t.Fatalf("after a failed probe: %v", err)
	}
	now = now.Add(2 * time.Second)
	probe, _ = b.allow()
	b.abandon(probe) // the caller gave up: says nothing, the next call probes
	if probe, err = b.allow(); err != nil || !probe {
		t.Fatalf("after an abandoned probe: %v %v", probe, err)
	}
	b.done(true, false)
	for i := 0; i < 5; i++ {
		if probe, err := b.allow(); err != nil || probe {
			t.Fatalf("after a successful probe the breaker is closed: %v %v", probe, err)
		}
		b.done(false, false)
	}
}

// A frozen Redis (SIGSTOP: connections accepted, nothing answered) costs a
// call at most the call timeout, then the breaker fails calls at once; after
// it thaws, the first probe closes the breaker again.
//
// The bounds are relations, not budgets: a call returns before a second call
// timeout could pass, and the open breaker refuses a call itself (its cause
// says so) rather than after asking Redis. The breaker's clock stands still
// while Redis is frozen, so however slowly a loaded machine runs this test,
// the cool-down cannot end (and a probe reach the frozen Redis) before the
// thaw; the thaw moves the clock past the cool-down.
func TestFrozenRedisFailsFast(t *testing.T) {
	srv := redistest.Start(t)
	opts := RedisOptions{CallTimeout: time.Second, Failures: 3, CoolDown: 500 * time.Millisecond}
	r, err := OpenRedisWith(context.Background(), srv.URL, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var stopped atomic.Pointer[time.Time]
	r.br.now = func() time.Time {
		if at := stopped.Load(); at != nil {
			return *at
		}
		return time.Now().Add(opts.CoolDown) // after the thaw: past any cool-down begun while frozen
	}
	ctx := context.Background()
	cache := r.ScanCache()
	if err := cache.Put(ctx, "https://a.example/", []byte("{}"), time.Now(), time.Hour); err != nil {
		t.Fatal(err)
	}
	frozenAt := time.Now()
	stopped.Store(&frozenAt)
	if err := srv.Freeze(); err != nil {
		t.Fatal(err)
	}
	thawed := false
	defer func() {
		if !thawed {
			srv.Thaw()
		}
	}()
	// Concurrent callers while it is frozen: none waits a second call
	// timeout (no retry or queue behind another call gets one of its own),
	// and every one is told the store is unavailable.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var slowest time.Duration
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			_, _, err := cache.Get(ctx, "https://a.example/")
			took := time.Since(start)
			var ue *UnavailableError
			if !errors.As(err, &ue) || ue.RetryAfter <= 0 {
				t.Errorf("Get on a frozen Redis: %v", err)
			} else if strings.Contains(err.Error(), "127.0.0.1") {
				t.Errorf("the error names an address: %v", err)
			}
			mu.Lock()
			slowest = max(slowest, took)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if slowest >= 2*opts.CallTimeout {
		t.Errorf("slowest call on a frozen Redis took %s, two call timeouts (%s each)", slowest, opts.CallTimeout)
	}
	// The breaker is open now: it refuses calls itself, without asking Redis.
	start := time.Now()
	err = r.Ping(ctx)
	took := time.Since(start)
	var ue *UnavailableError
	if !errors.As(err, &ue) || !strings.HasPrefix(ue.Cause, "circuit open") || ue.RetryAfter <= 0 {
		t.Errorf("with the breaker open Ping answered %v, want the breaker's refusal", err)
	} else if took >= opts.CallTimeout {
		t.Errorf("with the breaker open Ping took %s, a call timeout", took)
	}
	if err := srv.Thaw(); err != nil {
		t.Fatal(err)
	}
	thawed = true
	stopped.Store(nil)
	deadline := time.Now().Add(30 * time.Second) // a safety net: the first probe closes the breaker
	for {
		raw, _, err := cache.Get(ctx, "https://a.example/")
		if err == nil && string(raw) == "{}" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store did not recover within 30 s of the thaw: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// BenchmarkOpenBreakerRefuses is what a call costs while the breaker is open
// on a frozen Redis, the budget TestFrozenRedisFailsFast no longer times:
//
//	go test ./origin/store -run '^$' -bench OpenBreaker -benchtime 100000x -count 3
func BenchmarkOpenBreakerRefuses(b *testing.B) {
	srv := redistest.Start(b)
	opts := RedisOptions{CallTimeout: 300 * time.Millisecond, Failures: 3, CoolDown: time.Hour}
	r, err := OpenRedisWith(context.Background(), srv.URL, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	if err := srv.Freeze(); err != nil {
		b.Fatal(err)
	}
	defer srv.Thaw()
	ctx := context.Background()
	for range opts.Failures {
		r.Ping(ctx) // each waits the call timeout; the last opens the breaker
	}
	b.ResetTimer()
	for range b.N {
		var ue *UnavailableError
		if err := r.Ping(ctx); !errors.As(err, &ue) || !strings.HasPrefix(ue.Cause, "circuit open") {
			b.Fatalf("with the breaker open: %v", err)
		}
	}
}
