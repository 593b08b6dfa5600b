package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"time"

	"github.com/agentready/agentready/engine/report"
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
	Owner string `json:"owner,omitempty"`
	Quota string `json:"quota"`
	// Minter, for a monitor created with a token, is a second allowance it
	// counts against: the address that minted the token (its opaque key),
	// across every token that address minted.
	Minter  string    `json:"minter,omitempty"`
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
	// ScannedAt and Checks are the last report's time and its checks'
	// statuses and message hashes: what the next run's events compare
	// with (report.Compare), whether or not that report is still kept.
	ScannedAt time.Time    `json:"scanned_at,omitzero"`
	Checks    report.Marks `json:"checks,omitempty"`
	Error     string       `json:"error,omitempty"` // why the last run produced no report
	// ReportEvents are the events of the run that made ReportID (the store
	// sets them): when a newer report supersedes it, it is kept until
	// ReportGrace after their last attempt.
	ReportEvents []string `json:"report_events,omitempty"`
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
	// Report is the report the event links to, Siblings the other events
	// of the run that made it (the store sets both): a superseded report is
	// kept until ReportGrace after the last attempt of any of them.
	Report   string   `json:"report,omitempty"`
	Siblings []string `json:"siblings,omitempty"`
}

// RunClaim is a due run held by one origin until Due+lease, with its
// monitor as the claim read it.
type RunClaim struct {
	MonitorID string
	Due       time.Time
	Token     string
	Monitor   Monitor
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

// ErrMinterQuota is ErrQuota for the address that minted the caller's token.
var ErrMinterQuota = fmt.Errorf("%w: the address that minted the token holds as many monitors as all its tokens may", ErrQuota)

// Monitors stores monitors, their schedule and their webhook outbox.
type Monitors interface {
	// Create stores m and schedules its first run, unless m.Quota already
	// has max monitors (ErrQuota), or m.Minter (when set) has maxMinter
	// (ErrMinterQuota). 0 means no limit.
	Create(ctx context.Context, m Monitor, firstRun time.Time, max, maxMinter int) error
	Get(ctx context.Context, id string) (Monitor, error)
	// List returns up to limit of the monitors counted against quota (a
	// caller's key: Monitor.Quota), oldest first.
	List(ctx context.Context, quota string, limit int) ([]Monitor, error)
	// Delete removes m (as Get returned it), its schedule and its pending
	// deliveries: after it returns no origin starts another run or attempt
	// for it.
	Delete(ctx context.Context, m Monitor) error

	// ClaimRuns takes up to limit runs due at now, each held for lease, with
	// their monitors.
	ClaimRuns(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]RunClaim, error)
	// CompleteRun records a run: its state, its report (kept for reportTTL
	// while it is the monitor's latest; see ReportGrace), its next run, and
	// its deliveries, all in one atomic write, and only while c is still
	// held (ErrLeaseLost otherwise; ErrNotFound when the monitor was
	// deleted meanwhile). With claimFor > 0 the deliveries are written
	// claimed by the caller for that long, as ClaimDeliveries would claim
	// them, and returned: the caller sends them at once, without a claim
	// of its own.
	CompleteRun(ctx context.Context, c RunClaim, st RunState, next time.Time, report []byte, reportTTL time.Duration, deliveries []Delivery, claimFor time.Duration) ([]DeliveryClaim, error)
	// ReleaseRun gives a claimed run back to be claimed again at at.
	ReleaseRun(ctx context.Context, c RunClaim, at time.Time) error
	// Report is a run's report as CompleteRun stored it.
	Report(ctx context.Context, monitorID, reportID string) ([]byte, error)

	// ClaimDeliveries takes up to limit deliveries due at now, each held for
	// lease, with what sending them needs.
	ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]DeliveryClaim, error)
	// FinishAttempt records an attempt's outcome on the delivery and its
	// monitor (disabling it on 410 or too many failures; disabled reports that).
	FinishAttempt(ctx context.Context, c DeliveryClaim, a Attempt) (disabled bool, err error)
	// Deliveries lists a monitor's recent deliveries, newest first.
	Deliveries(ctx context.Context, monitorID string, limit int) ([]Delivery, error)
	// Redeliver queues a delivery of m (as Get returned it) again for at,
	// keeping its id.
	Redeliver(ctx context.Context, m Monitor, deliveryID string, at time.Time) (Delivery, error)
}

