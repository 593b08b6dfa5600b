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

// Cadence limits are said as a person says them, not as Go prints them
// ("15m0s").
func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		15 * time.Minute:             "15 minutes",
		time.Minute:                  "1 minute",
		time.Hour:                    "1 hour",
		90 * time.Minute:             "1 hour 30 minutes",
		30 * 24 * time.Hour:          "30 days",
		24 * time.Hour:               "1 day",
		90 * time.Second:             "90 seconds",
		1500 * time.Millisecond:      "1.5s",
		26*time.Hour + 1*time.Minute: "26 hours 1 minute",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}
