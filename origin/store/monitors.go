package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Monitor is a scheduled re-scan of URL with signed webhook deliveries to
// CallbackURL. Its configuration never changes after Create; what the runs
// and the deliveries learn lives beside it (Run, Delivery), each written by
// its own writer, so neither can overwrite the other's news.
type Monitor struct {
	ID          string        `json:"id"`
	URL         string        `json:"url"`
	CallbackURL string        `json:"callback_url"`
	Cadence     string        `json:"cadence"`  // as the caller gave it ("15m", "daily")
	Interval    time.Duration `json:"interval"` // what Cadence means
	Events      []string      `json:"events"`
	Secret      string        `json:"secret"`
	// Owner is the caller the monitor is bound to (API key or token); empty:
	// whoever holds the id. Quota is the caller whose allowance of monitors
	// it counts against (for an anonymous caller, the client address).
	Owner   string    `json:"owner,omitempty"`
	Quota   string    `json:"quota"`
	Created time.Time `json:"created"`
	BaseURL string    `json:"base_url"` // the public base URL it was created on: report links are built on it

	Run      RunState      `json:"-"`
	Delivery DeliveryState `json:"-"`
	NextRun  time.Time     `json:"-"` // zero once disabled, and while a run is claimed
	Running  bool          `json:"-"` // an origin holds a claim on a run right now
}

// RunState is what the scheduled runs learned.
type RunState struct {
	Runs          int64     `json:"runs"`
	LastRun       time.Time `json:"last_run,omitzero"`       // when the last run finished
	LastScheduled time.Time `json:"last_scheduled,omitzero"` // the due time it ran for
	Baseline      bool      `json:"baseline"`                // a score is known (the first run sets it)
	Score         int       `json:"score"`
	Level         int       `json:"level"`
	Grade         string    `json:"grade,omitempty"`
	LevelName     string    `json:"level_name,omitempty"`
	ReportID      string    `json:"report_id,omitempty"`
	Error         string    `json:"error,omitempty"` // why the last run produced no report
}

// DeliveryState is what the deliveries learned.
type DeliveryState struct {
	Last                *AttemptSummary `json:"last,omitempty"`
	ConsecutiveFailures int             `json:"consecutive_failures"`
	Disabled            bool            `json:"disabled"`
	DisabledReason      string          `json:"disabled_reason,omitempty"`
	DisabledAt          time.Time       `json:"disabled_at,omitzero"`
}

// AttemptSummary is one delivery attempt as the monitor remembers it.
type AttemptSummary struct {
	DeliveryID string    `json:"delivery_id"`
	Status     string    `json:"status"` // delivered, retrying, failed
	Code       int       `json:"code,omitempty"`
	Error      string    `json:"error,omitempty"`
	At         time.Time `json:"at"`
	LatencyMS  int64     `json:"latency_ms"`
}

// Delivery states.
const (
	DeliveryPending   = "pending"   // waiting for its next attempt
	DeliveryDelivered = "delivered" // a 2xx answered
	DeliveryFailed    = "failed"    // retries exhausted, or the callback answered 410
	DeliveryCanceled  = "canceled"  // its monitor was deleted or disabled first
)

// Delivery is one event in the outbox. ID is the event's id and the
// webhook-id header: it stays the same across retries and redeliveries.
type Delivery struct {
	ID          string          `json:"id"`
	MonitorID   string          `json:"monitor_id"`
	Type        string          `json:"type"`
	Payload     json.RawMessage `json:"payload"`
	Created     time.Time       `json:"created"`
	Status      string          `json:"status"`
	Attempts    int             `json:"attempts"`
	NextAttempt time.Time       `json:"next_attempt,omitzero"`
	LastAttempt time.Time       `json:"last_attempt,omitzero"`
	LastCode    int             `json:"last_code,omitempty"`
	LastError   string          `json:"last_error,omitempty"`
	LatencyMS   int64           `json:"latency_ms,omitempty"`
	// Scheduled: produced by a scheduled run (a redelivery is not), so its
	// first attempt's failure counts toward disabling the monitor.
	Scheduled bool `json:"scheduled"`
}

// RunClaim is a due run held by one origin until Due+lease.
type RunClaim struct {
	MonitorID string
	Due       time.Time
	Token     string
}

