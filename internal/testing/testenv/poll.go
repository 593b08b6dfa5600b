package testenv

import (
	"testing"
	"time"
)

// PollEvery is how often Eventually asks again: short, so a test waits about
// as long as the condition takes and no longer.
const PollEvery = 5 * time.Millisecond

// Eventually polls cond every PollEvery until it holds; once within has
// passed without it, tb fails, naming what did not happen.
func Eventually(tb testing.TB, within time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("%s did not happen within %s", what, within)
		}
		time.Sleep(PollEvery)
	}
}