// ReportGrace is how long a run's report stays once a newer report of its
// monitor exists, after the last attempt of its events: long enough for a
// receiver to fetch the report_url it was sent. Until then a report lives
// as long as CompleteRun's reportTTL says (the last retry of its events).
const ReportGrace = time.Hour

// KeptDeliveries is how many deliveries a monitor's list keeps; older ones
// are forgotten as new ones are written.
const KeptDeliveries = 100

// finishedDeliveryTTL keeps a finished delivery readable (and redeliverable)
// for a week after its last attempt.
const finishedDeliveryTTL = 7 * 24 * time.Hour

// casTries bounds optimistic retries of one write; conflicts mean another
// origin wrote the same monitor in between, which is rare.
const casTries = 16

// The key layout. A monitor's keys, its deliveries, its reports and the
// schedule entries that name them share a hash tag, its shard's ("{m7}"),
// so every claim and commit about one monitor touches one hash slot of a
// Redis Cluster, and the schedule is one sorted set per shard, which claims
// visit in turn. Within a shard every key of one monitor begins with
// "{m7}mon:<id>", so on the embedded file they sort together (and the
// schedule's entries for them too: see txkv_bolt.go). The quota sets are
// keys of their own, each written alone.
//
//	{m7}mon:<id>:cfg            the configuration
//	{m7}mon:<id>:run            RunState
//	{m7}mon:<id>:dst            DeliveryState
//	{m7}mon:<id>:lease          the lease of a claimed run
//	{m7}mon:<id>:rep:<report>   a run's report
//	{m7}mon:<id>:idx:|i         sorted set of its deliveries by creation
//	{m7}mon:<id>/<delivery>     a delivery
//	{m7}mon:<id>/<delivery>:lease  the lease of a claimed delivery
//	{m7}mon:|r                  sorted set: monitor ids by next run
//	{m7}mon:|d                  sorted set: <id>/<delivery> by next attempt
//	monquota|<quota>            sorted set: the quota's (or minter's) monitors by creation
//
// The embedded file holds the leases in memory instead (txkv_bolt.go), and
// keeps the rest in key order, so a run's new report, delivery and index
// entries, whose ids sort by creation (origin/monitor), land beside the
// newest, and the delivery a run forgets beside the oldest.
const (
	keyMonitors = "mon:"
	keyLease    = ":lease"
	keyQuota    = "monquota|"
)

// redisShards is how many schedule shards (hash tags) monitors are spread
// over on Redis: enough to spread a Cluster's load over its masters, few
// enough that a claim's read of every shard stays one small round trip. One
// Redis has as many, so the same keys run on both (and a Redis's data can
// move into a Cluster). The embedded file has one shard: its schedule's
// order then stays in one place, where a group commit rewrites it once.
const redisShards = 16

// shardBase is the beginning of every key of a shard.
func shardBase(shard int) string { return "{m" + strconv.Itoa(shard) + "}" + keyMonitors }

// layout is where a backend keeps monitors: how many shards.
type layout struct {
	shards           int
	runSets, dlvSets []dueSet // the schedule's sets, and what a claim reads with each member
}

func newLayout(shards int) layout {
	l := layout{shards: shards}
	for i := range shards {
		base := shardBase(i)
		l.runSets = append(l.runSets, dueSet{set: base + "|r", lease: affix{base, keyLease},
			owners: []affix{{base, ":cfg"}, {base, ":run"}, {base, ":dst"}}})
		l.dlvSets = append(l.dlvSets, dueSet{set: base + "|d", lease: affix{base, keyLease},
			items: []affix{{base, ""}}, owners: []affix{{base, ":cfg"}, {base, ":dst"}}})
	}
	return l
}

var (
	embeddedLayout = newLayout(1)
	redisLayout    = newLayout(redisShards)
)

// keys are a monitor's keys.
func (l layout) keys(id string) keysOf {
	shard := 0
	if l.shards > 1 {
		shard = int(crc32.ChecksumIEEE([]byte(id)) % uint32(l.shards))
	}
	return keysOf{id: id, base: shardBase(shard)}
}

type keysOf struct{ id, base string }

