package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/origin/store"
	"github.com/agentready/agentready/webhook"
)

// Run claims and runs due scans and deliveries until ctx is done, then waits
// for the work in hand: a run whose scan was cut short is handed back to the
// schedule, a delivery attempt in flight finishes (bounded by Timeout).
func (s *Service) Run(ctx context.Context) {
	s.wg.Add(2)
	go s.loop(ctx, make(chan struct{}, s.cfg.Workers), s.runKick, nil, s.claimRuns)
	go s.loop(ctx, s.sendSlots, s.kick, s.sendFreed, s.claimDeliveries)
	s.wg.Wait()
}

// job is one claimed piece of work.
type job func(ctx context.Context)

// loop keeps up to cap(slots) jobs going, each holding a token of slots
// while it runs: it claims as many as are free, and asks again when one
// finishes, when kicked, or after a poll. Others may hold tokens too (a
// run sending its own deliveries holds sender tokens, and signals freed
// when it gives one back).
func (s *Service) loop(ctx context.Context, slots chan struct{}, kick, freed chan struct{}, claim func(ctx context.Context, free int) []job) {
	defer s.wg.Done()
	if freed == nil {
		freed = make(chan struct{}, 1)
	}
	var running sync.WaitGroup
	timer := time.NewTimer(s.cfg.Poll)
	defer timer.Stop()
	for {
		if free := cap(slots) - len(slots); ctx.Err() == nil && free > 0 {
			jobs := claim(ctx, free)
			for _, j := range jobs {
				// Free when counted; if a run took the token meanwhile for
				// its own delivery, that one ends soon.
				slots <- struct{}{}
				running.Add(1)
				go func() {
					defer running.Done()
					defer func() {
						<-slots
						nudge(freed)
					}()
					j(ctx)
				}()
			}
			if len(jobs) > 0 && len(jobs) < free {
				continue // fewer than asked: ask once more, more may have come due
			}
		}
		timer.Reset(s.cfg.Poll)
		select {
		case <-ctx.Done():
			running.Wait()
			return
		case <-freed:
		case <-kick:
		case <-timer.C:
		}
	}
}

// storeCtx bounds a store call made on behalf of claimed work; it survives
// the loop's cancellation so that work cut short is still handed back.
func storeCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
}

func (s *Service) claimRuns(ctx context.Context, free int) []job {
	claims, err := s.deps.Store.ClaimRuns(ctx, s.cfg.Now(), s.cfg.RunLease, free)
	if err != nil {
		if ctx.Err() == nil {
			slog.Warn("monitors: claiming due runs failed; retrying at the next poll", "err", err)
		}
		return nil
	}
	jobs := make([]job, len(claims))
	for i, c := range claims {
		jobs[i] = func(ctx context.Context) { s.runOne(ctx, c) }
	}
	return jobs
}

// nextRun keeps a monitor on its cadence: the slot after due (a run late by
// less than a cadence still gets its next slot, at once if it has passed),
// unless the schedule fell more than a whole cadence behind (the service
// was down): the run just done then stands for every missed slot, and the
// next is the first slot after now.
func nextRun(due time.Time, interval time.Duration, now time.Time) time.Time {
	next := due.Add(interval)
	if now.Sub(next) > interval {
		next = due.Add((now.Sub(due)/interval + 1) * interval)
	}
	return next
}

// scan scans m's site for its run due at due, or takes a scan of it this
// origin began at or after due and after m's previous run (see
// recentScans).
func (s *Service) scan(ctx context.Context, m store.Monitor, due time.Time) (recentScan, error) {
	began := s.cfg.Now()
	if sc, ok := s.recent.get(m.URL, due, m.Run.LastRun, began); ok {
		return sc, nil
	}
	res, raw, err := s.deps.Scan(ctx, m.URL)
	if err != nil {
		return recentScan{}, err
	}
	sc := recentScan{began: began, res: slim(res), raw: raw}
	s.recent.put(m.URL, sc, s.cfg.Now())
	return sc, nil
}

