package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// The embedded txkv: strings and sorted sets share the kv bucket (bolt.go),
// laid out so that what one monitor's run writes sits together. bbolt
// copies on write every leaf a commit touches (4 KB or more each), so a
// run's cost on disk is about the number of distinct leaves its writes
// land in: keys of one monitor that sort together share a leaf.
//
// A sorted set is named prefix|label (the prefix holds no '|'; a name
// without one is all prefix). Each member's score lives under
// prefix member NUL label, next to the keys named prefix member…
// (the monitor's own records, for the schedule's sets); the order lives
// under prefix NUL label NUL score member, where claims read it in turn.
// Members and labels hold no NUL, and string keys hold none, so no entry
// can be mistaken for another's. An entry's value is the string header
// (no expiry, so the sweep leaves it) with a kind of its own and the score.
//
// Claims made by claimDue (the lease keys, "…:lease") are not written to
// the file: they live in memory (Embedded.leases), changed in the
// committer's order like the file, and such a claim is a read of the file
// (no commit, no fsync; the steady 100-monitor bench spent a fifth of its
// writes on them). The file admits one process, so such a claim only has
// to keep this process's workers apart, and what a crash loses is what a
// restart released anyway (every claim found at open belonged to a dead
// process): the claimed member keeps its score, its due time, so after a
// crash it is due at once, as before. A claim that is held blocks claims
// of its member until its end (until).
//
// A lease written with a commit (a run's deliveries, claimed by the run in
// the commit that records them, which moves their score to the claim's
// end) is written to the file as before: after a crash the file must say
// which members wait only for a dead claim, so that releaseDeadClaims makes
// them due at once. Such a lease ends when its member's score comes due.
type boltTx struct{ e *Embedded }

// memLease is a lease's value and, for a claim, the Unix ms it ends at (0:
// it ends when its member's score comes due).
type memLease struct {
	val   []byte
	until int64
}

// isLease: key is a claim's lease (a monitor's run or a delivery's), kept
// in memory.
func isLease(key string) bool {
	return strings.HasPrefix(key, "{m") && strings.HasSuffix(key, keyLease)
}

// lease reads a lease as the committer's transaction sees it (call it
// from a write's function only): the transaction's own changes, then the
// claims in memory, then the file.
func (e *Embedded) lease(tx *bolt.Tx, key string) (memLease, bool) {
	if l, ok := e.overlay[key]; ok {
		if l == nil {
			return memLease{}, false
		}
		return *l, true
	}
	return e.committedLease(tx, key)
}

// committedLease reads a lease as the committed writes left it: a claim in
// memory, else a lease the file holds.
func (e *Embedded) committedLease(tx *bolt.Tx, key string) (memLease, bool) {
	e.leaseMu.Lock()
	l, ok := e.leases[key]
	e.leaseMu.Unlock()
	if ok {
		return l, true
	}
	v, ok, err := loadVal(tx, []byte(key), e.now().UnixNano())
	if err != nil || !ok {
		return memLease{}, false
	}
	return memLease{val: v}, true
}

// setLease changes a claim in memory in the committer's transaction.
func (e *Embedded) setLease(key string, val []byte, until int64) {
	e.overlay[key] = &memLease{val: bytes.Clone(val), until: until}
}

// delLease forgets the claim in memory, if any, so that reads fall through
// to the file.
func (e *Embedded) delLease(key string) { e.overlay[key] = nil }

// held: a claim holds it, and blocks other claims until its end.
func (l memLease) held(now int64) bool { return l.until > now && leaseHeld(l.val) }

const (
	kindZMember byte = 2 // value: header | score
	kindZOrder  byte = 3 // value: header
)

type zname struct{ prefix, label string }

func zsetName(set string) zname {
	if i := strings.IndexByte(set, '|'); i >= 0 {
		return zname{set[:i], set[i+1:]}
	}
	return zname{prefix: set}
}

func (z zname) memberKey(member string) []byte {
	k := make([]byte, 0, len(z.prefix)+len(member)+1+len(z.label))
	k = append(append(append(k, z.prefix...), member...), 0)
	return append(k, z.label...)
}