// DeliveryClaim is a due delivery held by one origin, with what sending it needs.
type DeliveryClaim struct {
	Delivery Delivery
	Token    string
	Monitor  Monitor
	// Cancel is set when the delivery must not be sent (its monitor is gone
	// or disabled); FinishAttempt with Attempt.Canceled closes it.
	Cancel string
}

// Attempt is the outcome of one delivery attempt.
type Attempt struct {
	At        time.Time
	Code      int
	Error     string
	Latency   time.Duration
	Delivered bool      // a 2xx answered
	RetryAt   time.Time // when not delivered: the next attempt; zero: no more
	Gone      bool      // the callback answered 410 Gone: disable the monitor
	Canceled  string    // not attempted, for this reason
	// MaxFailures disables the monitor once this many scheduled deliveries
	// in a row fail their first attempt (0: never).
	MaxFailures int
}

// Errors of the monitor store.
var (
	ErrQuota    = errors.New("the caller has as many monitors as its tier allows")
	ErrDisabled = errors.New("monitor disabled")
	ErrConflict = errors.New("the state changed under this write too often; retry")
	ErrInFlight = errors.New("the delivery is being attempted right now")
)

// Monitors stores monitors, their schedule and their webhook outbox.
type Monitors interface {
	// Create stores m and schedules its first run, unless m.Quota already
	// has max monitors (ErrQuota).
	Create(ctx context.Context, m Monitor, firstRun time.Time, max int) error
	Get(ctx context.Context, id string) (Monitor, error)
	// Delete removes a monitor, its schedule and its pending deliveries:
	// after it returns no origin starts another run or attempt for it.
	Delete(ctx context.Context, id string) error

	// ClaimRuns takes up to limit runs due at now, each held for lease.
	ClaimRuns(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]RunClaim, error)
	// CompleteRun records a run: its state, its report (kept for reportTTL),
	// its next run, and its deliveries, all in one atomic write, and only
	// while c is still held (ErrLeaseLost otherwise; ErrNotFound when the
	// monitor was deleted meanwhile).
	CompleteRun(ctx context.Context, c RunClaim, st RunState, next time.Time, report []byte, reportTTL time.Duration, deliveries []Delivery) error
	// ReleaseRun gives a claimed run back to be claimed again at at.
	ReleaseRun(ctx context.Context, c RunClaim, at time.Time) error
	// Report is a run's report as CompleteRun stored it.
	Report(ctx context.Context, monitorID, reportID string) ([]byte, error)

	// ClaimDeliveries takes up to limit deliveries due at now, each held for lease.
	ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]DeliveryClaim, error)
	// FinishAttempt records an attempt's outcome on the delivery and its
	// monitor (disabling it on 410 or too many failures; disabled reports that).
	FinishAttempt(ctx context.Context, c DeliveryClaim, a Attempt) (disabled bool, err error)
	// Deliveries lists a monitor's recent deliveries, newest first.
	Deliveries(ctx context.Context, monitorID string, limit int) ([]Delivery, error)
	// Redeliver queues a delivery again for at, keeping its id.
	Redeliver(ctx context.Context, monitorID, deliveryID string, at time.Time) (Delivery, error)
}

// Keys of the monitor store.
const (
	keyMonitor       = "mon:"       // + id: the configuration
	keyRunState      = "monrun:"    // + id: RunState
	keyDeliveryState = "mondlv:"    // + id: DeliveryState
	keyIndex         = "monidx:"    // + id: sorted set of its deliveries by creation
	keyReport        = "monreport:" // + id + ":" + report id
	keyDelivery      = "dlv:"       // + delivery id
	keyQuota         = "monquota:"  // + quota: sorted set of its monitors
	keyLease         = "lease:"
	keyRunLease      = keyLease + "run:"
	keyDeliveryLease = keyLease + "dlv:"
	setRuns          = "sched:runs"
	setDeliveries    = "sched:deliveries"
)

// KeptDeliveries is how many deliveries a monitor's list keeps; older ones
// are forgotten as new ones are written.
const KeptDeliveries = 100

// finishedDeliveryTTL keeps a finished delivery readable (and redeliverable)
// for a week after its last attempt.
const finishedDeliveryTTL = 7 * 24 * time.Hour

