package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is the shared backend for several origins.
type Redis struct {
	c       *redis.Client
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

// OpenRedis connects to url (redis://host:port/db) with the default
// RedisOptions and checks it answers.
func OpenRedis(ctx context.Context, url string) (*Redis, error) {
	return OpenRedisWith(ctx, url, RedisOptions{})
}

// OpenRedisWith is OpenRedis with explicit timeouts and breaker settings.
func OpenRedisWith(ctx context.Context, url string, o RedisOptions) (*Redis, error) {
	o.defaults()
	opt, err := redis.ParseURL(url)
	if err != nil {
		// The parser's message may quote the URL, password included.
		return nil, errors.New("REDIS_URL is not a valid redis:// or rediss:// URL (redis://[user:password@]host:port/db)")
	}
	opt.PoolSize = 64
	// go-redis's defaults (3 s reads, 3 retries, 5 dial attempts) make a
	// frozen Redis stall each request for 15–20 s. The rate limiter shares
	// this client, so the same bounds apply to its calls.
	opt.ContextTimeoutEnabled = true
	opt.DialTimeout = o.DialTimeout
	opt.DialerRetries = 1
	opt.ReadTimeout = o.CallTimeout
	opt.WriteTimeout = o.CallTimeout
	opt.PoolTimeout = o.CallTimeout
	opt.MaxRetries = 1
	c := redis.NewClient(opt)
	r := &Redis{c: c, prefix: "agentready:", timeout: o.CallTimeout, br: newBreaker(o.Failures, o.CoolDown)}
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		c.Close()
		var answered redis.Error
		if errors.As(err, &answered) {
			return nil, fmt.Errorf("Redis at %s refused the session (check the password and database in REDIS_URL): %s", opt.Addr, strings.SplitN(err.Error(), "\n", 2)[0])
		}
		return nil, fmt.Errorf("Redis at %s does not answer within 3 s (is it running, and is REDIS_URL right?)", opt.Addr)
	}
	return r, nil
}

// Client is the underlying connection pool (shared with the rate limiter).
func (r *Redis) Client() *redis.Client { return r.c }

// WithPrefix returns a view whose keys live under another prefix (tests use one per run).
func (r *Redis) WithPrefix(p string) *Redis {
	return &Redis{c: r.c, prefix: p, timeout: r.timeout, br: r.br}
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
func (r *Redis) Screenshots() Screenshots { return screenshots{r} }
func (r *Redis) Monitors() Monitors       { return monitors{redisTx{r}} }
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

type redisHistory struct{ r *Redis }

func (h redisHistory) Record(ctx context.Context, e HistoryEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	// One sorted set ranks by score, newer first on ties: score × 1e11 + Unix seconds.
	rank := float64(e.Score)*1e11 + float64(e.ScannedAt.Unix())
	return h.r.do(ctx, func(ctx context.Context) error {
		_, err := h.r.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, h.r.prefix+"history", e.URL, b)
			p.ZAdd(ctx, h.r.prefix+"history:rank", redis.Z{Score: rank, Member: e.URL})
			return nil
		})
		return err
	})
}

func (h redisHistory) Top(ctx context.Context, offset, limit int) ([]HistoryEntry, int, error) {
	var total int64
	var vals []any
	err := h.r.do(ctx, func(ctx context.Context) error {
		var err error
		if total, err = h.r.c.ZCard(ctx, h.r.prefix+"history:rank").Result(); err != nil {
			return err
		}
		urls, err := h.r.c.ZRevRange(ctx, h.r.prefix+"history:rank", int64(offset), int64(offset+limit-1)).Result()
		if err != nil || len(urls) == 0 {
			return err
		}
		vals, err = h.r.c.HMGet(ctx, h.r.prefix+"history", urls...).Result()
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