func (z zname) orderPrefix() []byte {
	k := make([]byte, 0, len(z.prefix)+2+len(z.label))
	k = append(append(append(k, z.prefix...), 0), z.label...)
	return append(k, 0)
}

func (z zname) orderKey(score []byte, member string) []byte {
	p := z.orderPrefix()
	k := make([]byte, 0, len(p)+8+len(member))
	return append(append(append(k, p...), score...), member...)
}

func scoreBytes(score int64) []byte {
	b := make([]byte, 8)
	// Scores are Unix milliseconds (non-negative); the flip keeps a stray
	// negative in order too.
	binary.BigEndian.PutUint64(b, uint64(score)^(1<<63))
	return b
}

func scoreFrom(b []byte) int64 { return int64(binary.BigEndian.Uint64(b[:8]) ^ (1 << 63)) }

func zentry(kind byte, score []byte) []byte {
	v := make([]byte, valHeader+len(score))
	v[8] = kind
	copy(v[valHeader:], score)
	return v
}

// memberScore is the score a member entry holds (nil: not a member).
func memberScore(kvb *bolt.Bucket, mk []byte) []byte {
	if v := kvb.Get(mk); len(v) == valHeader+8 && v[8] == kindZMember {
		return v[valHeader:]
	}
	return nil
}

func zadd(tx *bolt.Tx, set, member string, score int64) error {
	kvb, z := tx.Bucket(bucketKV), zsetName(set)
	mk := z.memberKey(member)
	if old := memberScore(kvb, mk); old != nil {
		if err := kvb.Delete(z.orderKey(old, member)); err != nil {
			return err
		}
	}
	s := scoreBytes(score)
	if err := kvb.Put(z.orderKey(s, member), zentry(kindZOrder, nil)); err != nil {
		return err
	}
	return kvb.Put(mk, zentry(kindZMember, s))
}

func zrem(tx *bolt.Tx, set, member string) error {
	kvb, z := tx.Bucket(bucketKV), zsetName(set)
	mk := z.memberKey(member)
	old := memberScore(kvb, mk)
	if old == nil {
		return nil
	}
	if err := kvb.Delete(z.orderKey(old, member)); err != nil {
		return err
	}
	return kvb.Delete(mk)
}

// zdel deletes a whole sorted set.
func zdel(tx *bolt.Tx, set string) error {
	var members []string
	zscan(tx, set, false, func(m string, _ int64) bool {
		members = append(members, m)
		return true
	})
	for _, m := range members {
		if err := zrem(tx, set, m); err != nil {
			return err
		}
	}
	return nil
}

func zscoreIn(tx *bolt.Tx, set, member string) (int64, bool) {
	if v := memberScore(tx.Bucket(bucketKV), zsetName(set).memberKey(member)); v != nil {
		return scoreFrom(v), true
	}
	return 0, false
}

func zcardIn(tx *bolt.Tx, set string) int {
	n := 0
	zscan(tx, set, false, func(string, int64) bool { n++; return true })
	return n
}

// zscan calls fn with set's members in score order (descending when desc)
// until it returns false.
func zscan(tx *bolt.Tx, set string, desc bool, fn func(member string, score int64) bool) {
	p := zsetName(set).orderPrefix()
	c := tx.Bucket(bucketKV).Cursor()
	var k []byte
	if desc {
		end := bytes.Clone(p)
		end[len(end)-1]++ // just past every order entry of the set
		if k, _ = c.Seek(end); k == nil {
			k, _ = c.Last()
		} else {
			k, _ = c.Prev()
		}
	} else {
		k, _ = c.Seek(p)
	}
	for ; k != nil && bytes.HasPrefix(k, p) && len(k) >= len(p)+8; k = step(c, desc) {
		if !fn(string(k[len(p)+8:]), scoreFrom(k[len(p):])) {
			return
		}
	}
}

func step(c *bolt.Cursor, desc bool) []byte {
	if desc {
		k, _ := c.Prev()
		return k
	}
	k, _ := c.Next()
	return k
}

