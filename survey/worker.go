package survey

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agentready/agentready/engine"
)

// redisPatience is how long a worker keeps trying while Redis does not
// answer before it stops (exit 4; its next run continues).
const redisPatience = time.Minute

// runWorker runs one worker of a queue's survey: it loads the list when
// given one (once per survey, whoever loads it), then pulls sites from the
// stream, scans them with the survey's politeness, appends their results
// in the order they finish, and acknowledges each once its line is on
// disk. It returns when every site of the survey is done, by this worker
// or another.
func runWorker(ctx context.Context, cfg Config) (*Summary, error) {
	qc := cfg.Queue
	if !cfg.Shard.Whole() {
		return nil, errors.New("--shard and --queue do not go together: a queue's workers share the whole list as they go")
	}
	if qc.ClaimIdle <= cfg.Timeout {
		return nil, fmt.Errorf("the idle time before a worker's entries are taken over (%s) must exceed the per-site timeout (%s)", qc.ClaimIdle, cfg.Timeout)
	}
	if qc.Worker != "" {
		if err := CheckWorkerName(qc.Worker); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, fmt.Errorf("the output directory cannot be created: %w", err)
	}
	// Each worker has a directory of its own; two given the same one would
	// interleave their lines and take each other's name.
	lock, err := lockDir(cfg.Out)
	if err != nil {
		return nil, err
	}
	defer lock.unlock()
	var loader queueMeta
	if cfg.List != "" {
		info, total, skipped, err := prepass(cfg.List, Shard{}, filepath.Join(cfg.Out, SkippedFile))
		if err != nil {
			return nil, err
		}
		loader = queueMeta{List: info, Sites: total, Skipped: skipped, ClaimIdle: qc.ClaimIdle}
	}
	name := qc.Survey
	if name == "" {
		if cfg.List == "" {
			return nil, errors.New("name the survey (--survey NAME) or give its list (--in LIST)")
		}
		name = loader.List.SHA256
	}
	if err := CheckQueueName(name); err != nil {
		return nil, err
	}
	q, err := dialQueue(ctx, qc.URL, name)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	q.claimIdle, q.leaseTTL = qc.ClaimIdle, cfg.Timeout+5*time.Second
	notice := func(format string, a ...any) {
		if cfg.Notice != nil {
			cfg.Notice(fmt.Sprintf(format, a...))
		}
	}
	qs := &QueueSummary{Survey: name, ClaimIdle: q.claimIdle}
	interrupted := func(err error) (*Summary, error) {
		if ctx.Err() != nil {
			return &Summary{Interrupted: true, Queue: qs}, nil // the same command starts again
		}
		return nil, err
	}
	if cfg.List != "" {
		if qs.Loaded, err = q.load(ctx, cfg.List, loader); err != nil {
			return interrupted(err)
		}
		if qs.Loaded > 0 {
			notice("loaded %d sites of %s into the queue's survey %s", qs.Loaded, loader.List.Name, name)
		} else {
			notice("the queue's survey %s holds %s already: joining it", name, loader.List.Name)
		}
	}
	meta, err := awaitSurvey(ctx, q, notice)
	if err != nil || ctx.Err() != nil {
		return interrupted(err)
	}
	if meta.ClaimIdle > 0 && meta.ClaimIdle != q.claimIdle {
		// The survey's takeover time is its loader's: with its own, this
		// worker could take over a slower-renewing worker's live entries.
		notice("using the survey's takeover time, %s (its loader's --timeout + 10 s), instead of %s", meta.ClaimIdle, q.claimIdle)
		q.claimIdle = meta.ClaimIdle
	}
	qs.ClaimIdle = q.claimIdle

	sc := engine.New(cfg.Engine)
	settings := settingsOf(cfg, sc)
	settings.Queue = name
	man, err := startWorkerManifest(cfg, meta, settings)
	if err != nil {
		return nil, err
	}
	q.worker, qs.Worker = man.Settings.Worker, man.Settings.Worker
	resultsPath := filepath.Join(cfg.Out, ResultsFile)
	f, done, _, err := resume(resultsPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sum := &Summary{Total: meta.Sites, Done: done, Resumed: done, Queue: qs}
	if man.Finished == nil {
		if err := q.join(ctx); err != nil {
			return sum, err
		}
		w := &worker{cfg: cfg, q: q, sc: sc, sum: sum, notice: notice}
		if err := w.run(ctx, f, resultsPath); err != nil || sum.Interrupted {
			return sum, err
		}
		// Every site is done: the survey's end is recorded even when the
		// worker is being stopped (an interrupt now has nothing to cut).
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), redisCallTimeout)
		man.Workers, err = q.finish(fctx)
		cancel()
		if err != nil {
			return sum, err
		}
		now := time.Now().UTC().Truncate(time.Second)
		man.Finished = &now
		if err := writeManifest(cfg.Out, man); err != nil {
			return sum, err
		}
	} else if cfg.Progress != nil {
		cfg.Progress(Progress{Total: meta.Sites, Done: done, Resumed: done, Errors: map[string]int{}, Started: time.Now(), Final: true, Queue: true})
	}
	return sum, f.Close()
}