func (k keysOf) key(name string) string     { return k.base + k.id + name }
func (k keysOf) config() string             { return k.key(":cfg") }
func (k keysOf) run() string                { return k.key(":run") }
func (k keysOf) deliveryState() string      { return k.key(":dst") }
func (k keysOf) runLease() string           { return k.key(keyLease) }
func (k keysOf) index() string              { return k.key(":idx:|i") }
func (k keysOf) report(rid string) string   { return k.key(":rep:" + rid) }
func (k keysOf) runs() string               { return k.base + "|r" }
func (k keysOf) deliveries() string         { return k.base + "|d" }
func (k keysOf) member(did string) string   { return k.id + "/" + did }
func (k keysOf) delivery(did string) string { return k.key("/" + did) }
func (k keysOf) deliveryLease(did string) string {
	return k.key("/" + did + keyLease)
}

type monitors struct {
	t txkv
	layout
}

func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// reservationGrace: a quota entry without its monitor is a Create under way
// (the entry is written first) for this long, and a leftover after it.
const reservationGrace = time.Minute

// Create takes a place in each quota the monitor counts against, then
// writes the monitor. On Redis a quota set is a key of its own (it holds
// monitors of every shard, so of every slot of a Cluster), so the places
// are reserved first, each in one atomic step that checks the count: a
// Create that fails after reserving gives its places back, and one that
// dies leaves an entry without a monitor, which the next Create that finds
// the quota full removes (see reserve). The embedded file has one shard
// and writes it all in one commit.
func (s monitors) Create(ctx context.Context, m Monitor, first time.Time, max, maxMinter int) error {
	cfg, err := json.Marshal(m)
	if err != nil {
		return err
	}
	k := s.keys(m.ID)
	if s.shards == 1 {
		return s.createAtOnce(ctx, m, cfg, first, max, maxMinter)
	}
	if got, err := gets(ctx, s.t, k.config()); err != nil {
		return err
	} else if got[0] != nil {
		return fmt.Errorf("monitor %s exists", m.ID)
	}
	var reserved []string
	giveBack := func() {
		for _, q := range reserved {
			_, _ = s.t.commit(context.WithoutCancel(ctx), nil, []op{{kind: opZRem, key: q, member: m.ID}})
		}
	}
	if err := s.reserve(ctx, keyQuota+m.Quota, m, max); err != nil {
		return err
	}
	reserved = append(reserved, keyQuota+m.Quota)
	if m.Minter != "" {
		if err := s.reserve(ctx, keyQuota+m.Minter, m, maxMinter); err != nil {
			giveBack()
			if errors.Is(err, ErrQuota) {
				return ErrMinterQuota
			}
			return err
		}
		reserved = append(reserved, keyQuota+m.Minter)
	}
	ok, err := s.t.commit(ctx, []cond{{kind: condAbsent, key: k.config()}}, []op{
		{kind: opSet, key: k.config(), val: cfg},
		{kind: opZAdd, key: k.runs(), member: m.ID, score: ms(first)},
	})
	if err == nil && !ok {
		err = fmt.Errorf("monitor %s exists", m.ID)
	}
	if err != nil {
		giveBack()
	}
	return err
}

// createAtOnce is Create in one commit, when every key shares one shard.
func (s monitors) createAtOnce(ctx context.Context, m Monitor, cfg []byte, first time.Time, max, maxMinter int) error {
	k := s.keys(m.ID)
	conds := []cond{{kind: condAbsent, key: k.config()}}
	ops := []op{
		{kind: opSet, key: k.config(), val: cfg},
		{kind: opZAdd, key: k.runs(), member: m.ID, score: ms(first)},
		{kind: opZAdd, key: keyQuota + m.Quota, member: m.ID, score: ms(m.Created)},
	}
	if max > 0 {
		conds = append(conds, cond{kind: condZCardLT, key: keyQuota + m.Quota, n: max})
	}
	if m.Minter != "" {
		ops = append(ops, op{kind: opZAdd, key: keyQuota + m.Minter, member: m.ID, score: ms(m.Created)})
		if maxMinter > 0 {
			conds = append(conds, cond{kind: condZCardLT, key: keyQuota + m.Minter, n: maxMinter})
		}
	}
	ok, err := s.t.commit(ctx, conds, ops)
	if err != nil || ok {
		return err
	}
	// Which condition failed, in the order they are checked.
	reads := []read{get(k.config()), zcardOf(keyQuota + m.Quota)}
	if m.Minter != "" {
		reads = append(reads, zcardOf(keyQuota+m.Minter))
	}
	res, err := s.t.view(ctx, reads...)
	switch {
	case err != nil:
		return err
	case res[0].val != nil:
		return fmt.Errorf("monitor %s exists", m.ID)
	case max > 0 && res[1].n >= max:
		return ErrQuota
	}
	return ErrMinterQuota
}

