package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"
)

var (
	bucketKV      = []byte("kv")
	bucketHistory = []byte("history") // url → HistoryEntry JSON
)

// Embedded is the single-node backend: one bbolt file.
type Embedded struct {
	db   *bolt.DB
	stop chan struct{}
	done chan struct{}
}

// OpenEmbedded opens (or creates) dir/agentready.db. Writes are fsynced before
// they are acknowledged, so an acknowledged write survives kill -9.
func OpenEmbedded(dir string) (*Embedded, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, "agentready.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("%s is in use by another process (is another agentready serve running with the same --data?)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketKV, bucketZSets, bucketHistory} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = releaseDeadLeases(db)
	}
	if err == nil {
		err = releaseDeadClaims(db)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	e := &Embedded{db: db, stop: make(chan struct{}), done: make(chan struct{})}
	go e.sweep()
	return e, nil
}

func (e *Embedded) Name() string                   { return "embedded" }
func (e *Embedded) Ping(ctx context.Context) error { return nil }
func (e *Embedded) ScanCache() ScanCache           { return scanCache{e} }
func (e *Embedded) Idempotency() Idempotency       { return idempotency{e} }
func (e *Embedded) Screenshots() Screenshots       { return screenshots{e} }
func (e *Embedded) Monitors() Monitors             { return monitors{boltTx{e.db}} }
func (e *Embedded) History() History               { return boltHistory{e.db} }
func (e *Embedded) Close() error {
	close(e.stop)
	<-e.done
	return e.db.Close()
}

// sweep deletes expired entries now and then so the file does not grow without bound.
func (e *Embedded) sweep() {
	defer close(e.done)
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
			now := time.Now().UnixNano()
			_ = e.db.Update(func(tx *bolt.Tx) error {
				c := tx.Bucket(bucketKV).Cursor()
				n := 0
				for k, v := c.First(); k != nil && n < 10000; k, v = c.Next() {
					n++
					if exp := int64(binary.BigEndian.Uint64(v[:8])); exp != 0 && exp <= now {
						if err := c.Delete(); err != nil {
							return err
						}
					}
				}
				return nil
			})
		}
	}
}

func encode(val []byte, ttl time.Duration) []byte {
	b := make([]byte, 8+len(val))
	if ttl > 0 {
		binary.BigEndian.PutUint64(b, uint64(time.Now().Add(ttl).UnixNano()))
	}
	copy(b[8:], val)
	return b
}

func live(v []byte) ([]byte, bool) {
	if len(v) < 8 {
		return nil, false
	}
	if exp := int64(binary.BigEndian.Uint64(v[:8])); exp != 0 && exp <= time.Now().UnixNano() {
		return nil, false
	}
	return v[8:], true
}

// fileError reports a failed read or write of the data file (disk full, I/O
// error, closed database) as the store being unavailable, like a Redis
// outage: callers answer 503 state_unavailable either way.
func fileError(err error) error {
	if err == nil || errors.Is(err, ErrNotFound) {
		return err
	}
	return &UnavailableError{RetryAfter: time.Second, Cause: "the data file could not be read or written", Err: err}
}

func (e *Embedded) get(_ context.Context, key string) ([]byte, error) {
	var out []byte
	err := e.db.View(func(tx *bolt.Tx) error {
		v, ok := live(tx.Bucket(bucketKV).Get([]byte(key)))
		if !ok {
			return ErrNotFound
		}
		out = bytes.Clone(v)
		return nil
	})
	return out, fileError(err)
}

func (e *Embedded) set(_ context.Context, key string, val []byte, ttl time.Duration) error {
	return fileError(e.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketKV).Put([]byte(key), encode(val, ttl)) }))
}

func (e *Embedded) setNX(_ context.Context, key string, val []byte, ttl time.Duration) (bool, error) {
	ok := false
	err := e.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketKV)
		if _, exists := live(b.Get([]byte(key))); exists {
			return nil
		}
		ok = true
		return b.Put([]byte(key), encode(val, ttl))
	})
	return ok, fileError(err)
}

func (e *Embedded) del(_ context.Context, key string) error {
	return fileError(e.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketKV).Delete([]byte(key)) }))
}

func (e *Embedded) swapOwned(_ context.Context, key, owner string, val []byte, ttl time.Duration) (bool, error) {
	ok := false
	err := e.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketKV)
		cur, exists := live(b.Get([]byte(key)))
		if !exists || !ownedInFlight(cur, owner) {
			return nil
		}
		ok = true
		if val == nil {
			return b.Delete([]byte(key))
		}
		return b.Put([]byte(key), encode(val, ttl))
	})
	return ok, fileError(err)
}

var inFlightPrefix = []byte(`{"state":"` + IdemInFlight + `"`)

// releaseDeadLeases frees the idempotency keys left in flight by a previous
// process. bbolt's file lock admits one process at a time, so every in-flight
// key found at open belongs to a process that died before finishing (kill -9,
// power loss): keeping it would answer 409 until its lease ran out.
func releaseDeadLeases(db *bolt.DB) error {
	return db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketKV)
		var dead [][]byte
		c := b.Cursor()
		prefix := []byte("idem:")
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			// State is the record's first member: the prefix test skips
			// decoding the (many, larger) completed records.
			var r IdemRecord
			if val, ok := live(v); ok && bytes.HasPrefix(val, inFlightPrefix) && json.Unmarshal(val, &r) == nil && r.State == IdemInFlight {
				dead = append(dead, bytes.Clone(k))
			}
		}
		for _, k := range dead {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

type boltHistory struct{ db *bolt.DB }

func (h boltHistory) Record(_ context.Context, e HistoryEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return h.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketHistory).Put([]byte(e.URL), b) })
}

// maxHistory bounds the entries ranked per query on the single-node backend.
const maxHistory = 100000

func (h boltHistory) Top(_ context.Context, offset, limit int) ([]HistoryEntry, int, error) {
	var all []HistoryEntry
	err := h.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketHistory).ForEach(func(_, v []byte) error {
			var e HistoryEntry
			if len(all) < maxHistory && json.Unmarshal(v, &e) == nil {
				all = append(all, e)
			}
			return nil
		})
	})
	if err != nil {
		return nil, 0, err
	}
	sortHistory(all)
	return page(all, offset, limit), len(all), nil
}

func sortHistory(all []HistoryEntry) {
	sort.Slice(all, func(i, j int) bool {
		if all[i].Score != all[j].Score {
			return all[i].Score > all[j].Score
		}
		return all[i].ScannedAt.After(all[j].ScannedAt)
	})
}

func page(all []HistoryEntry, offset, limit int) []HistoryEntry {
	if offset >= len(all) {
		return []HistoryEntry{}
	}
	end := offset + limit
	if end > len(all) {
		end = len(all)
	}
	return all[offset:end]
}
