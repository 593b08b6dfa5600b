package fetch

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// Every body a scan reads stays in memory until the scan has been judged, so
// bodies are budgeted at three levels:
//
//   - one body: Config.MaxBody (Request.MaxBody), after decompression;
//   - one scan (a Session): Config.MaxScanBytes for all its bodies together;
//   - all scans of a Client: Config.SharedBodyBytes. Each scan's first
//     FreeScanBytes never touch it (an ordinary site needs no more, so ordinary
//     scans never wait); beyond that a scan takes bytes from the shared pool.
//     While the pool has room it takes them at once; when the pool is busy a
//     scan within its fair share (the pool divided among the scans using it)
//     waits for others to finish, as long as its request's time lasts, and a
//     scan beyond its share is cut at once: waiting scans together fit in the
//     pool, so they never wait on each other forever.
//
// The bound on body memory is SharedBodyBytes + FreeScanBytes × running scans
// (the origin's worker pool bounds the scans). A body that is cut says why
// (Response.Cut), and checks do not pass on it.

// ErrBodyBudget is the BodyErr of a body whose reading stopped because the
// scanner's shared memory for bodies stayed in use by other scans until the
// request's time ran out.
var ErrBodyBudget = errors.New("the scanner's memory for response bodies was in use by other scans until the request's time ran out")

// readChunk is the unit bodies are read and budgeted in.
const readChunk = 32 << 10

var chunkPool = sync.Pool{New: func() any { b := make([]byte, readChunk); return &b }}

// pool is the memory all sessions of a Client share.
type pool struct {
	sem   *semaphore.Weighted
	size  int64
	users atomic.Int64 // open sessions that have taken from the pool, for the fair share
}

func newPool(size int64) *pool { return &pool{sem: semaphore.NewWeighted(size), size: size} }

// share is how much of the pool one session may hold while others wait for
// it: the pool divided among the sessions using it, so the sessions that wait
// can always be served together and never wait on each other forever.
func (p *pool) share() int64 {
	n := max(p.users.Load(), 1)
	return max(p.size/n, readChunk)
}

// account is one session's use of the budget. Kept bytes come from the
// session's free allowance first, then from the pool; giving bytes back
// returns pool bytes first. So the pool part of what a session keeps is
// always max(0, held-free).
type account struct {
	p    *pool
	max  int64 // MaxScanBytes
	free int64 // FreeScanBytes

	mu        sync.Mutex
	held      int64 // body bytes the session keeps (whole chunks while reading)
	transient int64 // pool bytes lent for the time of one read (decoder windows)
	waiting   int64 // pool bytes its reads are waiting for
	user      bool  // counted in the pool's users
	closed    bool
}

func newAccount(p *pool, max, free int64) *account {
	return &account{p: p, max: max, free: free}
}

func (a *account) pooled() int64 { return max(0, a.held-a.free) + a.transient }

// cutKind says why take granted less than asked.
type cutKind int

const (
	cutNone  cutKind = iota
	cutScan          // the session's MaxScanBytes is spent
	cutShare         // the session holds its fair share of a busy pool
	cutWait          // the pool stayed busy until ctx ended
)

// take asks for n body bytes the session will keep. It returns what was
// granted (n, or less with the reason), waiting for the pool only while the
// session is within its fair share and ctx lasts.
func (a *account) take(ctx context.Context, n int64) (int64, cutKind) {
	a.mu.Lock()
	why := cutNone
	if room := a.max - a.held; n > room {
		n, why = max(room, 0), cutScan
	}
	inFree := min(n, max(a.free-a.held, 0))
	a.held += inFree
	a.mu.Unlock()
	if need := n - inFree; need > 0 {
		if k := a.acquire(ctx, need, true); k != cutNone {
			return inFree, k
		}
	}
	return n, why
}

// lend takes n pool bytes for the time of one read (giveBack with lent).
func (a *account) lend(ctx context.Context, n int64) cutKind { return a.acquire(ctx, n, false) }