// reserve adds m to the quota set q unless it already has max members (0:
// no limit): ErrQuota then. A full set is checked once for entries whose
// monitor is gone (left by a Create or a Delete that died halfway, or a
// store error between its two writes), which are removed before a second
// try.
func (s monitors) reserve(ctx context.Context, q string, m Monitor, max int) error {
	for try := 0; ; try++ {
		var conds []cond
		if max > 0 {
			conds = []cond{{kind: condZCardLT, key: q, n: max}}
		}
		ok, err := s.t.commit(ctx, conds, []op{{kind: opZAdd, key: q, member: m.ID, score: ms(m.Created)}})
		if err != nil || ok {
			return err
		}
		if try == 1 {
			return ErrQuota
		}
		res, err := s.t.view(ctx, read{kind: readZRange, key: q, limit: max + 64, scores: true})
		if err != nil {
			return err
		}
		members, scores := res[0].members, res[0].scores
		var reads []read
		var old []string
		for i, id := range members {
			if scores[i] < ms(m.Created.Add(-reservationGrace)) {
				old = append(old, id)
				reads = append(reads, get(s.keys(id).config()))
			}
		}
		if len(old) == 0 {
			return ErrQuota
		}
		cfgs, err := s.t.view(ctx, reads...)
		if err != nil {
			return err
		}
		var ops []op
		for i, id := range old {
			if cfgs[i].val == nil {
				ops = append(ops, op{kind: opZRem, key: q, member: id})
			}
		}
		if len(ops) == 0 {
			return ErrQuota
		}
		if _, err := s.t.commit(ctx, nil, ops); err != nil {
			return err
		}
	}
}

// decodeMonitor builds a monitor from its three records.
func decodeMonitor(id string, cfg, run, ds []byte) (Monitor, error) {
	var m Monitor
	if cfg == nil {
		return m, ErrNotFound
	}
	if err := json.Unmarshal(cfg, &m); err != nil {
		return Monitor{}, fmt.Errorf("monitor %s: corrupt record: %w", id, err)
	}
	if run != nil {
		_ = json.Unmarshal(run, &m.Run)
	}
	if ds != nil {
		_ = json.Unmarshal(ds, &m.Delivery)
	}
	return m, nil
}

// Get reads a monitor, its state and its place in the schedule in one step.
func (s monitors) Get(ctx context.Context, id string) (Monitor, error) {
	k := s.keys(id)
	res, err := s.t.view(ctx, get(k.config()), get(k.run()), get(k.deliveryState()), get(k.runLease()), zscoreOf(k.runs(), id))
	if err != nil {
		return Monitor{}, err
	}
	m, err := decodeMonitor(id, res[0].val, res[1].val, res[2].val)
	if err != nil {
		return m, err
	}
	// While a run is claimed its schedule entry holds the lease's end, not
	// a next run: say it is running instead.
	m.Running = leaseHeld(res[3].val)
	if !m.Delivery.Disabled && !m.Running && res[4].ok {
		m.NextRun = time.UnixMilli(res[4].score).UTC()
	}
	return m, nil
}

func (s monitors) List(ctx context.Context, quota string, limit int) ([]Monitor, error) {
	if limit <= 0 {
		return nil, nil
	}
	// The quota's set may still name a monitor a Create or Delete that
	// died halfway left behind (reserve prunes them): such an id has no
	// monitor and is skipped. Read a little more than asked for them.
	res, err := s.t.view(ctx, zrangeOf(keyQuota+quota, false, limit+16))
	if err != nil {
		return nil, err
	}
	out := make([]Monitor, 0, min(limit, len(res[0].members)))
	for _, id := range res[0].members {
		m, err := s.Get(ctx, id)
		switch {
		case errors.Is(err, ErrNotFound):
			continue
		case err != nil:
			return nil, err
		}
		if m.Quota != quota {
			continue
		}
		if out = append(out, m); len(out) == limit {
			break
		}
	}
	return out, nil
}

