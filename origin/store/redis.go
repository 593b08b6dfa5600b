package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/agentready/agentready/internal/redisconn"
	"github.com/redis/go-redis/v9"
)

// Redis is the shared backend for several origins: one Redis, or a Redis
// Cluster. The same code runs on both: every key a script or a transaction
// touches carries the same hash tag (txkv.go), so it lives in one slot.
type Redis struct {
	c       redis.UniversalClient
	cluster bool
	prefix  string
	timeout time.Duration
	br      *breaker
}

// RedisOptions bound how long a request can wait for Redis. Zero fields take
// the defaults in parentheses.
type RedisOptions struct {
	CallTimeout time.Duration // one store call, retries included (500 ms); also go-redis's read/write/pool timeouts
	DialTimeout time.Duration // one connection attempt (1 s)
	Failures    int           // consecutive failed calls that open the circuit breaker (3)
	CoolDown    time.Duration // how long the open breaker fails calls fast before a probe (2 s)
}

func (o *RedisOptions) defaults() {
	if o.CallTimeout <= 0 {
		o.CallTimeout = 500 * time.Millisecond
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = time.Second
	}
	if o.Failures <= 0 {
		o.Failures = 3
	}
	if o.CoolDown <= 0 {
		o.CoolDown = 2 * time.Second
	}
}

// OpenRedis connects to url with the default RedisOptions and checks it
// answers. url is redis://[user:password@]host:port[/db] for one Redis
// (rediss:// for TLS), or, for a Redis Cluster, several of its nodes:
// separated by commas, redis://[user:password@]host:port,host:port,…, or in
// go-redis's form, redis://[user:password@]host:port?addr=host:port&addr=…
// (database 0 only, as a Cluster has no other). A single host:port that
// turns out to be a Cluster node is used as the Cluster's seed.
func OpenRedis(ctx context.Context, url string) (*Redis, error) {
	return OpenRedisWith(ctx, url, RedisOptions{})
}

// OpenRedisWith is OpenRedis with explicit timeouts and breaker settings.
func OpenRedisWith(ctx context.Context, url string, o RedisOptions) (*Redis, error) {
	o.defaults()
	c, cluster, err := redisconn.Open(ctx, url, redisconn.Options{CallTimeout: o.CallTimeout, DialTimeout: o.DialTimeout})
	if err != nil {
		return nil, err
	}
	r := &Redis{c: c, cluster: cluster, prefix: "agentready:", timeout: o.CallTimeout, br: newBreaker(o.Failures, o.CoolDown)}
	if !cluster {
		if err := r.refuseOldLayout(ctx); err != nil {
			r.c.Close()
			return nil, err
		}
	}
	return r, nil
}

// parseRedisURL reads REDIS_URL as OpenRedis does (redisconn.Parse).
func parseRedisURL(raw string) (cluster *redis.ClusterOptions, single *redis.Options, err error) {
	return redisconn.Parse(raw)
}

// refuseOldLayout refuses a Redis holding monitors as agentready kept them
// before the keys carried hash tags: this version would not see them, and
// starting as if there were none would drop them silently (docs/deploy.md,
// "Where the state lives, and when to move").
func (r *Redis) refuseOldLayout(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	n, err := r.c.Exists(cctx, r.prefix+"sched:runs", r.prefix+"sched:deliveries").Result()
	if err != nil || n == 0 {
		return nil
	}
	return errors.New("this Redis holds monitors in the key layout of an earlier agentready (" + r.prefix + "sched:runs), which this version does not read: run the earlier version to keep them, or delete the old " + r.prefix + "* keys to start afresh")
}

// Cluster reports whether this is a Redis Cluster.
func (r *Redis) Cluster() bool { return r.cluster }

// Client is the underlying connection pool (shared with the rate limiter):
// a *redis.Client or a *redis.ClusterClient.
func (r *Redis) Client() redis.UniversalClient { return r.c }

// WithPrefix returns a view whose keys live under another prefix (tests use
// one per run). A prefix must hold no '{' or '}': those would make it the
// hash tag of every key.
func (r *Redis) WithPrefix(p string) *Redis {
	if strings.ContainsAny(p, "{}") {
		panic("store: a Redis key prefix must not contain { or }")
	}
	return &Redis{c: r.c, cluster: r.cluster, prefix: p, timeout: r.timeout, br: r.br}
}