// awaitSurvey reads the survey's account, waiting for a loader when Redis
// holds none yet: workers may start in any order.
func awaitSurvey(ctx context.Context, q *redisQueue, notice func(string, ...any)) (queueMeta, error) {
	told := false
	for {
		meta, ok, err := q.meta(ctx)
		if err != nil || ok {
			return meta, err
		}
		if !told {
			notice("Redis holds no survey %s yet: waiting for a worker given its list (--in LIST) to load it", q.name)
			told = true
		}
		select {
		case <-ctx.Done():
			return meta, nil
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// startWorkerManifest writes (or continues) a worker's manifest: the
// directory belongs to one worker of one survey, and keeps the worker's
// name, so that a worker run again in its directory reads back the entries
// it held.
func startWorkerManifest(cfg Config, meta queueMeta, s Settings) (*Manifest, error) {
	old, err := readManifest(cfg.Out)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if _, serr := os.Stat(filepath.Join(cfg.Out, ResultsFile)); serr == nil {
			return nil, fmt.Errorf("%w: %s has results but no %s; use a new --out", ErrMismatch, cfg.Out, ManifestFile)
		}
		s.Worker = cfg.Queue.Worker
		if s.Worker == "" {
			s.Worker = defaultWorkerName()
		}
		skipped := meta.Skipped
		m := &Manifest{Version: cfg.Version, List: meta.List, Sites: meta.Sites, Settings: s, Skipped: &skipped,
			Started: time.Now().UTC().Truncate(time.Second), Runs: 1}
		return m, writeManifest(cfg.Out, m)
	case err != nil:
		return nil, err
	case old.Settings.Queue == "":
		return nil, fmt.Errorf("%w: %s holds shard %s of a survey of one list, not a queue's worker; use a new --out", ErrMismatch, cfg.Out, old.Settings.Shard)
	case old.Settings.Queue != s.Queue || old.List.SHA256 != meta.List.SHA256:
		return nil, fmt.Errorf("%w: %s holds a worker of the queue's survey %s (list sha256 %.12s…), not of %s (%.12s…); use a new --out", ErrMismatch, cfg.Out, old.Settings.Queue, old.List.SHA256, s.Queue, meta.List.SHA256)
	case cfg.Queue.Worker != "" && cfg.Queue.Worker != old.Settings.Worker:
		return nil, fmt.Errorf("%w: %s is worker %s's directory, not %s's: run without --worker (or with --worker %s) to continue it, or use a new --out", ErrMismatch, cfg.Out, old.Settings.Worker, cfg.Queue.Worker, old.Settings.Worker)
	}
	if old.Finished != nil {
		return old, nil // the queue was empty: nothing is left to scan
	}
	s.Worker = old.Settings.Worker
	old.Runs++
	old.Version, old.Settings = cfg.Version, s
	return old, writeManifest(cfg.Out, old)
}

// defaultWorkerName is hostname-pid-random: unique among the workers
// running at once even where host names repeat and every pid is 1 (a
// container's), and kept in the manifest for the runs that continue this
// one.
func defaultWorkerName() string {
	host, err := os.Hostname()
	if err != nil || CheckWorkerName(host) != nil {
		host = "worker"
	}
	if len(host) > 80 {
		host = host[:80]
	}
	var r [4]byte
	rand.Read(r[:]) // crypto/rand: never fails on the systems Go supports
	return host + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(r[:])
}

// worker is the state of one run of a queue's worker.
type worker struct {
	cfg    Config
	q      *redisQueue
	sc     *engine.Scanner
	sum    *Summary
	notice func(string, ...any)
}

// callKind is a kind of Redis call a worker makes as it goes.
type callKind int

const (
	callRead  callKind = iota // reading entries (its own, taken over, new)
	callLease                 // a registrable domain's lease
	callAck                   // acknowledging and deleting done entries
	callRenew                 // touching the entries it holds
	callKinds
)

// held is an entry this worker read and has not acknowledged.
type held struct {
	id string
	Item
	notBefore time.Time     // another worker holds the domain: not before then
	backoff   time.Duration // the next wait for the domain
	claimed   bool          // taken over from another worker
}

type workerOutcome struct {
	outcome
	h        *held
	deferred bool // another worker scans a site of this domain
	leaseErr error
}

type fetched struct {
	items     []*held
	remaining int64
	drained   bool     // the whole list was loaded and the stream is empty
	gone      []string // pending entries another worker finished: to acknowledge
	err       error
}

// run is the worker's loop: the scheduling as in a survey of one machine
// (a global limit, one scan per registrable domain, here and across
// workers through a lease), results appended as they finish and fsynced
// in small batches, and every Redis call in a goroutine of its own so
// that a slow Redis never holds the scans up.
func (w *worker) run(ctx context.Context, f *os.File, resultsPath string) error {
	cfg, q, sum := w.cfg, w.q, w.sum
	errCounts, pending, toAck, err := w.resumeHeld(ctx, resultsPath)
	if err != nil {
		return err
	}
	scanCtx, cancelScans := context.WithCancel(ctx)
	defer cancelScans()
	// Redis calls outlive ctx a little: what was written is acknowledged
	// on the way out.
	redisCtx, cancelRedis := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRedis()

	capacity := 2 * cfg.Concurrency
	var (
		queue      = pending
		holding    = map[string]*held{}
		busy       = map[string]bool{}
		unsynced   []string
		running    int
		reading    bool
		acking     bool
		renewing   bool
		drained    bool
		stopping   bool
		failure    error
		remaining  int64 = -1
		remaining0 int64 = -1
		nextRead   time.Time
		nextAck    time.Time
		lastClaim  time.Time
		lastRenew  time.Time // zero: the entries read back from this worker's pending list are renewed at once
		lastEmpty  bool
		redisDown  [callKinds]time.Time // per kind of call, the first of its failures in a row
		outcomes   = make(chan workerOutcome, cfg.Concurrency)
		reads      = make(chan fetched, 1)
		acks       = make(chan ackDone, 1)
		renews     = make(chan error, 1)
		tick       = time.NewTicker(100 * time.Millisecond)
		ctxDone    = ctx.Done()
		started    = time.Now()
		lastProg   time.Time
	)
	defer tick.Stop()
	for _, h := range pending {
		holding[h.id] = h
	}
	for _, id := range toAck {
		holding[id] = &held{id: id}
	}
	out := newResultWriter(f)
	renewEvery := max(q.claimIdle/4, 250*time.Millisecond)
	claimEvery := max(q.claimIdle/2, time.Second)

	// Each kind of call keeps its own clock of failures in a row, so that
	// one that keeps failing (a lease refused by a full Redis, an ack an
	// ACL forbids) stops the worker even while the others succeed.
	redisFailed := func(k callKind, err error) {
		if redisDown[k].IsZero() {
			redisDown[k] = time.Now()
			w.notice("%v; retrying for up to %s", err, redisPatience)
		}
		if time.Since(redisDown[k]) > redisPatience && failure == nil {
			failure, stopping = fmt.Errorf("%v; stopped after %s of failed calls: run the same command to continue", err, redisPatience), true
			cancelScans()
		}
	}
	redisOK := func(k callKind) { redisDown[k] = time.Time{} }
	stop := func(err error) {
		if failure == nil {
			failure = err
		}
		stopping = true
		cancelScans()
	}
	synced := func() {
		if out.unsynced == 0 && len(unsynced) > 0 {
			toAck = append(toAck, unsynced...)
			unsynced = unsynced[:0]
		}
	}
	progress := func(final bool) {
		if cfg.Progress == nil {
			return
		}
		errs := make(map[string]int, len(errCounts))
		for k, v := range errCounts {
			errs[k] = v
		}
		cfg.Progress(Progress{Total: sum.Total, Done: sum.Done, Resumed: sum.Resumed, Running: running, Errors: errs,
			Started: started, Final: final, Queue: true, Remaining: remaining, RemainingAtStart: remaining0})
		lastProg = time.Now()
	}

	for {
		now := time.Now()
		if !stopping {
			for i := 0; i < len(queue) && running < cfg.Concurrency; {
				h := queue[i]
				if busy[h.Site] || h.notBefore.After(now) {
					i++
					continue
				}
				busy[h.Site] = true
				running++
				queue = append(queue[:i], queue[i+1:]...)
				go func(h *held) { outcomes <- w.scan(scanCtx, redisCtx, h) }(h)
			}
		}
		if !stopping && !reading && !drained && now.After(nextRead) {
			if want := capacity - len(queue) - running; want > 0 && (want >= capacity/4 || len(queue) == 0) {
				claimNow := now.Sub(lastClaim) >= claimEvery || (lastEmpty && now.Sub(lastClaim) >= time.Second)
				if claimNow {
					lastClaim = now
				}
				reading = true
				idle := len(queue)+running == 0
				go func() { reads <- w.fetch(ctx, want, claimNow, idle) }()
			}
		}
		if !acking && !stopping && len(toAck) > 0 && now.After(nextAck) {
			acking = true
			batch := append([]string(nil), toAck...)
			toAck = toAck[:0]
			go func() { acks <- ackDone{ids: batch, err: q.ack(redisCtx, batch)} }()
		}
		if !renewing && !stopping && now.Sub(lastRenew) >= renewEvery && len(holding) > 0 {
			renewing, lastRenew = true, now
			ids := make([]string, 0, len(holding))
			for id := range holding {
				ids = append(ids, id)
			}
			go func() { renews <- q.renew(redisCtx, ids) }()
		}
		if running == 0 && !reading && !acking && !renewing && (stopping || drained && len(holding) == 0) {
			break
		}
		select {
		case r := <-reads:
			reading = false
			if r.err != nil {
				var qe *queueError
				switch {
				case stopping || errors.Is(r.err, context.Canceled):
				case errors.As(r.err, &qe):
					nextRead = time.Now().Add(time.Second)
					redisFailed(callRead, r.err)
				default:
					stop(r.err) // an entry agentready did not write
				}
				continue
			}
			redisOK(callRead)
			if lastEmpty = len(r.items) == 0; lastEmpty {
				nextRead = time.Now().Add(250 * time.Millisecond)
			}
			if remaining = r.remaining; remaining0 < 0 {
				remaining0 = remaining
			}
			if stopping {
				continue // read after the stop: the next run reads them back
			}
			for _, id := range r.gone {
				if holding[id] == nil {
					holding[id] = &held{id: id}
					toAck = append(toAck, id)
				}
			}
			takenOver := 0
			for _, h := range r.items {
				if holding[h.id] == nil {
					holding[h.id] = h
					queue = append(queue, h)
					if h.claimed {
						takenOver++
					}
				}
			}
			if takenOver > 0 {
				if sum.Queue.TakenOver == 0 {
					w.notice("taking over the entries other workers have held untouched for %s (stopped or killed workers)", q.claimIdle)
				}
				sum.Queue.TakenOver += takenOver
			}
			drained = r.drained
		case o := <-outcomes:
			running--
			delete(busy, o.h.Site)
			switch {
			case o.canceled:
				continue
			case o.leaseErr != nil:
				redisFailed(callLease, o.leaseErr)
				fallthrough
			case o.deferred:
				if o.leaseErr == nil {
					redisOK(callLease) // the lease was asked for, and held by another worker
				}
				o.h.backoff = min(max(2*o.h.backoff, 250*time.Millisecond), 2*time.Second)
				o.h.notBefore = time.Now().Add(o.h.backoff)
				queue = append(queue, o.h)
				continue
			}
			redisOK(callLease)
			if err := out.write(o.line); err != nil {
				stop(err)
				continue
			}
			unsynced = append(unsynced, o.h.id)
			if o.errKey != "" {
				errCounts[o.errKey]++
			}
			sum.Done++
			if err := out.maybeSync(); err != nil {
				stop(err)
			}
			synced()
		case a := <-acks:
			acking = false
			if a.err != nil {
				toAck = append(toAck, a.ids...)
				nextAck = time.Now().Add(time.Second)
				redisFailed(callAck, a.err)
				continue
			}
			redisOK(callAck)
			nextAck = time.Time{}
			for _, id := range a.ids {
				delete(holding, id)
			}
		case err := <-renews:
			renewing = false
			if err != nil {
				redisFailed(callRenew, err)
			} else {
				redisOK(callRenew)
			}
		case <-tick.C:
			if err := out.maybeSync(); err != nil {
				stop(err)
			}
			synced()
			if time.Since(lastProg) >= time.Second {
				progress(false)
			}
		case <-ctxDone:
			ctxDone = nil
			stop(nil)
		}
	}
	if err := out.sync(); err != nil && failure == nil {
		failure = err
	} else if err == nil {
		synced()
		if len(toAck) > 0 {
			// What is on disk is acknowledged now, or read back from this
			// worker's pending entries by its next run.
			actx, cancel := context.WithTimeout(redisCtx, 5*time.Second)
			_ = q.ack(actx, toAck)
			cancel()
		}
	}
	progress(true)
	if failure != nil {
		return failure
	}
	if ctx.Err() != nil && !drained {
		sum.Interrupted = true
	}
	return nil
}

type ackDone struct {
	ids []string
	err error
}

// fetch reads up to want entries: the ones held untouched too long by
// other workers first (when claim), then new ones, waiting up to a second
// when the worker has nothing to do; and how many remain.
func (w *worker) fetch(ctx context.Context, want int, claim, idle bool) fetched {
	var r fetched
	var msgs []redis.XMessage
	claimed := 0
	if claim {
		var err error
		if msgs, err = w.q.claim(ctx, want); err != nil {
			return fetched{err: err}
		}
		claimed = len(msgs)
	}
	if len(msgs) < want {
		block := time.Duration(-1)
		if idle && len(msgs) == 0 {
			block = time.Second
		}
		fresh, err := w.q.readNew(ctx, want-len(msgs), block)
		if err != nil {
			return fetched{err: err}
		}
		msgs = append(msgs, fresh...)
	}
	for i, m := range msgs {
		if m.Values == nil {
			r.gone = append(r.gone, m.ID) // deleted: another worker finished it
			continue
		}
		it, err := parseEntry(m.ID, m.Values)
		if err != nil {
			return fetched{err: err}
		}
		r.items = append(r.items, &held{id: m.ID, Item: it, claimed: i < claimed})
	}
	remaining, loaded, err := w.q.state(ctx)
	if err != nil {
		return fetched{err: err}
	}
	r.remaining, r.drained = remaining, loaded && remaining == 0
	return r
}

// scan takes the site's domain for this worker (no other worker scans a
// site of it meanwhile), scans it, and gives the domain back.
func (w *worker) scan(scanCtx, redisCtx context.Context, h *held) workerOutcome {
	o := workerOutcome{h: h}
	token := w.q.worker + " " + h.id
	ok, err := w.q.lease(scanCtx, h.Site, token)
	switch {
	case scanCtx.Err() != nil:
		o.canceled = true
		if ok {
			_ = w.q.release(redisCtx, h.Site, token)
		}
		return o
	case err != nil:
		o.leaseErr = err
		return o
	case !ok:
		o.deferred = true
		return o
	}
	o.outcome = scanOne(scanCtx, w.sc, pending{Item: h.Item})
	_ = w.q.release(redisCtx, h.Site, token) // or it lapses after the site's timeout
	return o
}

// resumeHeld reads back, at the start of a run, the entries this worker
// held when it last stopped (its pending entries in the group): the ones
// whose result is already in its results file (it stopped between writing
// and acknowledging) are acknowledged, not scanned again; the others are
// scanned first. It also counts the file's errors for the progress.
func (w *worker) resumeHeld(ctx context.Context, resultsPath string) (map[string]int, []*held, []string, error) {
	byLine := map[int]*held{}
	after := "0"
	var gone []string
	for {
		msgs, err := w.q.readOwn(ctx, after, 1000)
		if err != nil {
			return nil, nil, nil, err
		}
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs {
			after = m.ID
			if m.Values == nil {
				gone = append(gone, m.ID) // deleted: another worker finished it
				continue
			}
			it, err := parseEntry(m.ID, m.Values)
			if err != nil {
				return nil, nil, nil, err
			}
			byLine[it.Line] = &held{id: m.ID, Item: it}
		}
	}
	errCounts := map[string]int{}
	toAck := gone
	err := eachResult(resultsPath, func(r *Result) error {
		if r.Error != "" {
			errCounts[errorKey(r)]++
		}
		if h := byLine[r.Line]; h != nil {
			toAck = append(toAck, h.id)
			delete(byLine, r.Line)
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	pending := make([]*held, 0, len(byLine))
	for _, h := range byLine {
		pending = append(pending, h)
	}
	if n := len(pending) + len(toAck); n > 0 {
		w.notice("worker %s read back %d entries it held when it stopped: %d to scan, %d already written", w.q.worker, n, len(pending), len(toAck)-len(gone))
	}
	return errCounts, pending, toAck, nil
}