func (s monitors) Delete(ctx context.Context, m Monitor) error {
	k := s.keys(m.ID)
	for range casTries {
		res, err := s.t.view(ctx, zrangeOf(k.index(), false, KeptDeliveries*2))
		if err != nil {
			return err
		}
		idx := res[0].members
		ops := []op{
			{kind: opDel, key: k.config()}, {kind: opDel, key: k.run()},
			{kind: opDel, key: k.deliveryState()}, {kind: opDel, key: k.runLease()},
			{kind: opDel, key: k.index()},
			{kind: opZRem, key: k.runs(), member: m.ID},
		}
		reports := map[string]bool{m.Run.ReportID: m.Run.ReportID != ""}
		if len(idx) > 0 {
			keys := make([]string, len(idx))
			for i, did := range idx {
				keys[i] = k.delivery(did)
			}
			vals, err := gets(ctx, s.t, keys...)
			if err != nil {
				return err
			}
			for i, did := range idx {
				var d Delivery
				if vals[i] != nil && json.Unmarshal(vals[i], &d) == nil && d.Report != "" {
					reports[d.Report] = true
				}
				ops = append(ops, op{kind: opZRem, key: k.deliveries(), member: k.member(did)},
					op{kind: opDel, key: k.delivery(did)}, op{kind: opDel, key: k.deliveryLease(did)})
			}
		}
		for rid, ok := range reports {
			if ok {
				ops = append(ops, op{kind: opDel, key: k.report(rid)})
			}
		}
		var quotas []op // its places in the quotas
		for _, q := range []string{m.Quota, m.Minter} {
			if q != "" {
				quotas = append(quotas, op{kind: opZRem, key: keyQuota + q, member: m.ID})
			}
		}
		if s.shards == 1 {
			ops, quotas = append(ops, quotas...), nil // one commit for all (see Create)
		}
		// The index may have grown since it was read: condition on its size.
		ok, err := s.t.commit(ctx, []cond{{kind: condPresent, key: k.config()}, {kind: condZCardLT, key: k.index(), n: len(idx) + 1}}, ops)
		if err != nil {
			return err
		}
		if ok {
			// On Redis each quota is a key of its own: an entry left by a
			// failure here is removed by the next Create that finds the
			// quota full.
			for _, q := range quotas {
				_, _ = s.t.commit(ctx, nil, []op{q})
			}
			return nil
		}
		if got, err := gets(ctx, s.t, k.config()); err != nil {
			return err
		} else if got[0] == nil {
			return ErrNotFound
		}
	}
	return ErrConflict
}

func (s monitors) ClaimRuns(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]RunClaim, error) {
	if lease <= 0 {
		return nil, errors.New("claim lease must be positive")
	}
	due, err := s.t.claimDue(ctx, s.runSets, ms(now), ms(now.Add(lease)), newToken(), limit)
	if err != nil {
		return nil, err
	}
	out := make([]RunClaim, 0, len(due))
	for _, d := range due {
		m, err := decodeMonitor(d.member, d.vals[0], d.vals[1], d.vals[2])
		if err != nil {
			// Deleted under the claim (Delete removes the schedule entry with
			// the monitor, so only a record written by hand gets here).
			k := s.keys(d.member)
			_, _ = s.t.commit(ctx, nil, []op{{kind: opZRem, key: k.runs(), member: d.member}, {kind: opDel, key: k.runLease()}})
			continue
		}
		out = append(out, RunClaim{MonitorID: d.member, Due: time.UnixMilli(d.score).UTC(), Token: d.lease, Monitor: m})
	}
	return out, nil
}