// DeleteAll deletes every key under this view's prefix, on every node of a
// Cluster. Tests and benchmarks use it to leave a shared Redis as they
// found it.
func (r *Redis) DeleteAll(ctx context.Context) error {
	pattern := globEscape(r.prefix) + "*"
	del := func(ctx context.Context, c *redis.Client) error {
		var cursor uint64
		for {
			keys, next, err := c.Scan(ctx, cursor, pattern, 1000).Result()
			if err != nil {
				return err
			}
			for _, k := range keys { // one by one: a Cluster node refuses a DEL across slots
				if err := c.Del(ctx, k).Err(); err != nil {
					return err
				}
			}
			if cursor = next; cursor == 0 {
				return nil
			}
		}
	}
	switch c := r.c.(type) {
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, del)
	case *redis.Client:
		return del(ctx, c)
	}
	return errors.New("store: unknown Redis client")
}

func globEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// do runs one store call under the call timeout and the circuit breaker.
// Every error that means "Redis did not answer" becomes an
// *UnavailableError with a fixed cause: go-redis's messages name addresses.
func (r *Redis) do(ctx context.Context, call func(ctx context.Context) error) error {
	probe, unavailable := r.br.allow()
	if unavailable != nil {
		return unavailable
	}
	cctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	err := call(cctx)
	var answered redis.Error
	switch {
	case err == nil, errors.Is(err, redis.Nil), errors.Is(err, ErrNotFound), errors.As(err, &answered):
		r.br.done(probe, false)
		return err
	case ctx.Err() != nil:
		// The caller gave up (client gone): says nothing about Redis.
		r.br.abandon(probe)
		return ctx.Err()
	}
	r.br.done(probe, true)
	cause := "no answer within " + r.timeout.String()
	if !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
		cause = "connection failed"
	}
	return &UnavailableError{RetryAfter: r.br.retryAfter(), Cause: cause, Err: err}
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

func (r *Redis) Name() string { return "redis" }
func (r *Redis) Ping(ctx context.Context) error {
	return r.do(ctx, func(ctx context.Context) error { return r.c.Ping(ctx).Err() })
}
func (r *Redis) ScanCache() ScanCache     { return scanCache{r} }
func (r *Redis) Idempotency() Idempotency { return idempotency{r} }
func (r *Redis) Replays() Replays         { return kvReplays{r} }
func (r *Redis) Screenshots() Screenshots { return screenshots{r} }
func (r *Redis) Monitors() Monitors       { return monitors{redisTx{r}, redisLayout} }
func (r *Redis) History() History         { return redisHistory{r} }
func (r *Redis) Close() error             { return r.c.Close() }

func (r *Redis) get(ctx context.Context, key string) ([]byte, error) {
	var b []byte
	err := r.do(ctx, func(ctx context.Context) (err error) {
		b, err = r.c.Get(ctx, r.prefix+key).Bytes()
		return err
	})
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	return b, err
}

func (r *Redis) set(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	return r.do(ctx, func(ctx context.Context) error { return r.c.Set(ctx, r.prefix+key, val, ttl).Err() })
}

func (r *Redis) setParts(ctx context.Context, key string, head, body []byte, ttl time.Duration) error {
	return r.set(ctx, key, append(append(make([]byte, 0, len(head)+len(body)), head...), body...), ttl)
}

func (r *Redis) setNX(ctx context.Context, key string, val []byte, ttl time.Duration) (bool, error) {
	err := r.do(ctx, func(ctx context.Context) error {
		return r.c.SetArgs(ctx, r.prefix+key, val, redis.SetArgs{Mode: "NX", TTL: ttl}).Err()
	})
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	return err == nil, err
}

func (r *Redis) del(ctx context.Context, key string) error {
	return r.do(ctx, func(ctx context.Context) error { return r.c.Del(ctx, r.prefix+key).Err() })
}

