package ratelimit

import (
	"context"
	"fmt"
	"maps"
	"math/big"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin/store"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock(t time.Time) *fakeClock { return &fakeClock{t: t} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func (c *fakeClock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// openRedis connects to url as the origin does (one Redis, or a Cluster
// for the several-host form).
func openRedis(t *testing.T, url string) redis.UniversalClient {
	t.Helper()
	r, err := store.OpenRedis(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r.Client()
}

// redisClients are the servers redis_rate is tested on: one Redis
// (REDIS_URL: required, as redisOnly says) and a Redis Cluster
// (REDIS_CLUSTER_URL), where each key's script runs on the node holding
// its slot.
func redisClients(t *testing.T, redisRequired bool) map[string]redis.UniversalClient {
	t.Helper()
	m := map[string]redis.UniversalClient{}
	if redisRequired {
		m["redis"] = openRedis(t, testenv.RedisURL(t))
	} else if url := os.Getenv("REDIS_URL"); testenv.Optional(t, url != "", "REDIS_URL: the redis_rate limiter") {
		m["redis"] = openRedis(t, url)
	}
	if url, ok := testenv.OptionalRedisCluster(t); ok {
		m["redis-cluster"] = openRedis(t, url)
	}
	return m
}

// nodesHolding says how many Cluster masters hold keys (a one-Redis client
// counts as one): the property test's keys must reach more than one, or
// the Cluster would not be tested.
func nodesHolding(t *testing.T, c redis.UniversalClient, keys []string) int {
	t.Helper()
	cc, ok := c.(*redis.ClusterClient)
	if !ok {
		return 1
	}
	ctx := context.Background()
	slots, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]bool{}
	for _, k := range keys {
		slot, err := cc.ClusterKeySlot(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range slots {
			if int64(s.Start) <= slot && slot <= int64(s.End) && len(s.Nodes) > 0 {
				nodes[s.Nodes[0].Addr] = true
			}
		}
	}
	return len(nodes)
}

func testPrefix(name string) string { return fmt.Sprintf("rltest:%s:%d:", name, time.Now().UnixNano()) }

// limiters are the two backends. The local one runs on a frozen clock, so
// every call below happens at one instant: the case float seconds got wrong.
func limiters(t *testing.T) map[string]Limiter {
	m := map[string]Limiter{"local": NewLocalClock(newFakeClock(time.Date(2026, 5, 4, 3, 2, 1, 987654321, time.UTC)).Now)}
	for name, c := range redisClients(t, false) {
		m[name] = NewRedis(c).WithPrefix(testPrefix("conformance"))
	}
	return m
}

func near(a, b, tol time.Duration) bool { d := a - b; return d <= tol && d >= -tol }

// The same calls get the same answers from both limiters (redis_rate's documented behaviour).
func TestConformance(t *testing.T) {
	ctx := context.Background()
	for name, l := range limiters(t) {
		t.Run(name, func(t *testing.T) {
			day := PerDay(3)
			for i, want := range []int{2, 1, 0} {
				r, err := l.AllowN(ctx, "daily", day, 1)
				if err != nil || r.Allowed != 1 || r.Remaining != want || r.RetryAfter != -1 {
					t.Fatalf("call %d: %+v %v", i+1, r, err)
				}
			}
			r, _ := l.AllowN(ctx, "daily", day, 1)
			if r.Allowed != 0 || r.Remaining != 0 || !near(r.RetryAfter, 8*time.Hour, time.Second) || !near(r.ResetAfter, 24*time.Hour, time.Second) {
				t.Errorf("4th call: %+v", r)
			}
			if err := l.Reset(ctx, "daily"); err != nil {
				t.Fatal(err)
			}
			if r, _ := l.AllowN(ctx, "daily", day, 2); r.Allowed != 2 || r.Remaining != 1 {
				t.Errorf("after reset, cost 2: %+v", r)
			}
			if r, _ := l.AllowN(ctx, "daily", day, 2); r.Allowed != 0 {
				t.Errorf("cost 2 with 1 left must be denied: %+v", r)
			}
			sec := Limit{Rate: 10, Burst: 2, Period: time.Second}
			// The first call's remaining count is exactly 1, which redis_rate's
			// float seconds round to 0 (see roundsDown below), so only the
			// decisions and the last count are compared here.
			if r, _ := l.AllowN(ctx, "burst", sec, 1); r.Allowed != 1 {
				t.Errorf("call 1 in a burst of 2: %+v", r)
			}
			if r, _ := l.AllowN(ctx, "burst", sec, 1); r.Allowed != 1 || r.Remaining != 0 {
				t.Errorf("call 2 in a burst of 2: %+v", r)
			}
			r, _ = l.AllowN(ctx, "burst", sec, 1)
			if r.Allowed != 0 || r.RetryAfter <= 0 || r.RetryAfter > 100*time.Millisecond {
				t.Errorf("third call in a burst of 2: %+v", r)
			}
			if r, _ := l.AllowN(ctx, "other-key", day, 1); r.Remaining != 2 {
				t.Errorf("keys are independent: %+v", r)
			}
			for _, bad := range []struct {
				l Limit
				n int
			}{{Limit{Rate: 0, Burst: 1, Period: time.Second}, 1}, {Limit{Rate: 1, Burst: 1}, 1}, {Limit{Rate: 1, Burst: -1, Period: time.Second}, 1}, {sec, -1}} {
				if r, err := l.AllowN(ctx, "bad", bad.l, bad.n); err == nil {
					t.Errorf("%+v cost %d: no error but %+v (the script's arithmetic would be NaN)", bad.l, bad.n, r)
				}
			}
		})
	}
}

// Limit 10/s with burst 2 once answered 1, 0, 0 to three calls at
// one instant. A burst of b admits exactly b calls at one instant, for limits
// whose emission interval is and is not a whole number of nanoseconds, and one
// emission interval later exactly one more.
func TestBurstAtOneInstant(t *testing.T) {
	ctx := context.Background()
	for _, lim := range []Limit{
		{Rate: 10, Burst: 2, Period: time.Second},
		PerDay(3),
		PerDay(7), // 12342.857142857… s
		{Rate: 3, Burst: 5, Period: time.Second},
		{Rate: 7, Burst: 7, Period: time.Minute},
		PerDay(1 << 30),
	} {
		clock := newFakeClock(time.Date(2047, 12, 31, 23, 59, 59, 999999999, time.UTC))
		l := NewLocalClock(clock.Now)
		clock.Advance(1234567891 * time.Nanosecond) // decisions do not depend on when the limiter was made
		emission := lim.Period / time.Duration(lim.Rate)
		for k := 1; k <= lim.Burst && k <= 20; k++ {
			r, err := l.AllowN(ctx, "k", lim, 1)
			if err != nil || r.Allowed != 1 || r.Remaining != lim.Burst-k {
				t.Fatalf("%+v: call %d at one instant: %+v %v", lim, k, r, err)
			}
		}
		if lim.Burst > 20 {
			continue
		}
		r, _ := l.AllowN(ctx, "k", lim, 1)
		if r.Allowed != 0 || !near(r.RetryAfter, emission, time.Nanosecond) || !near(r.ResetAfter, time.Duration(lim.Burst)*emission, time.Duration(lim.Burst)*time.Nanosecond) {
			t.Fatalf("%+v: call %d at one instant must wait one emission interval (%s): %+v", lim, lim.Burst+1, emission, r)
		}
		clock.Advance(r.RetryAfter)
		if r, _ := l.AllowN(ctx, "k", lim, 1); r.Allowed != 1 || r.Remaining != 0 {
			t.Fatalf("%+v: after RetryAfter: %+v", lim, r)
		}
		if r, _ := l.AllowN(ctx, "k", lim, 1); r.Allowed != 0 {
			t.Fatalf("%+v: and only one: %+v", lim, r)
		}
	}
}

// A clock stepping back (the wall clock under NTP) gives nothing back.
func TestClockStepBackRefundsNothing(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	l := NewLocalClock(clock.Now)
	day := PerDay(2)
	l.AllowN(ctx, "k", day, 2)
	clock.Advance(-time.Hour)
	if r, _ := l.AllowN(ctx, "k", day, 1); r.Allowed != 0 || !near(r.RetryAfter, 13*time.Hour, 0) {
		t.Fatalf("an hour back: %+v", r)
	}
}

// Keys whose allowance is whole again are dropped, so a stream of one-off
// callers does not grow the map without bound.
func TestSpentKeysAreSwept(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	l := NewLocalClock(clock.Now)
	sec := Limit{Rate: 10, Burst: 10, Period: time.Second}
	for i := range 50000 {
		l.AllowN(ctx, fmt.Sprintf("caller-%d", i), sec, 1)
		clock.Advance(time.Millisecond) // each entry is whole again 100 ms later
	}
	l.mu.Lock()
	n := len(l.tat)
	l.mu.Unlock()
	if n > 4096+100 {
		t.Fatalf("%d entries kept for 50000 one-off callers whose allowance is whole again", n)
	}
}

// gcraModel is redis_rate's allowN script in exact rational arithmetic, in
// nanoseconds: the reference both limiters are held to.
type gcraModel struct{ tat map[string]*big.Rat }

type decision struct {
	allowed   bool
	remaining int
	retry     *big.Rat // ns; nil when allowed
	reset     *big.Rat // ns
	diff      *big.Rat // now - allow_at, ns: negative = denied
	emission  *big.Rat
	store     *big.Rat // new tat to keep, nil for none
	idle      bool     // no tat ahead of now: diff is (burst-n)·emission whatever the time
	// roundsDown: the exact remaining count is a whole number that float
	// seconds may land just under, so redis_rate can answer one less. It
	// does at an idle key when the emission interval has no exact binary
	// fraction: 10/s with burst 2 answers remaining 0, not 1, to a first
	// call, because 0.1 s is 0.1000000000000000055… and X+0.1-0.2 rounds.
	roundsDown bool
}

func (m *gcraModel) decide(now *big.Rat, key string, l Limit, n int) decision {
	e := new(big.Rat).SetFrac64(int64(l.Period), int64(l.Rate))
	inc := new(big.Rat).Mul(e, big.NewRat(int64(n), 1))
	burst := new(big.Rat).Mul(e, big.NewRat(int64(l.Burst), 1))
	tat, idle := now, true
	if s, ok := m.tat[key]; ok && s.Cmp(now) > 0 {
		tat, idle = s, false
	}
	newTat := new(big.Rat).Add(tat, inc)
	diff := new(big.Rat).Sub(now, new(big.Rat).Sub(newTat, burst))
	d := decision{diff: diff, emission: e, idle: idle}
	if diff.Sign() < 0 {
		d.retry = new(big.Rat).Neg(diff)
		d.reset = new(big.Rat).Sub(tat, now)
		return d
	}
	q := new(big.Rat).Quo(diff, e)
	d.allowed = true
	d.remaining = int(new(big.Int).Quo(q.Num(), q.Denom()).Int64())
	d.reset = new(big.Rat).Sub(newTat, now)
	if d.reset.Sign() > 0 {
		d.store = newTat
	}
	return d
}

func (m *gcraModel) commit(key string, d decision) {
	if d.store != nil {
		m.tat[key] = d.store
	}
}

// nearBoundary: within tol of a point where the decision or the remaining
// count changes, float seconds and integer nanoseconds may round to
// different sides.
func (d decision) nearBoundary(tol time.Duration) bool {
	t := big.NewRat(int64(tol), 1)
	if d.diff.Cmp(new(big.Rat).Neg(t)) < 0 {
		return false // denied by more than tol
	}
	if d.nearDecision(tol) {
		return true
	}
	q := new(big.Rat).Quo(d.diff, d.emission)
	fl := new(big.Rat).SetInt(new(big.Int).Div(q.Num(), q.Denom())) // floor
	frac := new(big.Rat).Sub(q, fl)
	dist := new(big.Rat).Mul(frac, d.emission)
	other := new(big.Rat).Sub(d.emission, dist)
	return dist.Cmp(t) < 0 || other.Cmp(t) < 0
}

// nearDecision: within tol of the point where allowed turns into denied.
func (d decision) nearDecision(tol time.Duration) bool {
	return new(big.Rat).Abs(d.diff).Cmp(big.NewRat(int64(tol), 1)) < 0
}

type event struct {
	at  time.Time
	key string
	n   int
	d   decision // what the model answers
}

// schedule draws steps calls over keys, in runs on one key: a third at the
// same instant as the one before, the rest after a gap up to a few emission
// intervals, on a grid of times. With avoid > 0 a call within avoid of a boundary (see
// nearBoundary) is moved later, so that only arithmetic error, not a coin
// toss at the boundary, could make the limiters disagree. At an idle key
// time does not move the boundary: a cost that would spend the whole burst
// (diff exactly 0) is lowered by one, and a remaining count that is exactly
// whole is kept and marked roundsDown.
func schedule(seed uint64, start time.Time, grid time.Duration, keys []string, limits map[string]Limit, steps int, avoid time.Duration) []event {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	m := &gcraModel{tat: map[string]*big.Rat{}}
	now := start
	var out []event
	key := keys[0]
	for range steps {
		if rng.IntN(4) == 0 { // callers come in runs, as traffic does
			key = keys[rng.IntN(len(keys))]
		}
		l := limits[key]
		e := l.Period / time.Duration(l.Rate)
		var gap time.Duration
		switch r := rng.IntN(100); {
		case r < 35:
		case r < 70:
			gap = time.Duration(rng.Int64N(int64(2 * e)))
		default:
			gap = time.Duration(rng.Int64N(int64(time.Duration(l.Burst+1) * e * 3 / 2)))
		}
		gap = gap / grid * grid
		n := 1
		switch rng.IntN(20) {
		case 0:
			n = 0
		case 1:
			n = l.Burst + 1
		case 2, 3:
			n = 2
		}
		var d decision
		for {
			at := now.Add(gap)
			d = m.decide(big.NewRat(at.Sub(start).Nanoseconds(), 1), key, l, n)
			switch {
			case avoid == 0 || !d.nearBoundary(avoid):
			case d.idle && d.nearDecision(avoid):
				n--
				continue
			case d.idle:
				d.roundsDown = true
			default:
				gap += (3*avoid + grid - 1) / grid * grid
				continue
			}
			break
		}
		now = now.Add(gap)
		m.commit(key, d)
		out = append(out, event{at: now, key: key, n: n, d: d})
	}
	return out
}

func ratDur(r *big.Rat) time.Duration {
	f, _ := r.Float64()
	return time.Duration(f)
}

// check compares one answer with the model's; tol 0 means exactly. float
// says whether the answer comes from float seconds (see roundsDown).
func check(d decision, n int, r *Result, tol time.Duration, float bool) string {
	wantAllowed, wantRetry := 0, time.Duration(-1)
	if d.allowed {
		wantAllowed = n
	} else {
		wantRetry = ratDur(d.retry)
	}
	roundedDown := float && d.roundsDown && r.Remaining == d.remaining-1
	if r.Allowed != wantAllowed || (r.Remaining != d.remaining && !roundedDown) {
		return fmt.Sprintf("allowed %d remaining %d, model says %d, %d", r.Allowed, r.Remaining, wantAllowed, d.remaining)
	}
	if (wantRetry == -1) != (r.RetryAfter == -1) || !near(r.RetryAfter, wantRetry, tol) {
		return fmt.Sprintf("RetryAfter %s, model says %s", r.RetryAfter, wantRetry)
	}
	if !near(r.ResetAfter, ratDur(d.reset), tol) {
		return fmt.Sprintf("ResetAfter %s, model says %s", r.ResetAfter, ratDur(d.reset))
	}
	return ""
}

type scenario struct {
	name   string
	start  time.Time
	grid   time.Duration
	limits map[string]Limit
	avoid  time.Duration // 0: boundaries included, answers compared exactly
	tol    time.Duration
}

// On the "grid" every time and emission interval is a multiple of 1/64 s and
// under 2^53/64 s from redis_rate's 2017 epoch, so the script's float
// arithmetic is exact too: both limiters must match the model exactly,
// bursts spent at one instant (diff exactly 0) included. Elsewhere ("any")
// limits and microsecond times are arbitrary; float seconds carry ~60 ns of
// rounding per operation, so boundaries are avoided and durations compared
// within 20 µs.
var scenarios = []scenario{
	{name: "grid", start: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), grid: time.Second / 64, limits: map[string]Limit{
		"8/s+2":   {Rate: 8, Burst: 2, Period: time.Second},
		"64/s+3":  {Rate: 64, Burst: 3, Period: time.Second},
		"1/min+5": {Rate: 1, Burst: 5, Period: time.Minute},
		"2/h+1":   {Rate: 2, Burst: 1, Period: time.Hour},
		"3/day":   PerDay(3),
	}},
	{name: "any", start: time.Date(2031, 7, 9, 13, 4, 5, 123456000, time.UTC), grid: time.Microsecond, avoid: 20 * time.Microsecond, tol: 20 * time.Microsecond, limits: map[string]Limit{
		"10/s+2":     {Rate: 10, Burst: 2, Period: time.Second},
		"3/s+5":      {Rate: 3, Burst: 5, Period: time.Second},
		"100/min+4":  {Rate: 100, Burst: 4, Period: time.Minute},
		"7/day":      PerDay(7),
		"1000/day+3": {Rate: 1000, Burst: 3, Period: 24 * time.Hour},
	}},
}

func (s scenario) keys() []string {
	k := slices.Collect(maps.Keys(s.limits))
	slices.Sort(k) // the schedule must not depend on map order
	return k
}

var seeds = []uint64{1, 2, 3, 0x9e3779b97f4a7c15}

const stepsPerSeed = 250

// The schedules are worth testing against: they spend allowances to the
// last event, are denied, wait, and (on the grid) hit boundaries exactly.
func TestSchedulesExerciseTheLimiter(t *testing.T) {
	for _, s := range scenarios {
		var allowed, denied, exhausted, boundary int
		for _, seed := range seeds {
			for _, ev := range schedule(seed, s.start, s.grid, s.keys(), s.limits, stepsPerSeed, s.avoid) {
				switch {
				case !ev.d.allowed:
					denied++
				case ev.d.remaining == 0:
					exhausted++
				default:
					allowed++
				}
				if ev.d.nearBoundary(time.Nanosecond) && !ev.d.roundsDown {
					boundary++
				}
			}
		}
		total := len(seeds) * stepsPerSeed
		t.Logf("%s: %d allowed, %d allowed with none left, %d denied, %d boundary", s.name, allowed, exhausted, denied, boundary)
		if allowed < total/10 || denied < total/10 || exhausted < total/20 {
			t.Errorf("%s: %d allowed, %d allowed with none left, %d denied of %d: the schedule does not exercise the limit", s.name, allowed, exhausted, denied, total)
		}
		if s.avoid == 0 && boundary < total/10 {
			t.Errorf("%s: only %d of %d calls exactly on a boundary", s.name, boundary, total)
		}
		if s.avoid != 0 && boundary != 0 {
			t.Errorf("%s: %d calls on a boundary the schedule should avoid", s.name, boundary)
		}
	}
}

// The local limiter matches the exact model on every schedule.
func TestLocalMatchesModel(t *testing.T) {
	ctx := context.Background()
	for _, s := range scenarios {
		for _, seed := range seeds {
			clock := newFakeClock(s.start.Add(-time.Hour))
			l := NewLocalClock(clock.Now)
			for i, ev := range schedule(seed, s.start, s.grid, s.keys(), s.limits, stepsPerSeed, s.avoid) {
				clock.Set(ev.at)
				r, err := l.AllowN(ctx, ev.key, s.limits[ev.key], ev.n)
				if err != nil {
					t.Fatal(err)
				}
				if msg := check(ev.d, ev.n, r, s.tol, false); msg != "" {
					t.Fatalf("%s seed %d step %d (%s cost %d at +%s): local %s", s.name, seed, i, ev.key, ev.n, ev.at.Sub(s.start), msg)
				}
			}
		}
	}
}

// redisAt hands redis_rate's own allowN script to a real Redis with one
// change: the time comes from the test's clock instead of Redis TIME, so both
// limiters see the same schedule to the microsecond. The key's expiry runs on
// Redis's real clock, which the schedule outpaces or lags; it is lengthened
// by an hour so a key cannot expire while the schedule still needs it (an
// expired key and one whose tat has passed decide alike, so that changes no
// answer).
type redisAt struct {
	redis.UniversalClient
	clock *fakeClock
	fail  func(string)
}

func (r *redisAt) EvalSha(ctx context.Context, _ string, _ []string, _ ...any) *redis.Cmd {
	cmd := redis.NewCmd(ctx)
	cmd.SetErr(redis.ErrNoScript) // go-redis falls back to Eval with the script's source
	return cmd
}

func (r *redisAt) Eval(ctx context.Context, src string, keys []string, args ...any) *redis.Cmd {
	for _, sub := range [][2]string{
		{`redis.call("TIME")`, `{ARGV[5], ARGV[6]}`},
		{`"EX", math.ceil(reset_after)`, `"EX", math.ceil(reset_after) + 3600`},
	} {
		if strings.Count(src, sub[0]) != 1 {
			r.fail(fmt.Sprintf("redis_rate's script no longer contains %s once; update redisAt", sub[0]))
		}
		src = strings.Replace(src, sub[0], sub[1], 1)
	}
	now := r.clock.Now()
	return r.UniversalClient.Eval(ctx, src, keys, append(args, now.Unix(), now.Nanosecond()/1000)...)
}

// The local limiter and redis_rate (its script, run by a real Redis) give
// the same answers on the same randomised schedules: exactly on the grid,
// within 20 µs elsewhere, where redis_rate may also count one less at an
// idle key (see roundsDown; the local answer is the exact one). On one
// Redis and on a Redis Cluster, where the schedules' keys land on several
// nodes and each decision runs on the node holding its key.
func TestLocalAgreesWithRedisRate(t *testing.T) {
	for name, c := range redisClients(t, true) {
		t.Run(name, func(t *testing.T) { testAgreesWithRedisRate(t, c) })
	}
}

func testAgreesWithRedisRate(t *testing.T, c redis.UniversalClient) {
	ctx := context.Background()
	roundedDown, calls := 0, 0
	defer func() {
		t.Logf("redis_rate counted one less than exact on %d of %d calls", roundedDown, calls)
	}()
	var keys []string // as redis_rate names them in Redis
	for _, s := range scenarios {
		for _, seed := range seeds {
			clock := newFakeClock(s.start.Add(-time.Hour))
			local := NewLocalClock(clock.Now)
			prefix := testPrefix(fmt.Sprintf("%s:%d", s.name, seed))
			rr := newRedis(&redisAt{UniversalClient: c, clock: clock, fail: func(m string) { t.Error(m) }}).WithPrefix(prefix)
			for _, k := range s.keys() {
				keys = append(keys, "rate:"+prefix+k)
			}
			t.Cleanup(func() {
				for _, k := range s.keys() {
					rr.Reset(context.Background(), k)
				}
			})
			for i, ev := range schedule(seed, s.start, s.grid, s.keys(), s.limits, stepsPerSeed, s.avoid) {
				clock.Set(ev.at)
				calls++
				lim := s.limits[ev.key]
				lr, err := local.AllowN(ctx, ev.key, lim, ev.n)
				if err != nil {
					t.Fatal(err)
				}
				rres, err := rr.AllowN(ctx, ev.key, lim, ev.n)
				if err != nil {
					t.Fatalf("redis_rate: %v", err)
				}
				where := fmt.Sprintf("%s seed %d step %d (%s cost %d at +%s)", s.name, seed, i, ev.key, ev.n, ev.at.Sub(s.start))
				if msg := check(ev.d, ev.n, rres, s.tol, true); msg != "" {
					t.Fatalf("%s: redis_rate %s", where, msg)
				}
				if ev.d.roundsDown && rres.Remaining == lr.Remaining-1 {
					roundedDown++
					rres.Remaining++
				}
				if lr.Allowed != rres.Allowed || lr.Remaining != rres.Remaining || !near(lr.RetryAfter, rres.RetryAfter, s.tol) || !near(lr.ResetAfter, rres.ResetAfter, s.tol) {
					t.Fatalf("%s: local %+v, redis_rate %+v", where, lr, rres)
				}
			}
		}
	}
	if _, cluster := c.(*redis.ClusterClient); cluster {
		n := nodesHolding(t, c, keys)
		if n < 2 {
			t.Fatalf("the %d keys of the schedules all live on %d node of the Cluster: the test would not show decisions on several nodes", len(keys), n)
		}
		t.Logf("the schedules' %d keys live on %d nodes of the Cluster", len(keys), n)
	}
}

func BenchmarkLocalAllow(b *testing.B) {
	l := NewLocal()
	ctx := context.Background()
	lim := PerDay(1 << 30)
	for i := 0; i < b.N; i++ {
		l.AllowN(ctx, "k", lim, 1)
	}
}