// reportExpiry is when a superseded report may go: ReportGrace after the
// last attempt of the events that link to it, and not before ReportGrace
// after floor; ok is false while one of them is still to be sent (the
// report then keeps the TTL it was written with, which outlasts the
// retries).
func reportExpiry(floor time.Time, events ...*Delivery) (at int64, ok bool) {
	last := floor
	for _, d := range events {
		if d == nil {
			continue
		}
		if d.Status == DeliveryPending {
			return 0, false
		}
		last = later(last, later(d.LastAttempt, d.Created))
	}
	return ms(last.Add(ReportGrace)), true
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// decodeDeliveries reads delivery records; a missing or corrupt one is nil.
func decodeDeliveries(vals []readResult) []*Delivery {
	out := make([]*Delivery, len(vals))
	for i, v := range vals {
		var d Delivery
		if v.val != nil && json.Unmarshal(v.val, &d) == nil {
			out[i] = &d
		}
	}
	return out
}

func (s monitors) CompleteRun(ctx context.Context, c RunClaim, st RunState, next time.Time, report []byte, reportTTL time.Duration, deliveries []Delivery, claimFor time.Duration) ([]DeliveryClaim, error) {
	k := s.keys(c.MonitorID)
	events := c.Monitor.Run.ReportEvents // the superseded report's, as the claim read them
	for range casTries {
		// The index's size and its oldest members, as many as this run
		// adds: the list never holds more than KeptDeliveries, so those are
		// all a trim can need.
		reads := []read{get(k.runLease()), get(k.config()), get(k.deliveryState()), get(k.run()), zcardOf(k.index()), zrangeOf(k.index(), false, max(len(deliveries), 1))}
		for _, id := range events {
			reads = append(reads, get(k.delivery(id)))
		}
		res, err := s.t.view(ctx, reads...)
		if err != nil {
			return nil, err
		}
		if string(res[0].val) != c.Token {
			return nil, ErrLeaseLost
		}
		if res[1].val == nil {
			return nil, ErrNotFound
		}
		var ds DeliveryState
		if res[2].val != nil {
			_ = json.Unmarshal(res[2].val, &ds)
		}
		var prev RunState
		if res[3].val != nil {
			_ = json.Unmarshal(res[3].val, &prev)
		}
		if !slices.Equal(prev.ReportEvents, events) {
			events = prev.ReportEvents // the claim did not read them (or a stale copy): read again
			continue
		}
		conds := []cond{
			{kind: condEq, key: k.runLease(), val: []byte(c.Token)},
			{kind: condPresent, key: k.config()},
			eqOrAbsent(k.deliveryState(), res[2].val),
			eqOrAbsent(k.run(), res[3].val),
		}
		ops := []op{{kind: opDel, key: k.runLease()}}
		if ds.Disabled {
			// Disabled while this run was scanning: record what it saw, send nothing.
			deliveries = nil
		} else {
			ops = append(ops, op{kind: opZAdd, key: k.runs(), member: c.MonitorID, score: ms(next)})
		}
		newReport := report != nil && st.ReportID != ""
		if newReport {
			ids := make([]string, len(deliveries))
			for i, d := range deliveries {
				ids[i] = d.ID
			}
			st.ReportEvents = ids
			ops = append(ops, op{kind: opSet, key: k.report(st.ReportID), val: report, ttl: reportTTL})
			if prev.ReportID != "" && prev.ReportID != st.ReportID {
				// The report this one supersedes goes once its events are done with.
				if at, ok := reportExpiry(later(st.LastRun, c.Due), decodeDeliveries(res[6:])...); ok {
					ops = append(ops, op{kind: opExpireAt, key: k.report(prev.ReportID), score: at})
					for i, id := range events {
						conds = append(conds, eqOrAbsent(k.delivery(id), res[6+i].val))
					}
				}
			}
		} else if st.ReportID == prev.ReportID {
			st.ReportEvents = prev.ReportEvents
		}
		stateJSON, err := json.Marshal(st)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op{kind: opSet, key: k.run(), val: stateJSON})
		// Forget the oldest deliveries so that the list keeps KeptDeliveries.
		count, oldest := res[4].n, res[5].members
		for i := 0; i < len(oldest) && count-i+len(deliveries) > KeptDeliveries; i++ {
			did := oldest[i]
			ops = append(ops, op{kind: opZRem, key: k.index(), member: did},
				op{kind: opZRem, key: k.deliveries(), member: k.member(did)},
				op{kind: opDel, key: k.delivery(did)}, op{kind: opDel, key: k.deliveryLease(did)})
		}
		var claims []DeliveryClaim
		m := c.Monitor
		m.Delivery = ds
		for _, d := range deliveries {
			if newReport {
				d.Report = st.ReportID
				d.Siblings = nil
				for _, id := range st.ReportEvents {
					if id != d.ID {
						d.Siblings = append(d.Siblings, id)
					}
				}
			}
			b, err := json.Marshal(d)
			if err != nil {
				return nil, err
			}
			due := ms(d.NextAttempt)
			if claimFor > 0 {
				// Claimed as claimDue would: held until due+claimFor by the
				// lease "<token>|<due>", which only this caller knows.
				lease := newToken() + "|" + strconv.FormatInt(due, 10)
				claims = append(claims, DeliveryClaim{Delivery: d, Token: lease, Monitor: m})
				ops = append(ops, op{kind: opSet, key: k.deliveryLease(d.ID), val: []byte(lease)})
				due = ms(d.NextAttempt.Add(claimFor))
			}
			ops = append(ops,
				op{kind: opSet, key: k.delivery(d.ID), val: b},
				op{kind: opZAdd, key: k.deliveries(), member: k.member(d.ID), score: due},
				op{kind: opZAdd, key: k.index(), member: d.ID, score: ms(d.Created)})
		}
		ok, err := s.t.commit(ctx, conds, ops)
		if err != nil {
			return nil, err
		}
		if ok {
			return claims, nil
		}
	}
	return nil, ErrConflict
}