// swapScript replaces or deletes an in-flight idempotency record, only if
// ARGV[1] still owns it (Redis scripts run atomically).
var swapScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local ok, rec = pcall(cjson.decode, v)
if not ok or type(rec) ~= 'table' or rec.state ~= 'in_flight' or rec.owner ~= ARGV[1] then return 0 end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1])
elseif tonumber(ARGV[3]) > 0 then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
else
  redis.call('SET', KEYS[1], ARGV[2])
end
return 1`)

func (r *Redis) swapOwned(ctx context.Context, key, owner string, val []byte, ttl time.Duration) (bool, error) {
	var n int64
	err := r.do(ctx, func(ctx context.Context) (err error) {
		n, err = swapScript.Run(ctx, r.c, []string{r.prefix + key}, owner, val, ttl.Milliseconds()).Int64()
		return err
	})
	return n == 1, err
}

// Open picks the backend: Redis when redisURL is set, else the embedded file under dataDir.
func Open(ctx context.Context, dataDir, redisURL string) (Backend, error) {
	if redisURL != "" {
		return OpenRedis(ctx, redisURL)
	}
	return OpenEmbedded(dataDir)
}

// The history hash and its ranking are written in one transaction: one
// hash tag puts them in one slot of a Cluster. A site's series is one key
// of its own (seriesKey), written alone, so the series spread over the
// Cluster's slots.
const (
	keyHistory     = "{history}"
	keyHistoryRank = "{history}:rank"
	keySeries      = "series:"
)

// seriesKey names url's series. Written and read alone, it needs no hash
// tag; a brace in url at most picks another slot for it.
func seriesKey(url string) string { return keySeries + url }

type redisHistory struct{ r *Redis }

func (h redisHistory) Record(ctx context.Context, e HistoryEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	// One sorted set ranks by score, newer first on ties: score × 1e11 + Unix seconds.
	rank := float64(e.Score)*1e11 + float64(e.ScannedAt.Unix())
	key := h.r.prefix + seriesKey(e.URL)
	conflict := false
	err = h.r.do(ctx, func(ctx context.Context) error {
		_, err := h.r.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, h.r.prefix+keyHistory, e.URL, b)
			p.ZAdd(ctx, h.r.prefix+keyHistoryRank, redis.Z{Score: rank, Member: e.URL})
			return nil
		})
		if err != nil {
			return err
		}
		// The series is read, grown and written back under WATCH: a record
		// of the same site by another origin in between makes this one
		// start again from what that one wrote.
		for range casTries {
			err = h.r.c.Watch(ctx, func(tx *redis.Tx) error {
				cur, err := tx.Get(ctx, key).Bytes()
				if err != nil && !errors.Is(err, redis.Nil) {
					return err
				}
				_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.Set(ctx, key, appendSeries(cur, e), SeriesIdle)
					return nil
				})
				return err
			}, key)
			if !errors.Is(err, redis.TxFailedErr) {
				return err
			}
		}
		conflict = true
		return nil
	})
	if err == nil && conflict {
		return ErrConflict
	}
	return err
}

func (h redisHistory) Series(ctx context.Context, url string, checks bool) ([]HistoryEntry, error) {
	v, err := h.r.get(ctx, seriesKey(url))
	if errors.Is(err, ErrNotFound) {
		return []HistoryEntry{}, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeSeries(url, v, checks)
}

func (h redisHistory) Top(ctx context.Context, offset, limit int) ([]HistoryEntry, int, error) {
	var total int64
	var vals []any
	err := h.r.do(ctx, func(ctx context.Context) error {
		var err error
		if total, err = h.r.c.ZCard(ctx, h.r.prefix+keyHistoryRank).Result(); err != nil {
			return err
		}
		urls, err := h.r.c.ZRevRange(ctx, h.r.prefix+keyHistoryRank, int64(offset), int64(offset+limit-1)).Result()
		if err != nil || len(urls) == 0 {
			return err
		}
		vals, err = h.r.c.HMGet(ctx, h.r.prefix+keyHistory, urls...).Result()
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	out := make([]HistoryEntry, 0, len(vals))
	for _, v := range vals {
		if s, ok := v.(string); ok {
			var e HistoryEntry
			if json.Unmarshal([]byte(s), &e) == nil {
				out = append(out, e)
			}
		}
	}
	return out, int(total), nil
}
