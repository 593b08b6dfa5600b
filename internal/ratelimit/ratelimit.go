// Package ratelimit decides daily allowances with GCRA. Two limiters share one
// interface and one conformance test: redis_rate over Redis (several processes
// share counts) and an in-process GCRA with redis_rate's semantics (the
// embedded default: no Redis, about 10× faster than running that script in
// miniredis). The origin and the wasm host both use it.
package ratelimit

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Limit is Rate events per Period with bursts of up to Burst.
type Limit struct {
	Rate   int
	Burst  int
	Period time.Duration
}

// PerDay is n events a day, all usable at once.
func PerDay(n int) Limit { return Limit{Rate: n, Burst: n, Period: 24 * time.Hour} }

// check refuses limits GCRA has no answer for: redis_rate's script would
// divide by zero and reply with NaN arithmetic, which reads as "allowed".
func (l Limit) check(n int) error {
	if l.Rate <= 0 || l.Period <= 0 || l.Burst < 0 || n < 0 {
		return fmt.Errorf("ratelimit: invalid limit (rate %d, burst %d, period %s, cost %d): rate and period must be positive, burst and cost not negative", l.Rate, l.Burst, l.Period, n)
	}
	return nil
}

// Result is one decision.
type Result struct {
	Limit      Limit
	Allowed    int           // events allowed now (0 = denied)
	Remaining  int           // events left
	RetryAfter time.Duration // when a denied request may succeed (-1 when allowed)
	ResetAfter time.Duration // when the allowance is whole again
}

// Limiter decides whether n events fit the limit for key.
type Limiter interface {
	AllowN(ctx context.Context, key string, limit Limit, n int) (*Result, error)
	Reset(ctx context.Context, key string) error
}

// Redis is redis_rate over a shared Redis.
type Redis struct {
	l      *redis_rate.Limiter
	prefix string
}

// scripter is what redis_rate needs of a client; tests wrap a real client
// in it to run the script with a clock they control.
type scripter interface {
	redis.Scripter
	Del(ctx context.Context, keys ...string) *redis.IntCmd
}

// NewRedis uses c, one Redis or a Redis Cluster; keys are namespaced by
// redis_rate ("rate:" + key). Each decision is one script over one key, so
// on a Cluster it runs on the node that holds that key's slot.
func NewRedis(c redis.UniversalClient) *Redis { return newRedis(c) }

func newRedis(c scripter) *Redis { return &Redis{l: redis_rate.NewLimiter(c)} }

// WithPrefix isolates a set of keys (tests).
func (r *Redis) WithPrefix(p string) *Redis { return &Redis{l: r.l, prefix: p} }

func (r *Redis) AllowN(ctx context.Context, key string, limit Limit, n int) (*Result, error) {
	if err := limit.check(n); err != nil {
		return nil, err
	}
	res, err := r.l.AllowN(ctx, r.prefix+key, redis_rate.Limit{Rate: limit.Rate, Burst: limit.Burst, Period: limit.Period}, n)
	if err != nil {
		return nil, err
	}
	return &Result{Limit: limit, Allowed: res.Allowed, Remaining: res.Remaining, RetryAfter: res.RetryAfter, ResetAfter: res.ResetAfter}, nil
}

func (r *Redis) Reset(ctx context.Context, key string) error { return r.l.Reset(ctx, r.prefix+key) }

// Local is the in-process GCRA. It follows redis_rate's script step for step,
// but in integer nanoseconds: the script's float seconds (about 2.9e8 since
// its 2017 epoch, so a unit in the last place is ~60 ns) turn a burst spent at
// one instant into "now - allow_at = -6e-8" and deny a request the limit
// admits. In integers the k-th event at one instant leaves exactly
// (burst-k)·emission, so a burst of b admits b events at once, always.
type Local struct {
	mu      sync.Mutex
	tat     map[string]int64 // theoretical arrival time, ns since base; absent = now
	clock   func() time.Time
	base    time.Time
	calls   int // decisions since the last sweep of spent keys
	sweepAt int
}

// NewLocal builds an empty in-process limiter on the real clock.
func NewLocal() *Local { return NewLocalClock(time.Now) }

// NewLocalClock builds an empty in-process limiter reading now from clock
// (tests drive it with a fake one). Times are differences from the first
// reading, so with time.Now they use the monotonic clock and a wall-clock
// step (NTP, a VM resuming) neither refunds nor spends an allowance.
func NewLocalClock(clock func() time.Time) *Local {
	return &Local{tat: map[string]int64{}, clock: clock, base: clock()}
}

// maxSpan caps emission×count so that tat + increment stays far from int64
// overflow; 2^60 ns is 36 years, beyond any allowance window.
const maxSpan = int64(1) << 60

func span(emission int64, count int) int64 {
	if count == 0 {
		return 0
	}
	if emission > maxSpan/int64(count) {
		return maxSpan
	}
	return emission * int64(count)
}

// AllowN follows redis_rate's allowN script.
func (l *Local) AllowN(_ context.Context, key string, limit Limit, n int) (*Result, error) {
	if err := limit.check(n); err != nil {
		return nil, err
	}
	// Rounded to the nanosecond: for a rate that does not divide the period
	// the error is under 1 ns per event, against the microsecond clock of Redis.
	emission := max((int64(limit.Period)+int64(limit.Rate)/2)/int64(limit.Rate), 1)
	increment := span(emission, n)
	burstOffset := span(emission, limit.Burst)

	l.mu.Lock()
	defer l.mu.Unlock()
	now := int64(l.clock().Sub(l.base))
	tat, ok := l.tat[key]
	if !ok || tat < now {
		tat = now
	}
	newTat := tat + increment
	diff := now - (newTat - burstOffset)
	if diff < 0 {
		return &Result{Limit: limit, Allowed: 0, Remaining: 0, RetryAfter: time.Duration(-diff), ResetAfter: time.Duration(tat - now)}, nil
	}
	reset := newTat - now
	if reset > 0 {
		l.tat[key] = newTat
	} else {
		delete(l.tat, key) // tat ≤ now reads the same as no entry
	}
	l.sweep(now)
	// Integer division truncates as Redis does when it turns the script's
	// number into an integer reply.
	return &Result{Limit: limit, Allowed: n, Remaining: int(diff / emission), RetryAfter: -1, ResetAfter: time.Duration(reset)}, nil
}

// sweep drops keys whose allowance is whole again (Redis lets them expire).
// The next sweep waits for twice as many decisions as keys it kept, so its
// cost per decision stays constant however many keys there are.
func (l *Local) sweep(now int64) {
	l.calls++
	if l.calls < l.sweepAt {
		return
	}
	for k, tat := range l.tat {
		if tat <= now {
			delete(l.tat, k)
		}
	}
	l.calls, l.sweepAt = 0, max(2*len(l.tat), 4096)
}

func (l *Local) Reset(_ context.Context, key string) error {
	l.mu.Lock()
	delete(l.tat, key)
	l.mu.Unlock()
	return nil
}
