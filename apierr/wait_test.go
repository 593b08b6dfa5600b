package apierr

import (
	"slices"
	"testing"
	"time"
)

func TestWait(t *testing.T) {
	got := []string{}
	for _, s := range []int{0, 59, 60, 61, 3599, 3600, 4162, 86399} {
		got = append(got, Wait(s))
	}
	want := []string{"1 s", "59 s", "1 min", "2 min", "1 h 00 min", "1 h 00 min", "1 h 10 min", "24 h 00 min"}
	if !slices.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
	if s := WaitSeconds(69*time.Minute + 22*time.Second + time.Millisecond); s != 4163 {
		t.Errorf("WaitSeconds rounds up: %d", s)
	}
	now := time.Date(2026, 12, 6, 7, 0, 0, 0, time.UTC)
	if got := RetryAt(now, 4163); got != "2026-12-06T08:09:23Z (in 1 h 10 min)" {
		t.Errorf("RetryAt: %q", got)
	}
}
