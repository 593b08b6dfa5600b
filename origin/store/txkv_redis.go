package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// redisCommit checks every condition, then applies every write; a Redis
// script runs atomically, so no other client sees or interleaves a partial
// commit. KEYS: every key the commit touches (one hash slot: see
// redisTx.commit). ARGV: the number of conditions, 3 values per condition
// (kind, key index, value), then 5 per write (kind, key index, value,
// number, member).
var redisCommit = redis.NewScript(`
local n = tonumber(ARGV[1])
local i = 2
for c = 1, n do
  local kind, key, val = ARGV[i], KEYS[tonumber(ARGV[i+1])], ARGV[i+2]
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
  local kind, key, a, b, c = ARGV[i], KEYS[tonumber(ARGV[i+1])], ARGV[i+2], ARGV[i+3], ARGV[i+4]
  i = i + 5
  if kind == 'set' then
    if tonumber(b) > 0 then redis.call('SET', key, a, 'PX', b) else redis.call('SET', key, a) end
  elseif kind == 'del' then
    redis.call('DEL', key)
  elseif kind == 'expireat' then
    redis.call('PEXPIREAT', key, b)
  elseif kind == 'zadd' then
    redis.call('ZADD', key, b, c)
  elseif kind == 'zrem' then
    redis.call('ZREM', key, c)
  else
    return redis.error_reply('unknown write ' .. kind)
  end
end
return 0`)

// redisClaimDue: KEYS[1] the set; ARGV: now, until, token, limit, the
// lease key's prefix and suffix, the number of item keys, their prefixes
// and suffixes, the number of owner keys, theirs (see dueSet). Returns, per
// member claimed: member, due, lease, then the value of each item and owner
// key (false when missing). A member whose previous lease (run out, or
// handed back) carries a due time keeps it. The lease and the keys read
// share the set's hash tag (dueSet), so they live in its slot.
var redisClaimDue = redis.NewScript(`
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[4]))
local ni = tonumber(ARGV[7])
local no = tonumber(ARGV[8 + 2 * ni])
local out = {}
for i = 1, #due, 2 do
  local m, d = due[i], due[i+1]
  local lk = ARGV[5] .. m .. ARGV[6]
  local prev = redis.call('GET', lk)
  if prev then
    local kept = string.match(prev, '|(%-?%d+)$')
    if kept then d = kept end
  end
  local lease = ARGV[3] .. '|' .. d
  redis.call('ZADD', KEYS[1], ARGV[2], m)
  redis.call('SET', lk, lease)
  table.insert(out, m)
  table.insert(out, d)
  table.insert(out, lease)
  local owner = m
  local slash = string.find(m, '/', 1, true)
  if slash then owner = string.sub(m, 1, slash - 1) end
  for j = 1, ni do table.insert(out, redis.call('GET', ARGV[6 + 2 * j] .. m .. ARGV[7 + 2 * j])) end
  for j = 1, no do table.insert(out, redis.call('GET', ARGV[7 + 2 * ni + 2 * j] .. owner .. ARGV[8 + 2 * ni + 2 * j])) end
end
return out`)

type redisTx struct{ r *Redis }