func (t boltTx) view(_ context.Context, reads ...read) ([]readResult, error) {
	out := make([]readResult, len(reads))
	now := t.e.now().UnixNano()
	err := t.e.db.View(func(tx *bolt.Tx) error {
		for i, r := range reads {
			switch r.kind {
			case readGet:
				if isLease(r.key) {
					if l, ok := t.e.committedLease(tx, r.key); ok {
						out[i].val = bytes.Clone(l.val)
					}
					continue
				}
				v, _, err := loadVal(tx, []byte(r.key), now)
				if err != nil {
					return err
				}
				out[i].val = v
			case readZScore:
				out[i].score, out[i].ok = zscoreIn(tx, r.key, r.member)
			case readZCard:
				out[i].n = zcardIn(tx, r.key)
			case readZRange:
				zscan(tx, r.key, r.desc, func(m string, score int64) bool {
					out[i].members = append(out[i].members, m)
					if r.scores {
						out[i].scores = append(out[i].scores, score)
					}
					return len(out[i].members) < r.limit
				})
			}
		}
		return nil
	})
	return out, fileError(err)
}

// firstDue: the set has a member due at now that no claim holds (leases
// as read reads them).
func firstDue(tx *bolt.Tx, s dueSet, now int64, read func(*bolt.Tx, string) (memLease, bool)) bool {
	due := false
	zscan(tx, s.set, false, func(m string, score int64) bool {
		if score > now {
			return false
		}
		l, ok := read(tx, s.lease.of(m))
		due = !ok || !l.held(now)
		return !due
	})
	return due
}

func (t boltTx) claimDue(_ context.Context, sets []dueSet, now, until int64, token string, limit int) ([]dueMember, error) {
	// A read first, outside the committer's queue: a claim that finds
	// nothing waits for no commit.
	var due []dueSet
	err := t.e.db.View(func(tx *bolt.Tx) error {
		for _, s := range rotate(sets, token) {
			if firstDue(tx, s, now, t.e.committedLease) {
				due = append(due, s)
			}
		}
		return nil
	})
	if err != nil || len(due) == 0 {
		return nil, fileError(err)
	}
	// The claim: a read of the file in the committer's order, writing the
	// leases in memory (see boltTx).
	var out []dueMember
	nowNS := t.e.now().UnixNano()
	err = t.e.inOrder(func(tx *bolt.Tx) error {
		out = out[:0]
		for _, s := range due {
			var claimed []dueMember
			zscan(tx, s.set, false, func(m string, score int64) bool {
				if score > now || len(out)+len(claimed) >= limit {
					return false
				}
				d := dueMember{member: m, score: score}
				if prev, ok := t.e.lease(tx, s.lease.of(m)); ok {
					if prev.held(now) {
						return true
					}
					if kept, ok := leaseDue(string(prev.val)); ok {
						d.score = kept // taken over, or handed back: its own due time
					}
				}
				claimed = append(claimed, d)
				return true
			})
			for i := range claimed {
				d := &claimed[i]
				d.lease = token + "|" + strconv.FormatInt(d.score, 10)
				t.e.setLease(s.lease.of(d.member), []byte(d.lease), until)
				owner := memberOwner(d.member)
				for _, a := range s.items {
					v, _, err := loadVal(tx, []byte(a.of(d.member)), nowNS)
					if err != nil {
						return err
					}
					d.vals = append(d.vals, v)
				}
				for _, a := range s.owners {
					v, _, err := loadVal(tx, []byte(a.of(owner)), nowNS)
					if err != nil {
						return err
					}
					d.vals = append(d.vals, v)
				}
			}
			out = append(out, claimed...)
			if len(out) >= limit {
				break
			}
		}
		return nil
	})
	return out, err
}

// rotate starts the sets at a place the token picks, so that claims spread
// over them and none waits behind the others.
func rotate(sets []dueSet, token string) []dueSet {
	if len(sets) < 2 || token == "" {
		return sets
	}
	i := int(token[0]) % len(sets)
	return append(append(make([]dueSet, 0, len(sets)), sets[i:]...), sets[:i]...)
}