// acquire takes n bytes from the pool, as kept body bytes or as a loan. Free
// memory is taken at once; when the pool is busy, a session within its fair
// share waits (as long as ctx lasts) and one beyond it is cut at once.
func (a *account) acquire(ctx context.Context, n int64, kept bool) cutKind {
	a.mu.Lock()
	if !a.user && !a.closed {
		a.user = true
		a.p.users.Add(1)
	}
	a.mu.Unlock()
	if !a.p.sem.TryAcquire(n) {
		if k := a.wait(ctx, n); k != cutNone {
			return k
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed { // the scan ended while this read waited
		a.p.sem.Release(n)
		return cutWait
	}
	if kept {
		a.held += n
	} else {
		a.transient += n
	}
	return cutNone
}

// shareCheck is how often a waiting read checks that its session is still
// within its share: the share shrinks as more sessions use the pool.
const shareCheck = 50 * time.Millisecond

// wait waits for n pool bytes while the session stays within its fair share.
// What the session holds and what its other reads already wait for count:
// with every waiting session within its share, the waiting sessions fit in
// the pool together, so memory always comes free for one of them.
func (a *account) wait(ctx context.Context, n int64) cutKind {
	for {
		a.mu.Lock()
		over := a.pooled()+a.waiting+n > a.p.share()
		if !over {
			a.waiting += n
		}
		a.mu.Unlock()
		if over {
			return cutShare
		}
		wctx, cancel := context.WithTimeout(ctx, shareCheck)
		err := a.p.sem.Acquire(wctx, n)
		cancel()
		a.mu.Lock()
		a.waiting -= n
		a.mu.Unlock()
		switch {
		case err == nil:
			return cutNone
		case ctx.Err() != nil:
			return cutWait
		}
	}
}

// giveBack returns n kept bytes the session did not use after all, and lent
// bytes it no longer needs.
func (a *account) giveBack(kept, lent int64) {
	if kept <= 0 && lent <= 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	before := a.pooled()
	a.held -= kept
	a.transient -= lent
	if d := before - a.pooled(); d > 0 {
		a.p.sem.Release(d)
	}
}

// close returns everything the session holds to the pool.
func (a *account) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	a.closed = true
	if n := a.pooled(); n > 0 {
		a.p.sem.Release(n)
	}
	a.held, a.transient = 0, 0
	if a.user {
		a.p.users.Add(-1)
	}
}

// track gives a new session its account and its transport. A session that
// is dropped without Close still returns its memory to the pool, and its
// hold on a retired transport, once it is garbage.
func (c *Client) track(s *Session) {
	s.acct = newAccount(c.pool, c.cfg.MaxScanBytes, c.cfg.FreeScanBytes)
	s.lease = &lease{c: c, gen: c.startSession()}
	runtime.AddCleanup(s, func(a *account) { a.close() }, s.acct)
	runtime.AddCleanup(s, func(l *lease) { l.end() }, s.lease)
}

// lease is a session's use of its Client's transport, ended once, by Close
// or when the session is collected.
type lease struct {
	c    *Client
	gen  *generation
	once sync.Once
}

func (l *lease) end() { l.once.Do(func() { l.c.endSession(l.gen) }) }

func (s *Session) account() *account { return s.acct }

// Close ends the session's claim on the body budget and on its transport:
// call it once the responses are no longer needed (their bodies stay valid;
// they are just no longer counted). A session that is not closed lets both
// go when it is collected.
func (s *Session) Close() {
	s.acct.close()
	s.lease.end()
}

// Held reports the body bytes the session keeps, for tests and benchmarks.
func (s *Session) Held() int64 {
	s.acct.mu.Lock()
	defer s.acct.mu.Unlock()
	return s.acct.held
}

// cutReason is the sentence a check shows for a body that is not whole.
func (s *Session) cutReason(kind cutKind, limit int64, took time.Duration) string {
	switch kind {
	case cutScan:
		return fmt.Sprintf("the scanner had already read %s of bodies for this scan, its limit", size(s.acct.max))
	case cutShare:
		return fmt.Sprintf("the scanner was busy with other scans and this scan had used its share of the memory they share (%s)", size(s.c.pool.share()))
	case cutWait:
		return fmt.Sprintf("the scanner was busy with other scans and no memory for the body came free within %s", took.Round(100*time.Millisecond))
	}
	return fmt.Sprintf("it is larger than the %s the scanner reads of one document", size(limit))
}

// size renders a byte count the way the limits are configured.
func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
