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
	if err := checkWorkerConfig(cfg); err != nil {
		return nil, err
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
		if err := finishSurvey(ctx, q, cfg.Out, man); err != nil {
			return sum, err
		}
	} else if cfg.Progress != nil {
		cfg.Progress(Progress{Total: meta.Sites, Done: done, Resumed: done, Errors: map[string]int{}, Started: time.Now(), Final: true, Queue: true})
	}
	return sum, f.Close()
}

// checkWorkerConfig refuses the settings a queue's worker cannot run with.
func checkWorkerConfig(cfg Config) error {
	qc := cfg.Queue
	if !cfg.Shard.Whole() {
		return errors.New("--shard and --queue do not go together: a queue's workers share the whole list as they go")
	}
	if qc.ClaimIdle <= cfg.Timeout {
		return fmt.Errorf("the idle time before a worker's entries are taken over (%s) must exceed the per-site timeout (%s)", qc.ClaimIdle, cfg.Timeout)
	}
	if qc.Worker != "" {
		return CheckWorkerName(qc.Worker)
	}
	return nil
}

// finishSurvey records, once every site is done, the survey's end in
// Redis and in the worker's manifest, even when the worker is being
// stopped (an interrupt now has nothing to cut).
func finishSurvey(ctx context.Context, q *redisQueue, out string, man *Manifest) error {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), redisCallTimeout)
	workers, err := q.finish(fctx)
	cancel()
	if err != nil {
		return err
	}
	man.Workers = workers
	now := time.Now().UTC().Truncate(time.Second)
	man.Finished = &now
	return writeManifest(out, man)
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

// worker is the state of one run of a queue's worker: the driver of its
// scheduler.
type worker struct {
	cfg    Config
	q      *redisQueue
	sc     *engine.Scanner
	sum    *Summary
	notice func(string, ...any)

	s *scheduler[*held, workerOutcome]
	// ctx is the run's: reads go on under it after a failure stopped the
	// scans (what they bring is left for the next run).
	ctx context.Context
	// redisCtx is the Redis calls' context: it outlives the run's a
	// little, so that what was written is acknowledged on the way out.
	redisCtx context.Context
	// holding is every entry this worker read and has not acknowledged;
	// unsynced are the IDs of the results written and not yet synced,
	// toAck those synced and not yet acknowledged.
	holding           map[string]*held
	unsynced, toAck   []string
	capacity          int // how many entries reads keep queued or under scan
	reading, drained  bool
	acking, renewing  bool
	remaining         int64 // the sites of the queue not done yet (-1: not known)
	remaining0        int64 // the first figure Redis gave
	nextRead, nextAck time.Time
	lastClaim         time.Time
	lastRenew         time.Time // zero: the entries read back from this worker's pending list are renewed at once
	lastEmpty         bool
	redisDown         [callKinds]time.Time // per kind of call, the first of its failures in a row
	renewEvery        time.Duration
	claimEvery        time.Duration
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
	errCounts, pending, toAck, err := w.resumeHeld(ctx, resultsPath)
	if err != nil {
		return err
	}
	redisCtx, cancelRedis := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRedis()
	s := newScheduler[*held, workerOutcome](ctx, w.cfg, newResultWriter(f), w.sum, errCounts)
	s.tickEvery, s.progressEvery = 100*time.Millisecond, time.Second
	s.queue = pending
	w.s, w.ctx, w.redisCtx, w.toAck = s, ctx, redisCtx, toAck
	w.holding, w.capacity = map[string]*held{}, 2*w.cfg.Concurrency
	w.remaining, w.remaining0 = -1, -1
	for _, h := range pending {
		w.holding[h.id] = h
	}
	for _, id := range toAck {
		w.holding[id] = &held{id: id}
	}
	w.renewEvery = max(w.q.claimIdle/4, 250*time.Millisecond)
	w.claimEvery = max(w.q.claimIdle/2, time.Second)
	if err := s.run(ctx, w); err != nil {
		return err
	}
	if ctx.Err() != nil && !w.drained {
		w.sum.Interrupted = true
	}
	return nil
}

// redisFailed counts a failed call. Each kind of call keeps its own clock
// of failures in a row, so that one that keeps failing (a lease refused by
// a full Redis, an ack an ACL forbids) stops the worker even while the
// others succeed.
func (w *worker) redisFailed(k callKind, err error) {
	if w.redisDown[k].IsZero() {
		w.redisDown[k] = time.Now()
		w.notice("%v; retrying for up to %s", err, redisPatience)
	}
	if time.Since(w.redisDown[k]) > redisPatience && w.s.failure == nil {
		w.s.stop(fmt.Errorf("%v; stopped after %s of failed calls: run the same command to continue", err, redisPatience))
	}
}

func (w *worker) redisOK(k callKind) { w.redisDown[k] = time.Time{} }

