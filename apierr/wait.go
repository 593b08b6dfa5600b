package apierr

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// WaitSeconds is how long a caller is told to wait, in whole seconds
// rounded up: the number of Retry-After and RateLimit-Reset, and of the
// words Wait writes, so a message never contradicts its own headers.
func WaitSeconds(d time.Duration) int {
	return max(int(math.Ceil(d.Seconds())), 0)
}

// Wait words a wait of s seconds in the coarsest honest unit, the same in
// every transport: "45 s", "12 min", "1 h 09 min".
func Wait(s int) string {
	if s < 60 {
		return strconv.Itoa(max(s, 1)) + " s"
	}
	m := (s + 59) / 60
	if m < 60 {
		return strconv.Itoa(m) + " min"
	}
	return fmt.Sprintf("%d h %02d min", m/60, m%60)
}

// RetryAt is a wait as a sentence's end: "at 2026-12-06T08:21:09Z (in
// 1 h 09 min)".
func RetryAt(now time.Time, s int) string {
	return now.Add(time.Duration(s)*time.Second).UTC().Format(time.RFC3339) + " (in " + Wait(s) + ")"
}

// Duration words a setting's duration as a person says it: "15 minutes",
// "1 hour 30 minutes", "30 days", "90 seconds" (Go's "15m0s" is not); a
// duration of no whole seconds as Go writes it.
func Duration(d time.Duration) string {
	unit := func(n int64, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return strconv.FormatInt(n, 10) + " " + one + "s"
	}
	switch {
	case d >= 24*time.Hour && d%(24*time.Hour) == 0:
		return unit(int64(d/(24*time.Hour)), "day")
	case d >= time.Hour && d%time.Minute == 0:
		h, m := int64(d/time.Hour), int64(d%time.Hour/time.Minute)
		if m == 0 {
			return unit(h, "hour")
		}
		return unit(h, "hour") + " " + unit(m, "minute")
	case d >= time.Minute && d%time.Minute == 0:
		return unit(int64(d/time.Minute), "minute")
	case d%time.Second == 0:
		return unit(int64(d/time.Second), "second")
	}
	return d.String()
}
