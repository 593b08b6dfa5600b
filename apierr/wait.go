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