func (t boltTx) commit(_ context.Context, conds []cond, ops []op) (bool, error) {
	ok := true
	now := t.e.now().UnixNano()
	err := t.e.update(func(tx *bolt.Tx) error {
		ok = true
		kvb := tx.Bucket(bucketKV)
		for _, c := range conds {
			if isLease(c.key) {
				l, exists := t.e.lease(tx, c.key)
				switch c.kind {
				case condEq:
					ok = exists && bytes.Equal(l.val, c.val)
				case condAbsent, condPresent:
					ok = exists == (c.kind == condPresent)
				default:
					ok = false
				}
				if !ok {
					return nil
				}
				continue
			}
			switch c.kind {
			case condEq:
				v, exists, err := loadVal(tx, []byte(c.key), now)
				if err != nil {
					return err
				}
				ok = exists && bytes.Equal(v, c.val)
			case condAbsent, condPresent:
				v := kvb.Get([]byte(c.key))
				exists := v != nil && !expired(v, now) && (v[8] == kindInline || v[8] == kindInlineS2 || v[8] == kindBlob)
				ok = exists == (c.kind == condPresent)
			case condZCardLT:
				ok = zcardIn(tx, c.key) < c.n
			}
			if !ok {
				return nil
			}
		}
		for _, o := range ops {
			if isLease(o.key) && (o.kind == opSet || o.kind == opDel) {
				// A lease set or deleted with a commit is the file's (see
				// boltTx); a claim in memory under the same key is over.
				t.e.delLease(o.key)
			}
			var err error
			switch o.kind {
			case opSet:
				exp := int64(0)
				if o.ttl > 0 {
					exp = now + int64(o.ttl)
				}
				err = t.e.putVal(tx, []byte(o.key), o.val, exp)
			case opDel:
				// A key is a string or a sorted set (as in Redis): DEL takes either.
				if err = delVal(tx, []byte(o.key)); err == nil {
					err = zdel(tx, o.key)
				}
			case opExpireAt:
				err = setExpiry(tx, []byte(o.key), o.score*1e6, now)
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
	return ok && err == nil, err
}

// releaseDeadClaims makes every run and delivery a previous process had
// claimed due again. bbolt's file lock admits one process at a time, so a
// lease found at open belongs to a process that died holding it (kill -9,
// power loss); waiting for it to run out would only delay the work. Leases
// now live in memory (see boltTx), so only a file written by an earlier
// build holds any: each is moved into memory, handed back.
func (e *Embedded) releaseDeadClaims(tx *bolt.Tx, now int64) error {
	kvb := tx.Bucket(bucketKV)
	type lease struct{ key, val []byte }
	var dead []lease
	suffix := []byte(keyLease)
	// Every lease key begins with the embedded layout's one shard base
	// (leaseOwner): the rest of the file (the scan cache, the history, the
	// blobs) is not read at open.
	prefix := []byte(embeddedLayout.runSets[0].lease.pre)
	c := kvb.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if bytes.HasSuffix(k, suffix) && !expired(v, 0) && v[8] == kindInline {
			dead = append(dead, lease{bytes.Clone(k), bytes.Clone(v[valHeader:])})
		}
	}
	for _, l := range dead {
		set, member, ok := leaseOwner(string(l.key))
		if !ok {
			continue
		}
		if err := delVal(tx, l.key); err != nil {
			return err
		}
		if !leaseHeld(l.val) {
			e.leases[string(l.key)] = memLease{val: l.val}
			continue
		}
		// Due again now; the lease is marked handed back so the next
		// claim still reports the run's own due time.
		due, ok := leaseDue(string(l.val))
		if !ok {
			due = now
		}
		if _, ok := zscoreIn(tx, set, member); ok {
			if err := zadd(tx, set, member, min(now, due)); err != nil {
				return err
			}
		}
		e.leases[string(l.key)] = memLease{val: []byte(releasedLease + "|" + strconv.FormatInt(due, 10))}
	}
	return nil
}

// leaseOwner maps a lease key back to the sorted set and member it guards.
func leaseOwner(key string) (set, member string, ok bool) {
	for _, sets := range [][]dueSet{embeddedLayout.runSets, embeddedLayout.dlvSets} {
		for _, s := range sets {
			if m, ok := strings.CutPrefix(key, s.lease.pre); ok {
				if m, ok = strings.CutSuffix(m, s.lease.post); ok && strings.Contains(m, "/") == (s.items != nil) {
					return s.set, m, true
				}
			}
		}
	}
	return "", "", false
}
