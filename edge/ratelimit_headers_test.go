package edge

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// rateHeaders writes its map directly; it must hold exactly what setting
// each header by name gives, so that every lookup (Get, Values) finds it.
func TestRateHeadersAsSet(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		d Decision
		n int // seconds to the reset
	}{
		{Decision{Allowed: true, Limit: 20, Remaining: 19, ResetAfter: 4320 * time.Second}, 4320},
		{Decision{Allowed: false, Limit: 3, Remaining: 0, RetryAfter: 1500 * time.Millisecond, ResetAfter: time.Hour}, 2},
		{Decision{Allowed: true, Limit: 1_000_000_000, Remaining: 0, ResetAfter: -time.Second}, 0},
	} {
		d, n := tc.d, tc.n
		got := rateHeaders(d, now)
		reset := strconv.Itoa(n)
		want := http.Header{}
		want.Set("X-RateLimit-Limit", strconv.Itoa(d.Limit))
		want.Set("X-RateLimit-Remaining", strconv.Itoa(d.Remaining))
		want.Set("X-RateLimit-Reset", strconv.FormatInt(now.Add(time.Duration(n)*time.Second).Unix(), 10))
		want.Set("RateLimit-Limit", strconv.Itoa(d.Limit))
		want.Set("RateLimit-Remaining", strconv.Itoa(d.Remaining))
		want.Set("RateLimit-Reset", reset)
		want.Set("RateLimit-Policy", fmt.Sprintf("%d;w=%d", d.Limit, 86400))
		want.Set("Access-Control-Expose-Headers", ExposedHeaders)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%+v:\n got %v\nwant %v", d, got, want)
		}
	}
}

// With nothing left, a request that cost nothing (an MCP call, whose tools
// charge for themselves) gets as its reset when the next scan comes back,
// the number a refusal of that scan quotes, not when the allowance is whole.
func TestResetWithNothingLeftIsTheNextScan(t *testing.T) {
	now := time.Date(2026, 12, 6, 7, 0, 0, 0, time.UTC)
	// 20 a day: one comes back every 72 min; whole again in 23 h 40 min
	// means the next one is back in 23h40m - 19×72m = 52 min.
	h := rateHeaders(Decision{Allowed: true, Limit: 20, Remaining: 0, ResetAfter: 23*time.Hour + 40*time.Minute}, now)
	if got := h.Get("RateLimit-Reset"); got != "3120" {
		t.Errorf("RateLimit-Reset %s with nothing left, want 3120 (52 min)", got)
	}
	h = rateHeaders(Decision{Allowed: true, Limit: 20, Remaining: 5, ResetAfter: 3 * time.Hour}, now)
	if got := h.Get("RateLimit-Reset"); got != "10800" {
		t.Errorf("RateLimit-Reset %s with some left, want the whole reset 10800", got)
	}
}
