package store

import (
	"sync"
	"time"
)

// breaker fails calls fast while the store is down. A frozen Redis does not
// refuse connections (the kernel still accepts them), so without it every
// request would wait for its own timeout and requests would pile up behind
// each other. After threshold consecutive failures it opens for coolDown;
// then one call is let through as a probe: success closes it, failure opens
// it again.
type breaker struct {
	threshold int
	coolDown  time.Duration
	now       func() time.Time

	mu        sync.Mutex
	failures  int
	openUntil time.Time
	probing   bool
}

func newBreaker(threshold int, coolDown time.Duration) *breaker {
	return &breaker{threshold: threshold, coolDown: coolDown, now: time.Now}
}

// allow reports whether a call may go ahead (probe: as the one trial call of
// an open circuit); when it may not, the error says for how long the store
// is expected to stay unavailable.
func (b *breaker) allow() (probe bool, _ *UnavailableError) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failures < b.threshold {
		return false, nil
	}
	now := b.now()
	if now.Before(b.openUntil) {
		return false, &UnavailableError{RetryAfter: b.openUntil.Sub(now), Cause: "circuit open after repeated failures"}
	}
	if b.probing {
		return false, &UnavailableError{RetryAfter: b.coolDown, Cause: "circuit open, probe in progress"}
	}
	b.probing = true
	return true, nil
}

// done records the outcome of a call allow let through.
func (b *breaker) done(probe, failed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		b.probing = false
	}
	if !failed {
		b.failures = 0
		return
	}
	b.failures++
	if b.failures >= b.threshold {
		b.openUntil = b.now().Add(b.coolDown)
	}
}

// retryAfter is how long a caller refused now should wait.
func (b *breaker) retryAfter() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if d := b.openUntil.Sub(b.now()); d > 0 {
		return d
	}
	return b.coolDown
}

// abandon ends a call whose outcome says nothing about the store (the
// caller gave up first).
func (b *breaker) abandon(probe bool) {
	if probe {
		b.mu.Lock()
		b.probing = false
		b.mu.Unlock()
	}
}
