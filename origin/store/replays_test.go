package store

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

// A key is first once within its ttl, on every backend; another key is
// first too.
func TestReplays(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			r := open(t).Replays()
			ctx := context.Background()
			for i, c := range []struct {
				key   string
				first bool
			}{{"n1", true}, {"n1", false}, {"n2", true}, {"n1", false}} {
				got, err := r.First(ctx, c.key, time.Minute)
				if err != nil || got != c.first {
					t.Errorf("step %d, %s: first=%v %v, want %v", i, c.key, got, err, c.first)
				}
			}
		})
	}
}

// The in-memory set forgets a key once its generations have passed, and
// holds no more than about three ttl's worth of keys.
func TestMemReplaysForget(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	r := newMemReplays(func() time.Time { return now })
	ctx := context.Background()
	first := func(k string) bool { ok, _ := r.First(ctx, k, time.Minute); return ok }
	if !first("a") || first("a") {
		t.Fatal("a key is not first exactly once")
	}
	now = now.Add(90 * time.Second) // within two generations: still seen
	if first("a") {
		t.Error("a key was forgotten within its ttl")
	}
	now = now.Add(4 * time.Minute)
	if !first("a") {
		t.Error("a key was kept past three generations")
	}
	for i := range 3 {
		now = now.Add(time.Minute)
		first(string(rune('b' + i)))
	}
	n := 0
	for _, g := range r.gens {
		n += len(g)
	}
	if n > 3 {
		t.Errorf("%d keys kept after three minutes of one key a minute", n)
	}
}

// BenchmarkReplays: what the origin's check of a signature's nonce costs
// per forwarded request, on each backend (REDIS_URL for Redis).
func BenchmarkReplays(b *testing.B) {
	open := map[string]func() Replays{"embedded": func() Replays { return newMemReplays(time.Now) }}
	if u := os.Getenv("REDIS_URL"); u != "" {
		open["redis"] = func() Replays {
			r, err := OpenRedis(context.Background(), u)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { r.Close() })
			return r.WithPrefix(fmt.Sprintf("agentready-bench:%d:", time.Now().UnixNano())).Replays()
		}
	}
	for name, o := range open {
		b.Run(name, func(b *testing.B) {
			r := o()
			ctx := context.Background()
			b.ReportAllocs()
			for i := range b.N {
				if ok, err := r.First(ctx, strconv.Itoa(i), 2*time.Minute); !ok || err != nil {
					b.Fatal(ok, err)
				}
			}
		})
	}
}