// casTries bounds optimistic retries of one write; conflicts mean another
// origin wrote the same monitor in between, which is rare.
const casTries = 16

type monitors struct{ t txkv }

func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (s monitors) Create(ctx context.Context, m Monitor, first time.Time, max int) error {
	cfg, err := json.Marshal(m)
	if err != nil {
		return err
	}
	conds := []cond{{kind: condAbsent, key: keyMonitor + m.ID}}
	if max > 0 {
		conds = append(conds, cond{kind: condZCardLT, key: keyQuota + m.Quota, n: max})
	}
	ok, err := s.t.commit(ctx, conds, []op{
		{kind: opSet, key: keyMonitor + m.ID, val: cfg},
		{kind: opZAdd, key: setRuns, member: m.ID, score: ms(first)},
		{kind: opZAdd, key: keyQuota + m.Quota, member: m.ID, score: ms(m.Created)},
	})
	if err != nil || ok {
		return err
	}
	if got, err := s.t.mget(ctx, keyMonitor+m.ID); err == nil && got[0] != nil {
		return fmt.Errorf("monitor %s exists", m.ID)
	}
	return ErrQuota
}

// read returns a monitor with its state and the raw delivery state (for a
// later compare-and-set).
func (s monitors) read(ctx context.Context, id string) (Monitor, []byte, error) {
	vals, err := s.t.mget(ctx, keyMonitor+id, keyRunState+id, keyDeliveryState+id)
	if err != nil {
		return Monitor{}, nil, err
	}
	if vals[0] == nil {
		return Monitor{}, nil, ErrNotFound
	}
	var m Monitor
	if err := json.Unmarshal(vals[0], &m); err != nil {
		return Monitor{}, nil, fmt.Errorf("monitor %s: corrupt record: %w", id, err)
	}
	if vals[1] != nil {
		_ = json.Unmarshal(vals[1], &m.Run)
	}
	if vals[2] != nil {
		_ = json.Unmarshal(vals[2], &m.Delivery)
	}
	return m, vals[2], nil
}

func (s monitors) Get(ctx context.Context, id string) (Monitor, error) {
	m, _, err := s.read(ctx, id)
	if err != nil {
		return m, err
	}
	lease, err := s.t.mget(ctx, keyRunLease+id)
	if err != nil {
		return m, err
	}
	// While a run is claimed its schedule entry holds the lease's end, not
	// a next run: say it is running instead.
	m.Running = leaseHeld(lease[0])
	if !m.Delivery.Disabled && !m.Running {
		if at, ok, err := s.t.zscore(ctx, setRuns, id); err != nil {
			return m, err
		} else if ok {
			m.NextRun = time.UnixMilli(at).UTC()
		}
	}
	return m, nil
}

func (s monitors) Delete(ctx context.Context, id string) error {
	for range casTries {
		m, _, err := s.read(ctx, id)
		if err != nil {
			return err
		}
		idx, err := s.t.zrange(ctx, keyIndex+id, false, KeptDeliveries*2)
		if err != nil {
			return err
		}
		ops := []op{
			{kind: opDel, key: keyMonitor + id}, {kind: opDel, key: keyRunState + id},
			{kind: opDel, key: keyDeliveryState + id}, {kind: opDel, key: keyRunLease + id},
			{kind: opDel, key: keyIndex + id},
			{kind: opZRem, key: setRuns, member: id},
			{kind: opZRem, key: keyQuota + m.Quota, member: id},
		}
		for _, did := range idx {
			ops = append(ops, op{kind: opZRem, key: setDeliveries, member: did},
				op{kind: opDel, key: keyDelivery + did}, op{kind: opDel, key: keyDeliveryLease + did})
		}
		// The index may have grown since it was read: condition on its size.
		ok, err := s.t.commit(ctx, []cond{{kind: condPresent, key: keyMonitor + id}, {kind: condZCardLT, key: keyIndex + id, n: len(idx) + 1}}, ops)
		if err != nil || ok {
			return err
		}
	}
	return ErrConflict
}