func (t redisTx) view(ctx context.Context, reads ...read) ([]readResult, error) {
	out := make([]readResult, len(reads))
	if len(reads) == 1 && reads[0].kind == readGet {
		v, err := t.r.get(ctx, reads[0].key)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		out[0].val = v
		return out, nil
	}
	// Reads of one hash slot are one snapshot (MULTI/EXEC); reads across
	// slots (a Cluster refuses a transaction over them) are one pipeline.
	pipelined := t.r.c.TxPipelined
	for _, r := range reads[1:] {
		if hashTag(r.key) != hashTag(reads[0].key) {
			pipelined = t.r.c.Pipelined
		}
	}
	cmds := make([]redis.Cmder, len(reads))
	err := t.r.do(ctx, func(ctx context.Context) error {
		_, err := pipelined(ctx, func(p redis.Pipeliner) error {
			for i, r := range reads {
				k := t.r.prefix + r.key
				switch r.kind {
				case readGet:
					cmds[i] = p.Get(ctx, k)
				case readZScore:
					cmds[i] = p.ZScore(ctx, k, r.member)
				case readZCard:
					cmds[i] = p.ZCard(ctx, k)
				case readZRange:
					args := redis.ZRangeArgs{Key: k, Start: 0, Stop: int64(r.limit - 1), Rev: r.desc}
					if r.scores {
						cmds[i] = p.ZRangeArgsWithScores(ctx, args)
					} else {
						cmds[i] = p.ZRangeArgs(ctx, args)
					}
				}
			}
			return nil
		})
		if errors.Is(err, redis.Nil) {
			err = nil // a missing key or member, answered per command below
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	for i, c := range cmds {
		switch c := c.(type) {
		case *redis.StringCmd:
			if b, err := c.Bytes(); err == nil {
				out[i].val = b
			}
		case *redis.FloatCmd:
			if f, err := c.Result(); err == nil {
				out[i].score, out[i].ok = int64(f), true
			}
		case *redis.IntCmd:
			out[i].n = int(c.Val())
		case *redis.StringSliceCmd:
			out[i].members = c.Val()
		case *redis.ZSliceCmd:
			for _, z := range c.Val() {
				m, _ := z.Member.(string)
				out[i].members = append(out[i].members, m)
				out[i].scores = append(out[i].scores, int64(z.Score))
			}
		}
	}
	return out, nil
}

func (t redisTx) claimDue(ctx context.Context, sets []dueSet, now, until int64, token string, limit int) ([]dueMember, error) {
	sets = rotate(sets, token)
	// Which sets have anything due: read-only, one round trip (per node).
	peek := make([]*redis.StringSliceCmd, len(sets))
	err := t.r.do(ctx, func(ctx context.Context) error {
		_, err := t.r.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, s := range sets {
				peek[i] = p.ZRangeByScore(ctx, t.r.prefix+s.set, &redis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(now, 10), Count: 1})
			}
			return nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []dueMember
	for i, s := range sets {
		if len(peek[i].Val()) == 0 {
			continue
		}
		args := []any{now, until, token, limit - len(out), t.r.prefix + s.lease.pre, s.lease.post, len(s.items)}
		for _, a := range s.items {
			args = append(args, t.r.prefix+a.pre, a.post)
		}
		args = append(args, len(s.owners))
		for _, a := range s.owners {
			args = append(args, t.r.prefix+a.pre, a.post)
		}
		var raw []any
		err := t.r.do(ctx, func(ctx context.Context) (err error) {
			raw, err = redisClaimDue.Run(ctx, t.r.c, []string{t.r.prefix + s.set}, args...).Slice()
			return err
		})
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return out, err
		}
		width := 3 + len(s.items) + len(s.owners)
		for j := 0; j+width <= len(raw); j += width {
			m, _ := raw[j].(string)
			d, _ := raw[j+1].(string)
			l, _ := raw[j+2].(string)
			f, _ := strconv.ParseFloat(d, 64)
			dm := dueMember{member: m, score: int64(f), lease: l}
			for _, v := range raw[j+3 : j+width] {
				if s, ok := v.(string); ok {
					dm.vals = append(dm.vals, []byte(s))
				} else {
					dm.vals = append(dm.vals, nil)
				}
			}
			out = append(out, dm)
		}
		if len(out) >= limit {
			break
		}
	}
	return out, nil
}

// errCrossSlot is a bug: a commit whose keys would live in different hash
// slots of a Cluster. It is refused on one Redis too, so tests catch it.
var errCrossSlot = errors.New("store: a commit touches keys of different hash slots")

func (t redisTx) commit(ctx context.Context, conds []cond, ops []op) (bool, error) {
	var keys []string
	index := map[string]int{}
	key := func(k string) int {
		full := t.r.prefix + k
		if i, ok := index[full]; ok {
			return i
		}
		keys = append(keys, full)
		index[full] = len(keys)
		return len(keys)
	}
	args := make([]any, 0, 1+3*len(conds)+5*len(ops))
	args = append(args, len(conds))
	for _, c := range conds {
		val := string(c.val)
		if c.kind == condZCardLT {
			val = strconv.Itoa(c.n)
		}
		args = append(args, string(c.kind), key(c.key), val)
	}
	for _, o := range ops {
		args = append(args, string(o.kind), key(o.key), string(o.val), "", o.member)
		switch o.kind {
		case opSet:
			args[len(args)-2] = o.ttl.Milliseconds()
		case opZAdd, opExpireAt:
			args[len(args)-2] = o.score
		}
	}
	if len(keys) == 0 {
		return true, nil
	}
	tag := hashTag(keys[0])
	for _, k := range keys[1:] {
		if hashTag(k) != tag {
			return false, fmt.Errorf("%w: %q and %q", errCrossSlot, keys[0], k)
		}
	}
	var failed int64
	err := t.r.do(ctx, func(ctx context.Context) (err error) {
		failed, err = redisCommit.Run(ctx, t.r.c, keys, args...).Int64()
		return err
	})
	return err == nil && failed == 0, err
}
