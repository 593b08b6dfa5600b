package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is the shared backend for several origins.
type Redis struct {
	c      *redis.Client
	prefix string
}

// OpenRedis connects to url (redis://host:port/db) and checks it answers.
func OpenRedis(ctx context.Context, url string) (*Redis, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL %q: %w", url, err)
	}
	opt.PoolSize = 64
	c := redis.NewClient(opt)
	r := &Redis{c: c, prefix: "agentready:"}
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("Redis at %s does not answer: %w", opt.Addr, err)
	}
	return r, nil
}

// Client is the underlying connection pool (shared with the rate limiter).
func (r *Redis) Client() *redis.Client { return r.c }

// WithPrefix returns a view whose keys live under another prefix (tests use one per run).
func (r *Redis) WithPrefix(p string) *Redis { return &Redis{c: r.c, prefix: p} }

func (r *Redis) Name() string                   { return "redis" }
func (r *Redis) Ping(ctx context.Context) error { return r.c.Ping(ctx).Err() }
func (r *Redis) ScanCache() ScanCache           { return scanCache{r} }
func (r *Redis) Idempotency() Idempotency       { return idempotency{r} }
func (r *Redis) Screenshots() Screenshots       { return screenshots{r} }
func (r *Redis) Monitors() Monitors             { return redisMonitors{r} }
func (r *Redis) History() History               { return redisHistory{r} }
func (r *Redis) Close() error                   { return r.c.Close() }

func (r *Redis) get(ctx context.Context, key string) ([]byte, error) {
	b, err := r.c.Get(ctx, r.prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	return b, err
}

func (r *Redis) set(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	return r.c.Set(ctx, r.prefix+key, val, ttl).Err()
}

func (r *Redis) setNX(ctx context.Context, key string, val []byte, ttl time.Duration) (bool, error) {
	err := r.c.SetArgs(ctx, r.prefix+key, val, redis.SetArgs{Mode: "NX", TTL: ttl}).Err()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	return err == nil, err
}

func (r *Redis) del(ctx context.Context, key string) error {
	return r.c.Del(ctx, r.prefix+key).Err()
}

type redisMonitors struct{ r *Redis }

func (m redisMonitors) key(id string) string { return m.r.prefix + "monitor:" + id }
func (m redisMonitors) sched() string        { return m.r.prefix + "monitors:schedule" }

func (m redisMonitors) Create(ctx context.Context, mon Monitor, first time.Time) error {
	b, err := json.Marshal(mon)
	if err != nil {
		return err
	}
	ok, err := m.r.c.SetNX(ctx, m.key(mon.ID), b, 0).Result()
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("monitor %s exists", mon.ID)
	}
	return m.r.c.ZAdd(ctx, m.sched(), redis.Z{Score: float64(first.UnixMilli()), Member: mon.ID}).Err()
}

func (m redisMonitors) Get(ctx context.Context, id string) (Monitor, error) {
	var mon Monitor
	b, err := m.r.c.Get(ctx, m.key(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return mon, ErrNotFound
	}
	if err != nil {
		return mon, err
	}
	return mon, json.Unmarshal(b, &mon)
}

func (m redisMonitors) Update(ctx context.Context, mon Monitor) error {
	b, err := json.Marshal(mon)
	if err != nil {
		return err
	}
	ok, err := m.r.c.SetXX(ctx, m.key(mon.ID), b, redis.KeepTTL).Result()
	if err == nil && !ok {
		return ErrNotFound
	}
	return err
}

func (m redisMonitors) Delete(ctx context.Context, id string) error {
	n, err := m.r.c.Del(ctx, m.key(id)).Result()
	if err != nil {
		return err
	}
	if err := m.r.c.ZRem(ctx, m.sched(), id).Err(); err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// claimScript moves due members to now+lease in one atomic step.
var claimScript = redis.NewScript(`
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(due) do redis.call('ZADD', KEYS[1], ARGV[2], id) end
return due`)

func (m redisMonitors) Claim(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]string, error) {
	if lease <= 0 {
		return nil, errors.New("claim lease must be positive")
	}
	res, err := claimScript.Run(ctx, m.r.c, []string{m.sched()},
		strconv.FormatInt(now.UnixMilli(), 10), strconv.FormatInt(now.Add(lease).UnixMilli(), 10), limit).StringSlice()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return res, err
}

func (m redisMonitors) Reschedule(ctx context.Context, id string, at time.Time) error {
	exists, err := m.r.c.Exists(ctx, m.key(id)).Result()
	if err != nil {
		return err
	}
	if exists == 0 {
		return ErrNotFound
	}
	return m.r.c.ZAdd(ctx, m.sched(), redis.Z{Score: float64(at.UnixMilli()), Member: id}).Err()
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
	_, err = h.r.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, h.r.prefix+"history", e.URL, b)
		p.ZAdd(ctx, h.r.prefix+"history:rank", redis.Z{Score: rank, Member: e.URL})
		return nil
	})
	return err
}

func (h redisHistory) Top(ctx context.Context, offset, limit int) ([]HistoryEntry, int, error) {
	total, err := h.r.c.ZCard(ctx, h.r.prefix+"history:rank").Result()
	if err != nil {
		return nil, 0, err
	}
	urls, err := h.r.c.ZRevRange(ctx, h.r.prefix+"history:rank", int64(offset), int64(offset+limit-1)).Result()
	if err != nil || len(urls) == 0 {
		return []HistoryEntry{}, int(total), err
	}
	vals, err := h.r.c.HMGet(ctx, h.r.prefix+"history", urls...).Result()
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