func (s monitors) ClaimRuns(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]RunClaim, error) {
	if lease <= 0 {
		return nil, errors.New("claim lease must be positive")
	}
	due, err := s.t.claimDue(ctx, setRuns, keyRunLease, ms(now), ms(now.Add(lease)), newToken(), limit)
	if err != nil {
		return nil, err
	}
	out := make([]RunClaim, len(due))
	for i, d := range due {
		out[i] = RunClaim{MonitorID: d.member, Due: time.UnixMilli(d.score).UTC(), Token: d.lease}
	}
	return out, nil
}

func (s monitors) CompleteRun(ctx context.Context, c RunClaim, st RunState, next time.Time, report []byte, reportTTL time.Duration, deliveries []Delivery) error {
	stateJSON, err := json.Marshal(st)
	if err != nil {
		return err
	}
	for range casTries {
		vals, err := s.t.mget(ctx, keyRunLease+c.MonitorID, keyMonitor+c.MonitorID, keyDeliveryState+c.MonitorID)
		if err != nil {
			return err
		}
		if string(vals[0]) != c.Token {
			return ErrLeaseLost
		}
		if vals[1] == nil {
			return ErrNotFound
		}
		var ds DeliveryState
		if vals[2] != nil {
			_ = json.Unmarshal(vals[2], &ds)
		}
		ops := []op{
			{kind: opSet, key: keyRunState + c.MonitorID, val: stateJSON},
			{kind: opDel, key: keyRunLease + c.MonitorID},
		}
		if ds.Disabled {
			// Disabled while this run was scanning: record what it saw, send nothing.
			deliveries = nil
		} else {
			ops = append(ops, op{kind: opZAdd, key: setRuns, member: c.MonitorID, score: ms(next)})
		}
		if report != nil && st.ReportID != "" {
			ops = append(ops, op{kind: opSet, key: keyReport + c.MonitorID + ":" + st.ReportID, val: report, ttl: reportTTL})
		}
		trim, err := s.trimIndex(ctx, c.MonitorID, len(deliveries))
		if err != nil {
			return err
		}
		ops = append(ops, trim...)
		for _, d := range deliveries {
			b, err := json.Marshal(d)
			if err != nil {
				return err
			}
			ops = append(ops,
				op{kind: opSet, key: keyDelivery + d.ID, val: b},
				op{kind: opZAdd, key: setDeliveries, member: d.ID, score: ms(d.NextAttempt)},
				op{kind: opZAdd, key: keyIndex + c.MonitorID, member: d.ID, score: ms(d.Created)})
		}
		ok, err := s.t.commit(ctx, []cond{
			{kind: condEq, key: keyRunLease + c.MonitorID, val: []byte(c.Token)},
			{kind: condPresent, key: keyMonitor + c.MonitorID},
			eqOrAbsent(keyDeliveryState+c.MonitorID, vals[2]),
		}, ops)
		if err != nil || ok {
			return err
		}
	}
	return ErrConflict
}

// trimIndex returns the writes that forget a monitor's oldest deliveries so
// that adding n more keeps KeptDeliveries.
func (s monitors) trimIndex(ctx context.Context, id string, n int) ([]op, error) {
	if n == 0 {
		return nil, nil
	}
	count, err := s.t.zcard(ctx, keyIndex+id)
	if err != nil || count+n <= KeptDeliveries {
		return nil, err
	}
	old, err := s.t.zrange(ctx, keyIndex+id, false, count+n-KeptDeliveries)
	if err != nil {
		return nil, err
	}
	var ops []op
	for _, did := range old {
		ops = append(ops, op{kind: opZRem, key: keyIndex + id, member: did},
			op{kind: opZRem, key: setDeliveries, member: did},
			op{kind: opDel, key: keyDelivery + did}, op{kind: opDel, key: keyDeliveryLease + did})
	}
	return ops, nil
}

func (s monitors) ReleaseRun(ctx context.Context, c RunClaim, at time.Time) error {
	ok, err := s.t.commit(ctx, []cond{
		{kind: condEq, key: keyRunLease + c.MonitorID, val: []byte(c.Token)},
		{kind: condPresent, key: keyMonitor + c.MonitorID},
	}, []op{
		// Handed back, not finished: the next claim keeps this run's due time.
		{kind: opSet, key: keyRunLease + c.MonitorID, val: []byte(releasedLease + "|" + strconv.FormatInt(ms(c.Due), 10))},
		{kind: opZAdd, key: setRuns, member: c.MonitorID, score: ms(at)},
	})
	if err == nil && !ok {
		return ErrLeaseLost
	}
	return err
}