func (s monitors) ReleaseRun(ctx context.Context, c RunClaim, at time.Time) error {
	k := s.keys(c.MonitorID)
	ok, err := s.t.commit(ctx, []cond{
		{kind: condEq, key: k.runLease(), val: []byte(c.Token)},
		{kind: condPresent, key: k.config()},
	}, []op{
		// Handed back, not finished: the next claim keeps this run's due time.
		{kind: opSet, key: k.runLease(), val: []byte(releasedLease + "|" + strconv.FormatInt(ms(c.Due), 10))},
		{kind: opZAdd, key: k.runs(), member: c.MonitorID, score: ms(at)},
	})
	if err == nil && !ok {
		return ErrLeaseLost
	}
	return err
}

func (s monitors) Report(ctx context.Context, monitorID, reportID string) ([]byte, error) {
	vals, err := gets(ctx, s.t, s.keys(monitorID).report(reportID))
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
	due, err := s.t.claimDue(ctx, s.dlvSets, ms(now), ms(now.Add(lease)), newToken(), limit)
	if err != nil || len(due) == 0 {
		return nil, err
	}
	out := make([]DeliveryClaim, 0, len(due))
	for _, d := range due {
		c := DeliveryClaim{Token: d.lease}
		monID := memberOwner(d.member)
		if d.vals[0] == nil || json.Unmarshal(d.vals[0], &c.Delivery) != nil {
			// Forgotten (trimmed) under the claim: nothing to send.
			k := s.keys(monID)
			_, _ = s.t.commit(ctx, nil, []op{{kind: opZRem, key: k.deliveries(), member: d.member}, {kind: opDel, key: k.base + d.member + keyLease}})
			continue
		}
		m, err := decodeMonitor(monID, d.vals[1], nil, d.vals[2])
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
	k := s.keys(c.Delivery.MonitorID)
	did := c.Delivery.ID
	for range casTries {
		reads := []read{get(k.deliveryLease(did)), get(k.delivery(did)), get(k.config()), get(k.deliveryState()), get(k.run())}
		for _, id := range c.Delivery.Siblings {
			reads = append(reads, get(k.delivery(id)))
		}
		res, err := s.t.view(ctx, reads...)
		if err != nil {
			return false, err
		}
		if string(res[0].val) != c.Token {
			return false, ErrLeaseLost
		}
		if res[1].val == nil {
			return false, ErrNotFound
		}
		var d Delivery
		if err := json.Unmarshal(res[1].val, &d); err != nil {
			return false, err
		}
		conds := []cond{
			{kind: condEq, key: k.deliveryLease(did), val: []byte(c.Token)},
			{kind: condEq, key: k.delivery(did), val: res[1].val},
		}
		ops := []op{{kind: opDel, key: k.deliveryLease(did)}}
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
			if res[2].val != nil {
				var ds DeliveryState
				if res[3].val != nil {
					_ = json.Unmarshal(res[3].val, &ds)
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
					ops = append(ops, op{kind: opZRem, key: k.runs(), member: d.MonitorID})
					if d.Status == DeliveryPending {
						d.Status, d.NextAttempt = DeliveryCanceled, time.Time{}
					}
				}
				b, _ := json.Marshal(ds)
				conds = append(conds, cond{kind: condPresent, key: k.config()}, eqOrAbsent(k.deliveryState(), res[3].val))
				ops = append(ops, op{kind: opSet, key: k.deliveryState(), val: b})
			}
		}
		b, err := json.Marshal(d)
		if err != nil {
			return false, err
		}
		if d.Status == DeliveryPending {
			ops = append(ops, op{kind: opSet, key: k.delivery(did), val: b}, op{kind: opZAdd, key: k.deliveries(), member: k.member(did), score: ms(d.NextAttempt)})
		} else {
			ops = append(ops, op{kind: opSet, key: k.delivery(did), val: b, ttl: finishedDeliveryTTL}, op{kind: opZRem, key: k.deliveries(), member: k.member(did)})
		}
		conds, ops = s.keepReport(k, &d, res[4].val, res[5:], a.At, false, conds, ops)
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

// keepReport adds to a write that changes d the new expiry of the report d
// links to, when that report is no longer its monitor's latest (run is the
// run state read) and neither d nor its siblings (as read in sibs, each
// conditioned on staying as read) are still to be sent: ReportGrace after
// the last attempt of any of them, or after now. A redelivery (d about to
// be sent again at now) keeps it until ReportGrace after now, unless a
// sibling still to be sent keeps it longer.
func (s monitors) keepReport(k keysOf, d *Delivery, run []byte, sibs []readResult, now time.Time, redelivery bool, conds []cond, ops []op) ([]cond, []op) {
	if d.Report == "" {
		return conds, ops
	}
	var st RunState
	if run != nil {
		_ = json.Unmarshal(run, &st)
	}
	if st.ReportID == d.Report {
		return conds, ops // the latest: kept as long as reportTTL says
	}
	events := decodeDeliveries(sibs)
	if !redelivery {
		events = append(events, d)
	}
	at, ok := reportExpiry(now, events...)
	if !ok {
		return conds, ops
	}
	for i, id := range d.Siblings {
		if i < len(sibs) {
			conds = append(conds, eqOrAbsent(k.delivery(id), sibs[i].val))
		}
	}
	return conds, append(ops, op{kind: opExpireAt, key: k.report(d.Report), score: at})
}

func (s monitors) Deliveries(ctx context.Context, monitorID string, limit int) ([]Delivery, error) {
	k := s.keys(monitorID)
	res, err := s.t.view(ctx, zrangeOf(k.index(), true, limit))
	if err != nil || len(res[0].members) == 0 {
		return []Delivery{}, err
	}
	keys := make([]string, len(res[0].members))
	for i, id := range res[0].members {
		keys[i] = k.delivery(id)
	}
	vals, err := gets(ctx, s.t, keys...)
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

func (s monitors) Redeliver(ctx context.Context, m Monitor, deliveryID string, at time.Time) (Delivery, error) {
	if m.Delivery.Disabled {
		return Delivery{}, ErrDisabled
	}
	k := s.keys(m.ID)
	var sibs []string
	for range casTries {
		reads := []read{get(k.delivery(deliveryID)), get(k.deliveryLease(deliveryID)), get(k.run())}
		for _, id := range sibs {
			reads = append(reads, get(k.delivery(id)))
		}
		res, err := s.t.view(ctx, reads...)
		if err != nil {
			return Delivery{}, err
		}
		var d Delivery
		if res[0].val == nil || json.Unmarshal(res[0].val, &d) != nil || d.MonitorID != m.ID {
			return Delivery{}, ErrNotFound
		}
		if !slices.Equal(d.Siblings, sibs) {
			sibs = d.Siblings // read them too, for the report's expiry
			continue
		}
		if leaseHeld(res[1].val) {
			return Delivery{}, ErrInFlight
		}
		d.Status, d.NextAttempt, d.Scheduled = DeliveryPending, at.UTC(), false
		b, err := json.Marshal(d)
		if err != nil {
			return Delivery{}, err
		}
		conds := []cond{
			{kind: condEq, key: k.delivery(deliveryID), val: res[0].val},
			{kind: condPresent, key: k.config()},
			// A claimed delivery is being sent right now: it stays with its sender.
			eqOrAbsent(k.deliveryLease(deliveryID), res[1].val),
		}
		ops := []op{
			{kind: opSet, key: k.delivery(deliveryID), val: b},
			{kind: opZAdd, key: k.deliveries(), member: k.member(deliveryID), score: ms(at)},
		}
		conds, ops = s.keepReport(k, &d, res[2].val, res[3:], at, true, conds, ops)
		ok, err := s.t.commit(ctx, conds, ops)
		if err != nil {
			return Delivery{}, err
		}
		if ok {
			return d, nil
		}
	}
	return Delivery{}, ErrConflict
}
