package store

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// txkv is the small transactional substrate the monitors and their webhook
// outbox are written on, once, for both backends: string keys (with an
// optional TTL), sorted sets scored by Unix milliseconds, an atomic claim of
// due members, and a conditional multi-write (every condition holds, then
// every write lands, or nothing does). Redis runs the claim and the commit as
// Lua scripts; the embedded file runs them in one bbolt transaction.
//
// Why not a queue library (asynq, Redis Streams)? The same semantics must
// hold on the embedded file, where no such library exists, and the writes
// that matter (a run's new state, its outbox entries and its next run) must
// land together; a queue beside the state cannot make that atomic.
type txkv interface {
	// mget returns each key's value, nil when it is missing or expired.
	mget(ctx context.Context, keys ...string) ([][]byte, error)
	zscore(ctx context.Context, set, member string) (score int64, ok bool, err error)
	// zrange returns up to limit members in score order (descending when desc).
	zrange(ctx context.Context, set string, desc bool, limit int) ([]string, error)
	zcard(ctx context.Context, set string) (int, error)
	// claimDue takes up to limit members of set scored at or below now, and in
	// the same atomic step scores each at until and writes the lease
	// "<token>|<due>" under leasePrefix+member: until then nobody else can
	// claim it, and only the holder of that lease can commit work done under
	// it. due is the member's score when it was first claimed: a member taken
	// over after a lease ran out (or handed back) keeps the due time it had,
	// not the lease's end its score now holds.
	claimDue(ctx context.Context, set, leasePrefix string, now, until int64, token string, limit int) ([]dueMember, error)
	// commit applies ops when every cond holds; false (and nothing written)
	// when one does not.
	commit(ctx context.Context, conds []cond, ops []op) (bool, error)
}

type dueMember struct {
	member string
	score  int64  // the due time (first claim's score)
	lease  string // the lease value now held: "<token>|<due>"
}

// releasedLease marks a lease handed back: nobody holds it, but it keeps
// the due time for the next claim.
const releasedLease = "released"

// leaseHeld: a lease value someone holds (not absent, not handed back).
func leaseHeld(v []byte) bool {
	return v != nil && !strings.HasPrefix(string(v), releasedLease+"|")
}

// leaseDue reads the due time a lease value carries.
func leaseDue(v string) (int64, bool) {
	i := strings.LastIndexByte(v, '|')
	if i < 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(v[i+1:], 10, 64)
	return n, err == nil
}

type condKind string

const (
	condEq      condKind = "eq"      // key holds exactly val
	condAbsent  condKind = "absent"  // key does not exist
	condPresent condKind = "present" // key exists
	condZCardLT condKind = "zcardlt" // the sorted set key has fewer than n members
)

type cond struct {
	kind condKind
	key  string
	val  []byte
	n    int
}

type opKind string

const (
	opSet  opKind = "set"
	opDel  opKind = "del"
	opZAdd opKind = "zadd"
	opZRem opKind = "zrem"
)

type op struct {
	kind   opKind
	key    string
	val    []byte        // set
	ttl    time.Duration // set; 0 = none
	member string        // zadd, zrem
	score  int64         // zadd
}

// eqOrAbsent is the condition "key still holds what was read" for a value
// that may not have existed.
func eqOrAbsent(key string, read []byte) cond {
	if read == nil {
		return cond{kind: condAbsent, key: key}
	}
	return cond{kind: condEq, key: key, val: read}
}

func ms(t time.Time) int64 { return t.UnixMilli() }
