// Package ratelimit decides daily allowances with GCRA. Two limiters share one
// interface and one conformance test: redis_rate over Redis (several processes
// share counts) and an in-process GCRA with the same arithmetic as redis_rate's
// Lua script (the embedded default: no Redis, about 10× faster than running
// that script in miniredis). The origin and the wasm host both use it.
package ratelimit

import (
	"context"
	"math"
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
	c      *redis.Client
	prefix string
}

// NewRedis uses c; keys are namespaced by redis_rate ("rate:" + key).
func NewRedis(c *redis.Client) *Redis { return &Redis{l: redis_rate.NewLimiter(c), c: c} }

// WithPrefix isolates a set of keys (tests).
func (r *Redis) WithPrefix(p string) *Redis { return &Redis{l: r.l, c: r.c, prefix: p} }

func (r *Redis) AllowN(ctx context.Context, key string, limit Limit, n int) (*Result, error) {
	res, err := r.l.AllowN(ctx, r.prefix+key, redis_rate.Limit{Rate: limit.Rate, Burst: limit.Burst, Period: limit.Period}, n)
	if err != nil {
		return nil, err
	}
	return &Result{Limit: limit, Allowed: res.Allowed, Remaining: res.Remaining, RetryAfter: res.RetryAfter, ResetAfter: res.ResetAfter}, nil
}

func (r *Redis) Reset(ctx context.Context, key string) error { return r.l.Reset(ctx, r.prefix+key) }

// Local is the in-process GCRA.
type Local struct {
	mu    sync.Mutex
	tat   map[string]localEntry
	now   func() time.Time
	calls int
}

type localEntry struct {
	tat     float64 // theoretical arrival time, seconds since 2017-01-01 (as redis_rate)
	expires time.Time
}

// NewLocal builds an empty in-process limiter.
func NewLocal() *Local { return &Local{tat: map[string]localEntry{}, now: time.Now} }

const jan2017 = 1483228800

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

// AllowN follows redis_rate's allowN script step for step.
func (l *Local) AllowN(_ context.Context, key string, limit Limit, n int) (*Result, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.now()
	now := float64(t.Unix()-jan2017) + float64(t.Nanosecond()/1000)/1e6
	emission := limit.Period.Seconds() / float64(limit.Rate)
	increment := emission * float64(n)
	burstOffset := emission * float64(limit.Burst)
	tat := now
	if e, ok := l.tat[key]; ok && t.Before(e.expires) {
		tat = e.tat
	}
	tat = math.Max(tat, now)
	newTat := tat + increment
	diff := now - (newTat - burstOffset)
	remaining := diff / emission
	if remaining < 0 {
		return &Result{Limit: limit, Allowed: 0, Remaining: 0, RetryAfter: seconds(-diff), ResetAfter: seconds(tat - now)}, nil
	}
	reset := newTat - now
	if reset > 0 {
		l.tat[key] = localEntry{tat: newTat, expires: t.Add(time.Duration(math.Ceil(reset)) * time.Second)}
	}
	l.calls++
	if l.calls%4096 == 0 {
		for k, e := range l.tat {
			if !t.Before(e.expires) {
				delete(l.tat, k)
			}
		}
	}
	// Redis turns the script's Lua number into an integer reply by truncation.
	return &Result{Limit: limit, Allowed: n, Remaining: int(remaining), RetryAfter: -1, ResetAfter: seconds(reset)}, nil
}

func (l *Local) Reset(_ context.Context, key string) error {
	l.mu.Lock()
	delete(l.tat, key)
	l.mu.Unlock()
	return nil
}