// pump starts the Redis calls that are due: a read when the entries held
// run low, an ack of what is synced, a renewal of the entries held.
func (w *worker) pump(now time.Time) {
	s, q := w.s, w.q
	if !w.reading && !w.drained && now.After(w.nextRead) {
		if want := w.capacity - len(s.queue) - s.running; want > 0 && (want >= w.capacity/4 || len(s.queue) == 0) {
			claimNow := now.Sub(w.lastClaim) >= w.claimEvery || (w.lastEmpty && now.Sub(w.lastClaim) >= time.Second)
			if claimNow {
				w.lastClaim = now
			}
			w.reading = true
			idle := len(s.queue)+s.running == 0
			go func() {
				r := w.fetch(w.ctx, want, claimNow, idle)
				s.post(func() { w.read(r) })
			}()
		}
	}
	if !w.acking && len(w.toAck) > 0 && now.After(w.nextAck) {
		w.acking = true
		batch := append([]string(nil), w.toAck...)
		w.toAck = w.toAck[:0]
		go func() {
			err := q.ack(w.redisCtx, batch)
			s.post(func() { w.acked(batch, err) })
		}()
	}
	if !w.renewing && now.Sub(w.lastRenew) >= w.renewEvery && len(w.holding) > 0 {
		w.renewing, w.lastRenew = true, now
		ids := make([]string, 0, len(w.holding))
		for id := range w.holding {
			ids = append(ids, id)
		}
		go func() {
			err := q.renew(w.redisCtx, ids)
			s.post(func() { w.renewed(err) })
		}()
	}
}

// read takes a read's entries into the queue.
func (w *worker) read(r fetched) {
	s := w.s
	w.reading = false
	if r.err != nil {
		var qe *queueError
		switch {
		case s.stopping || errors.Is(r.err, context.Canceled):
		case errors.As(r.err, &qe):
			w.nextRead = time.Now().Add(time.Second)
			w.redisFailed(callRead, r.err)
		default:
			s.stop(r.err) // an entry agentready did not write
		}
		return
	}
	w.redisOK(callRead)
	if w.lastEmpty = len(r.items) == 0; w.lastEmpty {
		w.nextRead = time.Now().Add(250 * time.Millisecond)
	}
	if w.remaining = r.remaining; w.remaining0 < 0 {
		w.remaining0 = w.remaining
	}
	if s.stopping {
		return // read after the stop: the next run reads them back
	}
	for _, id := range r.gone {
		if w.holding[id] == nil {
			w.holding[id] = &held{id: id}
			w.toAck = append(w.toAck, id)
		}
	}
	takenOver := 0
	for _, h := range r.items {
		if w.holding[h.id] == nil {
			w.holding[h.id] = h
			s.add(h)
			if h.claimed {
				takenOver++
			}
		}
	}
	if takenOver > 0 {
		if w.sum.Queue.TakenOver == 0 {
			w.notice("taking over the entries other workers have held untouched for %s (stopped or killed workers)", w.q.claimIdle)
		}
		w.sum.Queue.TakenOver += takenOver
	}
	w.drained = r.drained
}

func (w *worker) acked(ids []string, err error) {
	w.acking = false
	if err != nil {
		w.toAck = append(w.toAck, ids...)
		w.nextAck = time.Now().Add(time.Second)
		w.redisFailed(callAck, err)
		return
	}
	w.redisOK(callAck)
	w.nextAck = time.Time{}
	for _, id := range ids {
		delete(w.holding, id)
	}
}

func (w *worker) renewed(err error) {
	w.renewing = false
	if err != nil {
		w.redisFailed(callRenew, err)
	} else {
		w.redisOK(callRenew)
	}
}

// done writes a scan's result, or puts the entry back in the queue, for
// later, when another worker holds its domain.
func (w *worker) done(h *held, o workerOutcome) {
	s := w.s
	switch {
	case o.canceled:
		return
	case o.leaseErr != nil:
		w.redisFailed(callLease, o.leaseErr)
		fallthrough
	case o.deferred:
		if o.leaseErr == nil {
			w.redisOK(callLease) // the lease was asked for, and held by another worker
		}
		h.backoff = min(max(2*h.backoff, 250*time.Millisecond), 2*time.Second)
		h.notBefore = time.Now().Add(h.backoff)
		s.add(h)
		return
	}
	w.redisOK(callLease)
	if err := s.out.write(o.line); err != nil {
		s.stop(err)
		return
	}
	w.unsynced = append(w.unsynced, h.id)
	if o.errKey != "" {
		s.errCounts[o.errKey]++
	}
	w.sum.Done++
	s.sync()
}

// synced moves the results on disk to the entries to acknowledge; after
// the loop, it acknowledges them at once, or the next run reads them back
// from this worker's pending entries.
func (w *worker) synced(last bool) {
	if w.s.out.unsynced == 0 && len(w.unsynced) > 0 {
		w.toAck = append(w.toAck, w.unsynced...)
		w.unsynced = w.unsynced[:0]
	}
	if last && len(w.toAck) > 0 {
		actx, cancel := context.WithTimeout(w.redisCtx, 5*time.Second)
		_ = w.q.ack(actx, w.toAck)
		cancel()
	}
}

func (w *worker) input() <-chan Item { return nil }
func (w *worker) receive(Item, bool) {}
func (w *worker) idle() bool         { return !w.reading && !w.acking && !w.renewing }
func (w *worker) exhausted() bool    { return w.drained && len(w.holding) == 0 }

func (w *worker) progress(p *Progress) {
	p.Queue, p.Remaining, p.RemainingAtStart = true, w.remaining, w.remaining0
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
func (w *worker) scan(scanCtx context.Context, h *held) workerOutcome {
	var o workerOutcome
	token := w.q.worker + " " + h.id
	ok, err := w.q.lease(scanCtx, h.Site, token)
	switch {
	case scanCtx.Err() != nil:
		o.canceled = true
		if ok {
			_ = w.q.release(w.redisCtx, h.Site, token)
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
	_ = w.q.release(w.redisCtx, h.Site, token) // or it lapses after the site's timeout
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