// runOne scans a claimed monitor and commits the outcome with its events.
// The claim read the monitor.
func (s *Service) runOne(ctx context.Context, c store.RunClaim) {
	m := c.Monitor
	res, err := s.scan(ctx, m, c.Due)
	now := s.cfg.Now()
	if err != nil && (errors.Is(err, ErrTryLater) || ctx.Err() != nil) {
		s.release(ctx, c, 5*time.Second)
		return
	}
	st := m.Run
	st.Runs++
	st.LastRun, st.LastScheduled = now.UTC(), c.Due
	next := nextRun(c.Due, m.Interval, now)
	wctx, cancel := storeCtx(ctx)
	defer cancel()
	if err != nil {
		// The site did not answer: that is this run's outcome. No event
		// carries it (both event types describe a report); GET shows it.
		st.Error = err.Error()
		s.complete(wctx, c, st, next, nil, nil)
		return
	}
	st.Error = ""
	reportID, err := timeID("rep", now)
	if err != nil {
		s.release(ctx, c, 5*time.Second)
		return
	}
	prev := st
	sum := res.res.Summary()
	st.Baseline, st.Score, st.Level, st.Grade, st.LevelName, st.ReportID = true, sum.Score, sum.Level, sum.Grade, sum.LevelName, reportID
	st.ScannedAt, st.Checks = sum.Timestamp, sum.Checks
	data := webhook.Data{URL: m.URL, Score: st.Score, Grade: st.Grade, Level: st.Level, LevelName: st.LevelName,
		Previous: previousOf(prev, res.res), ReportURL: ReportURL(m, reportID), ScheduledFor: c.Due}
	var deliveries []store.Delivery
	for _, typ := range m.Events {
		if typ == webhook.EventScoreChanged && (!prev.Baseline || (prev.Score == st.Score && prev.Level == st.Level)) {
			continue // the first run sets the baseline; after it, only a move is news
		}
		d, err := s.delivery(m, typ, data, now)
		if err != nil {
			s.release(ctx, c, 5*time.Second)
			return
		}
		deliveries = append(deliveries, d)
	}
	s.complete(wctx, c, st, next, res.raw, deliveries)
}

// previousOf is the events' previous for a run whose scan is now, after a
// monitor's runs learned prev: nil for the first run (the baseline); the
// lists null when prev holds no checks to compare (a run recorded before
// runs kept them).
func previousOf(prev store.RunState, now *report.Result) *webhook.Previous {
	if !prev.Baseline {
		return nil
	}
	p := &webhook.Previous{Score: prev.Score, Level: prev.Level, Timestamp: prev.ScannedAt, Grade: prev.Grade, LevelName: prev.LevelName}
	if p.Timestamp.IsZero() {
		p.Timestamp = prev.LastRun
	}
	if prev.Checks != nil {
		d := report.Compare(report.Summary{Checks: prev.Checks}, now)
		p.NewlyPassing, p.NewlyFailing, p.Changed = changes(d.NewlyPassing), changes(d.NewlyFailing), changes(d.Changed)
	}
	return p
}

// changes is cs as events carry them (never nil: an empty list is [], not
// null).
func changes(cs []report.Change) []webhook.Change {
	out := make([]webhook.Change, len(cs))
	for i, c := range cs {
		out[i] = webhook.Change{ID: c.ID, Name: c.Name, From: string(c.From), To: string(c.To), Message: c.Message}
	}
	return out
}