func (s monitors) Report(ctx context.Context, monitorID, reportID string) ([]byte, error) {
	vals, err := s.t.mget(ctx, keyReport+monitorID+":"+reportID)
	if err != nil {
		return nil, err
	}
	if vals[0] == nil {
		return nil, ErrNotFound
	}
	return vals[0], nil
}

func (s monitors) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]DeliveryClaim, error) {
	if lease <= 0 {
		return nil, errors.New("claim lease must be positive")
	}
	due, err := s.t.claimDue(ctx, setDeliveries, keyDeliveryLease, ms(now), ms(now.Add(lease)), newToken(), limit)
	if err != nil || len(due) == 0 {
		return nil, err
	}
	out := make([]DeliveryClaim, 0, len(due))
	for _, d := range due {
		c := DeliveryClaim{Token: d.lease}
		vals, err := s.t.mget(ctx, keyDelivery+d.member)
		if err != nil {
			return out, err
		}
		if vals[0] == nil || json.Unmarshal(vals[0], &c.Delivery) != nil {
			// Forgotten (trimmed) under the claim: nothing to send.
			_, _ = s.t.commit(ctx, nil, []op{{kind: opZRem, key: setDeliveries, member: d.member}, {kind: opDel, key: keyDeliveryLease + d.member}})
			continue
		}
		m, _, err := s.read(ctx, c.Delivery.MonitorID)
		switch {
		case errors.Is(err, ErrNotFound):
			c.Cancel = "the monitor was deleted"
		case err != nil:
			return out, err
		case m.Delivery.Disabled:
			c.Cancel = "the monitor is disabled: " + m.Delivery.DisabledReason
		}
		c.Monitor = m
		out = append(out, c)
	}
	return out, nil
}

func (s monitors) FinishAttempt(ctx context.Context, c DeliveryClaim, a Attempt) (bool, error) {
	for range casTries {
		vals, err := s.t.mget(ctx, keyDeliveryLease+c.Delivery.ID, keyDelivery+c.Delivery.ID, keyMonitor+c.Delivery.MonitorID, keyDeliveryState+c.Delivery.MonitorID)
		if err != nil {
			return false, err
		}
		if string(vals[0]) != c.Token {
			return false, ErrLeaseLost
		}
		if vals[1] == nil {
			return false, ErrNotFound
		}
		var d Delivery
		if err := json.Unmarshal(vals[1], &d); err != nil {
			return false, err
		}
		conds := []cond{
			{kind: condEq, key: keyDeliveryLease + d.ID, val: []byte(c.Token)},
			{kind: condEq, key: keyDelivery + d.ID, val: vals[1]},
		}
		ops := []op{{kind: opDel, key: keyDeliveryLease + d.ID}}
		disabled := false
		if a.Canceled != "" {
			d.Status, d.LastError, d.NextAttempt = DeliveryCanceled, a.Canceled, time.Time{}
		} else {
			d.Attempts++
			d.LastAttempt, d.LastCode, d.LastError, d.LatencyMS = a.At.UTC(), a.Code, a.Error, a.Latency.Milliseconds()
			summary := &AttemptSummary{DeliveryID: d.ID, Code: a.Code, Error: a.Error, At: d.LastAttempt, LatencyMS: d.LatencyMS}
			switch {
			case a.Delivered:
				d.Status, d.NextAttempt, summary.Status = DeliveryDelivered, time.Time{}, DeliveryDelivered
			case !a.RetryAt.IsZero() && !a.Gone:
				d.Status, d.NextAttempt, summary.Status = DeliveryPending, a.RetryAt.UTC(), "retrying"
			default:
				d.Status, d.NextAttempt, summary.Status = DeliveryFailed, time.Time{}, DeliveryFailed
			}
			if vals[2] != nil {
				var ds DeliveryState
				if vals[3] != nil {
					_ = json.Unmarshal(vals[3], &ds)
				}
				wasDisabled := ds.Disabled
				ds.Last = summary
				switch {
				case a.Delivered:
					ds.ConsecutiveFailures = 0
				case d.Scheduled && d.Attempts == 1:
					ds.ConsecutiveFailures++
				}
				switch {
				case ds.Disabled:
				case a.Gone:
					ds.Disabled, ds.DisabledReason = true, "the callback answered 410 Gone"
				case a.MaxFailures > 0 && ds.ConsecutiveFailures >= a.MaxFailures:
					ds.Disabled, ds.DisabledReason = true, fmt.Sprintf("%d scheduled deliveries in a row failed; check the callback, then create a new monitor", ds.ConsecutiveFailures)
				}
				if ds.Disabled && !wasDisabled {
					ds.DisabledAt, disabled = a.At.UTC(), true
					ops = append(ops, op{kind: opZRem, key: setRuns, member: d.MonitorID})
					if d.Status == DeliveryPending {
						d.Status, d.NextAttempt = DeliveryCanceled, time.Time{}
					}
				}
				b, _ := json.Marshal(ds)
				conds = append(conds, cond{kind: condPresent, key: keyMonitor + d.MonitorID}, eqOrAbsent(keyDeliveryState+d.MonitorID, vals[3]))
				ops = append(ops, op{kind: opSet, key: keyDeliveryState + d.MonitorID, val: b})
			}
		}
		b, err := json.Marshal(d)
		if err != nil {
			return false, err
		}
		if d.Status == DeliveryPending {
			ops = append(ops, op{kind: opSet, key: keyDelivery + d.ID, val: b}, op{kind: opZAdd, key: setDeliveries, member: d.ID, score: ms(d.NextAttempt)})
		} else {
			ops = append(ops, op{kind: opSet, key: keyDelivery + d.ID, val: b, ttl: finishedDeliveryTTL}, op{kind: opZRem, key: setDeliveries, member: d.ID})
		}
		ok, err := s.t.commit(ctx, conds, ops)
		if err != nil {
			return false, err
		}
		if ok {
			return disabled, nil
		}
	}
	return false, ErrConflict
}

