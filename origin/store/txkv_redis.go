package store

import (
	"context"
	"errors"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// redisCommit checks every condition, then applies every write; a Redis
// script runs atomically, so no other client sees or interleaves a partial
// commit. ARGV: the number of conditions, 3 values per condition, then 5 per
// write. Keys are built by the caller (a single Redis, not a Cluster).
var redisCommit = redis.NewScript(`
local n = tonumber(ARGV[1])
local i = 2
for c = 1, n do
  local kind, key, val = ARGV[i], ARGV[i+1], ARGV[i+2]
  i = i + 3
  if kind == 'eq' then
    if redis.call('GET', key) ~= val then return c end
  elseif kind == 'absent' then
    if redis.call('EXISTS', key) == 1 then return c end
  elseif kind == 'present' then
    if redis.call('EXISTS', key) == 0 then return c end
  elseif kind == 'zcardlt' then
    if redis.call('ZCARD', key) >= tonumber(val) then return c end
  else
    return redis.error_reply('unknown condition ' .. kind)
  end
end
while i <= #ARGV do
  local kind, key, a, b, c = ARGV[i], ARGV[i+1], ARGV[i+2], ARGV[i+3], ARGV[i+4]
  i = i + 5
  if kind == 'set' then
    if tonumber(b) > 0 then redis.call('SET', key, a, 'PX', b) else redis.call('SET', key, a) end
  elseif kind == 'del' then
    redis.call('DEL', key)
  elseif kind == 'zadd' then
    redis.call('ZADD', key, b, c)
  elseif kind == 'zrem' then
    redis.call('ZREM', key, c)
  else
    return redis.error_reply('unknown write ' .. kind)
  end
end
return 0`)

// redisClaimDue: KEYS[1] the set; ARGV: lease key prefix, now, until, token,
// limit. Returns member, due, lease triples; a member whose previous lease
// (run out, or handed back) carries a due time keeps it.
var redisClaimDue = redis.NewScript(`
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[5]))
local out = {}
for i = 1, #due, 2 do
  local m, d = due[i], due[i+1]
  local prev = redis.call('GET', ARGV[1] .. m)
  if prev then
    local kept = string.match(prev, '|(%-?%d+)$')
    if kept then d = kept end
  end
  local lease = ARGV[4] .. '|' .. d
  redis.call('ZADD', KEYS[1], ARGV[3], m)
  redis.call('SET', ARGV[1] .. m, lease)
  table.insert(out, m)
  table.insert(out, d)
  table.insert(out, lease)
end
return out`)

type redisTx struct{ r *Redis }

func (t redisTx) mget(ctx context.Context, keys ...string) ([][]byte, error) {
	full := make([]string, len(keys))
	for i, k := range keys {
		full[i] = t.r.prefix + k
	}
	var vals []any
	err := t.r.do(ctx, func(ctx context.Context) (err error) {
		vals, err = t.r.c.MGet(ctx, full...).Result()
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(keys))
	for i, v := range vals {
		if s, ok := v.(string); ok {
			out[i] = []byte(s)
		}
	}
	return out, nil
}

func (t redisTx) zscore(ctx context.Context, set, member string) (int64, bool, error) {
	var f float64
	err := t.r.do(ctx, func(ctx context.Context) (err error) {
		f, err = t.r.c.ZScore(ctx, t.r.prefix+set, member).Result()
		return err
	})
	if errors.Is(err, redis.Nil) {
		return 0, false, nil
	}
	return int64(f), err == nil, err
}

func (t redisTx) zrange(ctx context.Context, set string, desc bool, limit int) ([]string, error) {
	var out []string
	err := t.r.do(ctx, func(ctx context.Context) (err error) {
		out, err = t.r.c.ZRangeArgs(ctx, redis.ZRangeArgs{Key: t.r.prefix + set, Start: 0, Stop: int64(limit - 1), Rev: desc}).Result()
		return err
	})
	return out, err
}

func (t redisTx) zcard(ctx context.Context, set string) (int, error) {
	var n int64
	err := t.r.do(ctx, func(ctx context.Context) (err error) {
		n, err = t.r.c.ZCard(ctx, t.r.prefix+set).Result()
		return err
	})
	return int(n), err
}

func (t redisTx) claimDue(ctx context.Context, set, leasePrefix string, now, until int64, token string, limit int) ([]dueMember, error) {
	var raw []any
	err := t.r.do(ctx, func(ctx context.Context) (err error) {
		raw, err = redisClaimDue.Run(ctx, t.r.c, []string{t.r.prefix + set},
			t.r.prefix+leasePrefix, now, until, token, limit).Slice()
		return err
	})
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]dueMember, 0, len(raw)/3)
	for i := 0; i+2 < len(raw); i += 3 {
		m, _ := raw[i].(string)
		s, _ := raw[i+1].(string)
		l, _ := raw[i+2].(string)
		f, _ := strconv.ParseFloat(s, 64)
		out = append(out, dueMember{member: m, score: int64(f), lease: l})
	}
	return out, nil
}

func (t redisTx) commit(ctx context.Context, conds []cond, ops []op) (bool, error) {
	args := make([]any, 0, 1+3*len(conds)+5*len(ops))
	args = append(args, len(conds))
	for _, c := range conds {
		val := string(c.val)
		if c.kind == condZCardLT {
			val = strconv.Itoa(c.n)
		}
		args = append(args, string(c.kind), t.r.prefix+c.key, val)
	}
	for _, o := range ops {
		args = append(args, string(o.kind), t.r.prefix+o.key, string(o.val), "", o.member)
		switch o.kind {
		case opSet:
			args[len(args)-2] = o.ttl.Milliseconds()
		case opZAdd:
			args[len(args)-2] = o.score
		}
	}
	var failed int64
	err := t.r.do(ctx, func(ctx context.Context) (err error) {
		failed, err = redisCommit.Run(ctx, t.r.c, nil, args...).Int64()
		return err
	})
	return err == nil && failed == 0, err
}