// complete records a run. When senders are free for all its deliveries,
// they are written claimed by this origin and sent at once (one store
// write fewer than queueing them for the senders' claim); otherwise they
// are queued.
func (s *Service) complete(ctx context.Context, c store.RunClaim, st store.RunState, next time.Time, raw []byte, deliveries []store.Delivery) {
	taken := 0
	for range deliveries {
		select {
		case s.sendSlots <- struct{}{}:
			taken++
			continue
		default:
		}
		break
	}
	var claimFor time.Duration
	if taken > 0 && taken == len(deliveries) {
		claimFor = s.cfg.deliveryLease()
	} else {
		s.giveBack(taken)
		taken = 0
	}
	claims, err := s.deps.Store.CompleteRun(ctx, c, st, next, raw, s.cfg.ReportTTL, deliveries, claimFor)
	s.giveBack(taken - len(claims))
	for _, dc := range claims {
		s.wg.Add(1) // Run waits for these too: the run loop, still running, holds it above zero
		go func() {
			defer s.wg.Done()
			defer s.giveBack(1)
			s.deliverOne(ctx, dc)
		}()
	}
	switch {
	case err == nil:
		if len(deliveries) > 0 && claimFor == 0 {
			nudge(s.kick)
		}
	case errors.Is(err, store.ErrLeaseLost), errors.Is(err, store.ErrNotFound):
		// Another origin took the run over (this one was too slow), or the
		// monitor was deleted: the other outcome stands.
	default:
		// Not recorded: the lease runs out and the run is done again.
		slog.Warn("monitors: recording a run failed; it will run again when its lease ends", "monitor", c.MonitorID, "err", err)
	}
}

// giveBack returns n sender tokens taken outside the sender loop.
func (s *Service) giveBack(n int) {
	for range n {
		<-s.sendSlots
		nudge(s.sendFreed)
	}
}

func (s *Service) release(ctx context.Context, c store.RunClaim, after time.Duration) {
	wctx, cancel := storeCtx(ctx)
	defer cancel()
	_ = s.deps.Store.ReleaseRun(wctx, c, s.cfg.Now().Add(after))
}

func (s *Service) delivery(m store.Monitor, typ string, data webhook.Data, now time.Time) (store.Delivery, error) {
	id, err := timeID("evt", now)
	if err != nil {
		return store.Delivery{}, err
	}
	body, err := json.Marshal(webhook.Event{ID: id, Type: typ, CreatedAt: now.UTC(), MonitorID: m.ID, Data: data})
	if err != nil {
		return store.Delivery{}, err
	}
	return store.Delivery{ID: id, MonitorID: m.ID, Type: typ, Payload: body, Created: now.UTC(), Status: store.DeliveryPending,
		NextAttempt: now.UTC(), Scheduled: true}, nil
}

func (s *Service) claimDeliveries(ctx context.Context, free int) []job {
	claims, err := s.deps.Store.ClaimDeliveries(ctx, s.cfg.Now(), s.cfg.deliveryLease(), free)
	if err != nil && ctx.Err() == nil {
		slog.Warn("monitors: claiming due deliveries failed; retrying at the next poll", "err", err)
	}
	jobs := make([]job, len(claims))
	for i, c := range claims {
		jobs[i] = func(ctx context.Context) { s.deliverOne(ctx, c) }
	}
	return jobs
}

// deliverOne makes one attempt of a claimed delivery and records it. The
// attempt is not cut short by shutdown: it is bounded by Timeout, and an
// attempt abandoned midway would be sent again by another origin anyway.
func (s *Service) deliverOne(ctx context.Context, c store.DeliveryClaim) {
	ctx = context.WithoutCancel(ctx)
	a := store.Attempt{At: s.cfg.Now(), MaxFailures: s.cfg.MaxFailures}
	if c.Cancel != "" {
		a.Canceled = c.Cancel
	} else {
		out := s.sender.send(ctx, c.Monitor, c.Delivery, a.At)
		a.Code, a.Error, a.Latency, a.Delivered, a.Gone = out.code, out.err, out.latency, out.delivered(), out.code == 410
		if !a.Delivered && !a.Gone {
			if n := c.Delivery.Attempts; n < len(s.cfg.Retries) {
				wait := s.jittered(s.cfg.Retries[n])
				if out.retryAfter > wait && out.retryAfter <= time.Hour {
					wait = out.retryAfter
				}
				a.RetryAt = s.cfg.Now().Add(wait)
			}
		}
	}
	wctx, cancel := storeCtx(ctx)
	defer cancel()
	if _, err := s.deps.Store.FinishAttempt(wctx, c, a); err != nil && !errors.Is(err, store.ErrLeaseLost) && !errors.Is(err, store.ErrNotFound) {
		slog.Warn("monitors: recording a delivery attempt failed; it will be attempted again when its lease ends", "delivery", c.Delivery.ID, "err", err)
	}
}