func (s monitors) Deliveries(ctx context.Context, monitorID string, limit int) ([]Delivery, error) {
	ids, err := s.t.zrange(ctx, keyIndex+monitorID, true, limit)
	if err != nil || len(ids) == 0 {
		return []Delivery{}, err
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = keyDelivery + id
	}
	vals, err := s.t.mget(ctx, keys...)
	if err != nil {
		return nil, err
	}
	out := make([]Delivery, 0, len(vals))
	for _, v := range vals {
		var d Delivery
		if v != nil && json.Unmarshal(v, &d) == nil {
			out = append(out, d)
		}
	}
	return out, nil
}

func (s monitors) Redeliver(ctx context.Context, monitorID, deliveryID string, at time.Time) (Delivery, error) {
	for range casTries {
		m, _, err := s.read(ctx, monitorID)
		if err != nil {
			return Delivery{}, err
		}
		if m.Delivery.Disabled {
			return Delivery{}, ErrDisabled
		}
		vals, err := s.t.mget(ctx, keyDelivery+deliveryID, keyDeliveryLease+deliveryID)
		if err != nil {
			return Delivery{}, err
		}
		var d Delivery
		if vals[0] == nil || json.Unmarshal(vals[0], &d) != nil || d.MonitorID != monitorID {
			return Delivery{}, ErrNotFound
		}
		if leaseHeld(vals[1]) {
			return Delivery{}, ErrInFlight
		}
		d.Status, d.NextAttempt, d.Scheduled = DeliveryPending, at.UTC(), false
		b, err := json.Marshal(d)
		if err != nil {
			return Delivery{}, err
		}
		ok, err := s.t.commit(ctx, []cond{
			{kind: condEq, key: keyDelivery + deliveryID, val: vals[0]},
			{kind: condPresent, key: keyMonitor + monitorID},
			// A claimed delivery is being sent right now: it stays with its sender.
			eqOrAbsent(keyDeliveryLease+deliveryID, vals[1]),
		}, []op{
			{kind: opSet, key: keyDelivery + deliveryID, val: b},
			{kind: opZAdd, key: setDeliveries, member: deliveryID, score: ms(at)},
		})
		if err != nil {
			return Delivery{}, err
		}
		if ok {
			return d, nil
		}
	}
	return Delivery{}, ErrConflict
}
