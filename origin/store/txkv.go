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
// Every claim and every commit touches keys of one hash slot only: keys
// carry a hash tag ("{m7}…", see tagOf), and the Redis side refuses a commit
// whose keys carry different tags before sending it, on one Redis as on a
// Cluster, so a test on one Redis catches what a Cluster would refuse.
//
// Why not a queue library (asynq, Redis Streams)? The same semantics must
// hold on the embedded file, where no such library exists, and the writes
// that matter (a run's new state, its outbox entries and its next run) must
// land together; a queue beside the state cannot make that atomic.
type txkv interface {
	// view makes every read in one step: one bbolt read transaction, one
	// Redis round trip (MULTI/EXEC per hash slot).
	view(ctx context.Context, reads ...read) ([]readResult, error)
	// claimDue takes up to limit members scored at or below now from the
	// sets (taken in turn from a rotating start, so no set starves), and in
	// the same atomic step per set scores each at until and writes the
	// lease "<token>|<due>" under the set's leasePrefix+member: until then
	// nobody else can claim it, and only the holder of that lease can commit
	// work done under it. due is the member's score when it was first
	// claimed: a member taken over after a lease ran out (or handed back)
	// keeps the due time it had, not the lease's end its score now holds.
	// The values of the set's item and owner keys are read in the same step
	// and returned with each member. Sets with nothing due are found by a
	// read first: a claim that finds nothing writes nothing.
	claimDue(ctx context.Context, sets []dueSet, now, until int64, token string, limit int) ([]dueMember, error)
	// commit applies ops when every cond holds; false (and nothing written)
	// when one does not.
	commit(ctx context.Context, conds []cond, ops []op) (bool, error)
}

type readKind uint8

const (
	readGet    readKind = iota // the value of key (nil: missing or expired)
	readZScore                 // member's score in the sorted set key
	readZRange                 // up to limit members of key in score order (descending when desc)
	readZCard                  // how many members key has
)

type read struct {
	kind   readKind
	key    string
	member string // readZScore
	desc   bool   // readZRange
	limit  int    // readZRange
	scores bool   // readZRange: with each member's score
}

func get(key string) read              { return read{kind: readGet, key: key} }
func zscoreOf(set, member string) read { return read{kind: readZScore, key: set, member: member} }
func zcardOf(set string) read          { return read{kind: readZCard, key: set} }
func zrangeOf(set string, desc bool, limit int) read {
	return read{kind: readZRange, key: set, desc: desc, limit: limit}
}

type readResult struct {
	val     []byte   // readGet
	score   int64    // readZScore, when ok
	ok      bool     // readZScore: the member is in the set
	members []string // readZRange
	scores  []int64  // readZRange with scores
	n       int      // readZCard
}

// gets reads keys' values in one view.
func gets(ctx context.Context, t txkv, keys ...string) ([][]byte, error) {
	reads := make([]read, len(keys))
	for i, k := range keys {
		reads[i] = get(k)
	}
	res, err := t.view(ctx, reads...)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(keys))
	for i := range res {
		out[i] = res[i].val
	}
	return out, nil
}

// dueSet is one sorted set claimDue takes from. A member may name its owner
// before a slash ("mon_x/evt_y": a delivery of a monitor); owner is the
// part before it (the whole member when there is none). The lease of a
// member is the key lease.of(member); the keys read with each claim are
// items[i].of(member), then owners[i].of(owner).
type dueSet struct {
	set    string
	lease  affix
	items  []affix
	owners []affix
}

// affix names a key after a member or an owner: pre + it + post.
type affix struct{ pre, post string }

func (a affix) of(s string) string { return a.pre + s + a.post }

func memberOwner(m string) string {
	if i := strings.IndexByte(m, '/'); i >= 0 {
		return m[:i]
	}
	return m
}

type dueMember struct {
	member string
	score  int64    // the due time (first claim's score)
	lease  string   // the lease value now held: "<token>|<due>"
	vals   [][]byte // the items' values, then the owners', as dueSet names them
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
	opSet      opKind = "set"
	opDel      opKind = "del"
	opExpireAt opKind = "expireat" // a new expiry (Unix ms in score) for key, if it exists
	opZAdd     opKind = "zadd"
	opZRem     opKind = "zrem"
)

type op struct {
	kind   opKind
	key    string
	val    []byte        // set
	ttl    time.Duration // set; 0 = none
	member string        // zadd, zrem
	score  int64         // zadd; expireat
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

// hashTag is the part of key Redis Cluster hashes to pick its slot: what
// lies between the first '{' and the next '}', when that is not empty;
// otherwise the whole key.
func hashTag(key string) string {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key[i+1 : i+1+j]
		}
	}
	return key
}
