package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The embedded txkv: strings live in the kv bucket (with the same TTL
// encoding as the scan cache), each sorted set in a bucket under zsets with
// two sub-buckets, member → score and score+member → nothing (the order).
var (
	bucketZSets = []byte("zsets")
	zMembers    = []byte("m")
	zOrder      = []byte("o")
)

type boltTx struct{ db *bolt.DB }

func zkey(score int64, member string) []byte {
	k := make([]byte, 8+len(member))
	// Scores are Unix milliseconds (non-negative); the flip keeps a stray
	// negative in order too.
	binary.BigEndian.PutUint64(k, uint64(score)^(1<<63))
	copy(k[8:], member)
	return k
}

func zscoreOf(k []byte) int64 { return int64(binary.BigEndian.Uint64(k[:8]) ^ (1 << 63)) }

func zset(tx *bolt.Tx, set string, create bool) (members, order *bolt.Bucket, err error) {
	root := tx.Bucket(bucketZSets)
	b := root.Bucket([]byte(set))
	if b == nil {
		if !create {
			return nil, nil, nil
		}
		if b, err = root.CreateBucket([]byte(set)); err != nil {
			return nil, nil, err
		}
		if _, err = b.CreateBucket(zMembers); err != nil {
			return nil, nil, err
		}
		if _, err = b.CreateBucket(zOrder); err != nil {
			return nil, nil, err
		}
	}
	return b.Bucket(zMembers), b.Bucket(zOrder), nil
}

func zadd(tx *bolt.Tx, set, member string, score int64) error {
	m, o, err := zset(tx, set, true)
	if err != nil {
		return err
	}
	if old := m.Get([]byte(member)); old != nil {
		if err := o.Delete(append(bytes.Clone(old), member...)); err != nil {
			return err
		}
	}
	k := zkey(score, member)
	if err := o.Put(k, nil); err != nil {
		return err
	}
	return m.Put([]byte(member), k[:8])
}

func zrem(tx *bolt.Tx, set, member string) error {
	m, o, err := zset(tx, set, false)
	if err != nil || m == nil {
		return err
	}
	old := m.Get([]byte(member))
	if old == nil {
		return nil
	}
	if err := o.Delete(append(bytes.Clone(old), member...)); err != nil {
		return err
	}
	return m.Delete([]byte(member))
}

func (t boltTx) mget(_ context.Context, keys ...string) ([][]byte, error) {
	out := make([][]byte, len(keys))
	err := t.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketKV)
		for i, k := range keys {
			if v, ok := live(b.Get([]byte(k))); ok {
				out[i] = bytes.Clone(v)
			}
		}
		return nil
	})
	return out, fileError(err)
}

func (t boltTx) zscore(_ context.Context, set, member string) (score int64, ok bool, err error) {
	err = t.db.View(func(tx *bolt.Tx) error {
		m, _, _ := zset(tx, set, false)
		if m == nil {
			return nil
		}
		if v := m.Get([]byte(member)); v != nil {
			score, ok = zscoreOf(v), true
		}
		return nil
	})
	return score, ok, fileError(err)
}

func (t boltTx) zrange(_ context.Context, set string, desc bool, limit int) ([]string, error) {
	var out []string
	err := t.db.View(func(tx *bolt.Tx) error {
		_, o, _ := zset(tx, set, false)
		if o == nil {
			return nil
		}
		c := o.Cursor()
		first, next := c.First, c.Next
		if desc {
			first, next = c.Last, c.Prev
		}
		for k, _ := first(); k != nil && len(out) < limit; k, _ = next() {
			out = append(out, string(k[8:]))
		}
		return nil
	})
	return out, fileError(err)
}

func (t boltTx) zcard(_ context.Context, set string) (int, error) {
	n := 0
	err := t.db.View(func(tx *bolt.Tx) error {
		if m, _, _ := zset(tx, set, false); m != nil {
			n = m.Stats().KeyN
		}
		return nil
	})
	return n, fileError(err)
}

