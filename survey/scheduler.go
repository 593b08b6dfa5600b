package survey

import (
	"context"
	"time"
)

// job is a site waiting in a scheduler's queue.
type job interface {
	site() string               // its registrable domain: one scan of each at a time
	waiting(now time.Time) bool // not to be started yet
}

func (p pending) site() string             { return p.Site }
func (p pending) waiting(time.Time) bool   { return false }
func (h *held) site() string               { return h.Site }
func (h *held) waiting(now time.Time) bool { return h.notBefore.After(now) }

// driver is what a scheduler's caller supplies: where its jobs come from
// and where the outcomes of their scans go. The scheduler calls every
// method but scan on its loop's goroutine, so a driver's state needs no
// lock; what the driver does in goroutines of its own reports back
// through scheduler.post.
type driver[J job, O any] interface {
	// input is where new sites arrive (nil: none now), each handed to
	// receive; a closed channel is handed over once, with ok false.
	input() <-chan Item
	receive(it Item, ok bool)
	// pump starts the driver's own calls (a queue's reads, acks and
	// renewals) before the loop waits; it is not called once stopping.
	pump(now time.Time)
	// scan runs one job, in a goroutine of its own, under ctx, which ends
	// when the run stops.
	scan(ctx context.Context, j J) O
	// done takes a finished scan's outcome; the job's domain is free again.
	done(j J, o O)
	// synced follows every attempt to sync the results file; last: the
	// final one, after the loop, which succeeded.
	synced(last bool)
	// idle reports that none of the driver's own calls is under way, and
	// exhausted that no job will come: with the queue empty and no scan
	// running, the run is over.
	idle() bool
	exhausted() bool
	// progress adds the driver's own figures to a report.
	progress(p *Progress)
}

// scheduler runs a survey's scans for a driver: at most limit at once and
// one per registrable domain, the results appended to out and synced in
// small batches, the progress reported, and every scan stopped at the
// first failure or when the run's context ends. It is the loop of both a
// survey of one machine (scanAll) and a queue's worker (worker.run).
type scheduler[J job, O any] struct {
	limit         int
	tickEvery     time.Duration // how often out is synced when nothing else happens
	progressEvery time.Duration // the least time between two progress reports on a tick
	out           *resultWriter
	sum           *Summary // Total, Done and Resumed are reported
	errCounts     map[string]int
	report        func(Progress) // nil: none
	started       time.Time
	lastProgress  time.Time

	// ctx is the scans' context (and of whatever the driver ties to the
	// run): cancel ends it.
	ctx    context.Context
	cancel context.CancelFunc

	d        driver[J, O]
	queue    []J
	busy     map[string]bool // the domains with a scan under way
	running  int
	stopping bool
	failure  error
	outcomes chan scanned[J, O]
	// events runs what the driver's goroutines post on the loop's
	// goroutine. Each driver keeps at most eventSlots posts outstanding,
	// so a post never waits.
	events chan func()
}

const eventSlots = 4

type scanned[J, O any] struct {
	j J
	o O
}

func newScheduler[J job, O any](ctx context.Context, cfg Config, out *resultWriter, sum *Summary, errCounts map[string]int) *scheduler[J, O] {
	s := &scheduler[J, O]{limit: cfg.Concurrency, tickEvery: time.Second, out: out, sum: sum, errCounts: errCounts,
		report: cfg.Progress, started: time.Now(), busy: map[string]bool{},
		outcomes: make(chan scanned[J, O], cfg.Concurrency), events: make(chan func(), eventSlots)}
	s.ctx, s.cancel = context.WithCancel(ctx)
	return s
}

// add queues j for a scan.
func (s *scheduler[J, O]) add(j J) { s.queue = append(s.queue, j) }

// post runs f on the loop's goroutine.
func (s *scheduler[J, O]) post(f func()) { s.events <- f }

// stop ends the run: no scan starts, those under way are canceled, and
// err, when it is the first failure, is what run returns.
func (s *scheduler[J, O]) stop(err error) {
	if s.failure == nil {
		s.failure = err
	}
	s.stopping = true
	s.cancel()
}

// sync syncs the results file when its batch is due.
func (s *scheduler[J, O]) sync() {
	if err := s.out.maybeSync(); err != nil {
		s.stop(err)
	}
	s.d.synced(false)
}

func (s *scheduler[J, O]) progress(final bool) {
	if s.report == nil {
		return
	}
	errs := make(map[string]int, len(s.errCounts))
	for k, v := range s.errCounts {
		errs[k] = v
	}
	p := Progress{Total: s.sum.Total, Done: s.sum.Done, Resumed: s.sum.Resumed, Running: s.running, Errors: errs,
		Started: s.started, Final: final}
	s.d.progress(&p)
	s.report(p)
	s.lastProgress = time.Now()
}

// dispatch starts the queue's jobs whose domain is free, up to the limit,
// in the queue's order.
func (s *scheduler[J, O]) dispatch(now time.Time) {
	for i := 0; i < len(s.queue) && s.running < s.limit; {
		j := s.queue[i]
		if s.busy[j.site()] || j.waiting(now) {
			i++
			continue
		}
		s.busy[j.site()] = true
		s.running++
		s.queue = append(s.queue[:i], s.queue[i+1:]...)
		go func(j J) { s.outcomes <- scanned[J, O]{j, s.d.scan(s.ctx, j)} }(j)
	}
}

// run is the loop: it returns, with the first failure, once every job is
// done or, stopping, once no scan and no call of the driver is under way,
// after the last sync and the final progress report.
func (s *scheduler[J, O]) run(ctx context.Context, d driver[J, O]) error {
	s.d = d
	defer s.cancel()
	tick := time.NewTicker(s.tickEvery)
	defer tick.Stop()
	ctxDone, inputOpen := ctx.Done(), true
	for {
		now := time.Now()
		if !s.stopping {
			s.dispatch(now)
			d.pump(now)
		}
		if s.running == 0 && d.idle() && (s.stopping || len(s.queue) == 0 && d.exhausted()) {
			break
		}
		var in <-chan Item
		if inputOpen && !s.stopping {
			in = d.input()
		}
		select {
		case it, ok := <-in:
			inputOpen = ok
			d.receive(it, ok)
		case o := <-s.outcomes:
			s.running--
			delete(s.busy, o.j.site())
			d.done(o.j, o.o)
		case f := <-s.events:
			f()
		case <-tick.C:
			s.sync()
			if time.Since(s.lastProgress) >= s.progressEvery {
				s.progress(false)
			}
		case <-ctxDone:
			ctxDone = nil
			s.stop(nil)
		}
	}
	if err := s.out.sync(); err != nil {
		if s.failure == nil {
			s.failure = err
		}
	} else {
		d.synced(true)
	}
	for len(s.events) > 0 { // posted as the loop ended (the list reader's error)
		(<-s.events)()
	}
	s.progress(true)
	return s.failure
}
