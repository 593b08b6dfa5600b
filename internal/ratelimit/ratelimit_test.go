package ratelimit

import (
	"context"
	"fmt"
	"github.com/agentready/agentready/internal/testenv"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func limiters(t *testing.T) map[string]Limiter {
	m := map[string]Limiter{"local": NewLocal()}
	u := os.Getenv("REDIS_URL")
	if !testenv.Optional(t, u != "", "REDIS_URL: the redis_rate limiter") {
		return m
	}
	opt, err := redis.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	m["redis"] = NewRedis(c).WithPrefix(fmt.Sprintf("rltest:%d:", time.Now().UnixNano()))
	return m
}

func near(a, b, tol time.Duration) bool { d := a - b; return d < tol && d > -tol }

// The same calls get the same answers from both limiters (redis_rate's documented behaviour).
func TestConformance(t *testing.T) {
	ctx := context.Background()
	for name, l := range limiters(t) {
		t.Run(name, func(t *testing.T) {
			day := PerDay(3)
			for i, want := range []int{2, 1, 0} {
				r, err := l.AllowN(ctx, "daily", day, 1)
				if err != nil || r.Allowed != 1 || r.Remaining != want || r.RetryAfter != -1 {
					t.Fatalf("call %d: %+v %v", i+1, r, err)
				}
			}
			r, _ := l.AllowN(ctx, "daily", day, 1)
			if r.Allowed != 0 || r.Remaining != 0 || !near(r.RetryAfter, 8*time.Hour, time.Second) || !near(r.ResetAfter, 24*time.Hour, time.Second) {
				t.Errorf("4th call: %+v", r)
			}
			if err := l.Reset(ctx, "daily"); err != nil {
				t.Fatal(err)
			}
			if r, _ := l.AllowN(ctx, "daily", day, 2); r.Allowed != 2 || r.Remaining != 1 {
				t.Errorf("after reset, cost 2: %+v", r)
			}
			if r, _ := l.AllowN(ctx, "daily", day, 2); r.Allowed != 0 {
				t.Errorf("cost 2 with 1 left must be denied: %+v", r)
			}
			sec := Limit{Rate: 10, Burst: 2, Period: time.Second}
			l.AllowN(ctx, "burst", sec, 1)
			l.AllowN(ctx, "burst", sec, 1)
			r, _ = l.AllowN(ctx, "burst", sec, 1)
			if r.Allowed != 0 || r.RetryAfter <= 0 || r.RetryAfter > 100*time.Millisecond {
				t.Errorf("third call in a burst of 2: %+v", r)
			}
			if r, _ := l.AllowN(ctx, "other-key", day, 1); r.Remaining != 2 {
				t.Errorf("keys are independent: %+v", r)
			}
		})
	}
}

func BenchmarkLocalAllow(b *testing.B) {
	l := NewLocal()
	ctx := context.Background()
	lim := PerDay(1 << 30)
	for i := 0; i < b.N; i++ {
		l.AllowN(ctx, "k", lim, 1)
	}
}