func (t boltTx) claimDue(_ context.Context, set, leasePrefix string, now, until int64, token string, limit int) ([]dueMember, error) {
	var out []dueMember
	err := t.db.Update(func(tx *bolt.Tx) error {
		_, o, err := zset(tx, set, false)
		if err != nil || o == nil {
			return err
		}
		c := o.Cursor()
		for k, _ := c.First(); k != nil && zscoreOf(k) <= now && len(out) < limit; k, _ = c.Next() {
			out = append(out, dueMember{member: string(k[8:]), score: zscoreOf(k)})
		}
		kvb := tx.Bucket(bucketKV)
		for i := range out {
			d := &out[i]
			if prev, ok := live(kvb.Get([]byte(leasePrefix + d.member))); ok {
				if kept, ok := leaseDue(string(prev)); ok {
					d.score = kept
				}
			}
			d.lease = token + "|" + strconv.FormatInt(d.score, 10)
			if err := zadd(tx, set, d.member, until); err != nil {
				return err
			}
			if err := kvb.Put([]byte(leasePrefix+d.member), encode([]byte(d.lease), 0)); err != nil {
				return err
			}
		}
		return nil
	})
	return out, fileError(err)
}

func (t boltTx) commit(_ context.Context, conds []cond, ops []op) (bool, error) {
	ok := true
	err := t.db.Update(func(tx *bolt.Tx) error {
		kvb := tx.Bucket(bucketKV)
		for _, c := range conds {
			v, exists := live(kvb.Get([]byte(c.key)))
			switch c.kind {
			case condEq:
				ok = exists && bytes.Equal(v, c.val)
			case condAbsent:
				ok = !exists
			case condPresent:
				ok = exists
			case condZCardLT:
				n := 0
				if m, _, _ := zset(tx, c.key, false); m != nil {
					n = m.Stats().KeyN
				}
				ok = n < c.n
			}
			if !ok {
				return nil
			}
		}
		for _, o := range ops {
			var err error
			switch o.kind {
			case opSet:
				err = kvb.Put([]byte(o.key), encode(o.val, o.ttl))
			case opDel:
				err = kvb.Delete([]byte(o.key))
			case opZAdd:
				err = zadd(tx, o.key, o.member, o.score)
			case opZRem:
				err = zrem(tx, o.key, o.member)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	return ok && err == nil, fileError(err)
}

// releaseDeadClaims makes every run and delivery a previous process had
// claimed due again. bbolt's file lock admits one process at a time, so a
// lease found at open belongs to a process that died holding it (kill -9,
// power loss); waiting for it to run out would only delay the work.
func releaseDeadClaims(db *bolt.DB) error {
	now := time.Now().UnixMilli()
	return db.Update(func(tx *bolt.Tx) error {
		kvb := tx.Bucket(bucketKV)
		type lease struct{ key, val []byte }
		var dead []lease
		c := kvb.Cursor()
		prefix := []byte(keyLease)
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if val, ok := live(v); ok {
				dead = append(dead, lease{bytes.Clone(k), bytes.Clone(val)})
			}
		}
		for _, l := range dead {
			set, member, ok := leaseOwner(string(l.key))
			if !ok || !leaseHeld(l.val) {
				continue
			}
			// Due again now; the lease is marked handed back so the next
			// claim still reports the run's own due time.
			due, ok := leaseDue(string(l.val))
			if !ok {
				due = now
			}
			if m, _, _ := zset(tx, set, false); m != nil && m.Get([]byte(member)) != nil {
				if err := zadd(tx, set, member, min(now, due)); err != nil {
					return err
				}
			}
			if err := kvb.Put(l.key, encode([]byte(releasedLease+"|"+strconv.FormatInt(due, 10)), 0)); err != nil {
				return err
			}
		}
		return nil
	})
}

// leaseOwner maps a lease key back to the sorted set and member it guards.
func leaseOwner(key string) (set, member string, ok bool) {
	switch {
	case strings.HasPrefix(key, keyRunLease):
		return setRuns, strings.TrimPrefix(key, keyRunLease), true
	case strings.HasPrefix(key, keyDeliveryLease):
		return setDeliveries, strings.TrimPrefix(key, keyDeliveryLease), true
	}
	return "", "", false
}
