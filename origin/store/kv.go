package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// kv is the primitive each backend provides; the scan cache, idempotency keys
// and screenshots are written once on top of it.
type kv interface {
	get(ctx context.Context, key string) ([]byte, error)
	set(ctx context.Context, key string, val []byte, ttl time.Duration) error
	// setParts is set with head+body as the value: the embedded file keeps
	// a large body apart, by its hash, so the same body under another key
	// (a run's report, the scan cache's copy of it) is stored once.
	setParts(ctx context.Context, key string, head, body []byte, ttl time.Duration) error
	setNX(ctx context.Context, key string, val []byte, ttl time.Duration) (bool, error)
	del(ctx context.Context, key string) error
	// swapOwned replaces (val != nil, for ttl) or deletes (val == nil) key
	// only while it holds an in-flight idempotency record of owner, in one
	// atomic step; false when it does not.
	swapOwned(ctx context.Context, key, owner string, val []byte, ttl time.Duration) (bool, error)
}

// ownedInFlight reports whether b is an in-flight record held by owner.
func ownedInFlight(b []byte, owner string) bool {
	var r IdemRecord
	return json.Unmarshal(b, &r) == nil && r.State == IdemInFlight && r.Owner == owner
}

type scanCache struct{ kv kv }

func (c scanCache) Get(ctx context.Context, url string) ([]byte, time.Time, error) {
	b, err := c.kv.get(ctx, "scan:"+url)
	if err != nil {
		return nil, time.Time{}, err
	}
	if len(b) < 8 {
		return nil, time.Time{}, ErrNotFound
	}
	at := time.Unix(0, int64(binary.BigEndian.Uint64(b[:8]))).UTC()
	return b[8:], at, nil
}

func (c scanCache) Put(ctx context.Context, url string, report []byte, at time.Time, ttl time.Duration) error {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, uint64(at.UnixNano()))
	return c.kv.setParts(ctx, "scan:"+url, b, report, ttl)
}

type idempotency struct{ kv kv }

func idemKey(scope, key string) string { return "idem:" + scope + "\x00" + key }

func newOwner() string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func (s idempotency) Begin(ctx context.Context, scope, key, fp string, lease time.Duration) (*Claim, *IdemRecord, error) {
	// Replays are the common case: a read answers them without a write.
	if existing, err := s.read(ctx, scope, key); err == nil {
		return nil, existing, nil
	} else if !errors.Is(err, ErrNotFound) {
		return nil, nil, err
	}
	now := time.Now().UTC()
	c := &Claim{Scope: scope, Key: key, Owner: newOwner(), Expires: now.Add(lease)}
	rec, _ := json.Marshal(IdemRecord{State: IdemInFlight, Fingerprint: fp, Created: now, Owner: c.Owner, Expires: c.Expires})
	for attempt := 0; attempt < 3; attempt++ {
		ok, err := s.kv.setNX(ctx, idemKey(scope, key), rec, lease)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			return c, nil, nil
		}
		existing, err := s.read(ctx, scope, key)
		if errors.Is(err, ErrNotFound) {
			continue // expired between the two calls: try to claim again
		}
		if err != nil {
			return nil, nil, err
		}
		return nil, existing, nil
	}
	return nil, nil, errors.New("idempotency key kept changing state; retry")
}

func (s idempotency) read(ctx context.Context, scope, key string) (*IdemRecord, error) {
	b, err := s.kv.get(ctx, idemKey(scope, key))
	if err != nil {
		return nil, err
	}
	var r IdemRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("idempotency record for %q is corrupt: %w", key, err)
	}
	return &r, nil
}

func (s idempotency) Renew(ctx context.Context, c *Claim, lease time.Duration) error {
	r, err := s.read(ctx, c.Scope, c.Key)
	if errors.Is(err, ErrNotFound) {
		return ErrLeaseLost
	}
	if err != nil {
		return err
	}
	expires := time.Now().UTC().Add(lease)
	r.Expires = expires
	b, _ := json.Marshal(r)
	return s.swap(ctx, c, b, lease, func() { c.Expires = expires })
}

func (s idempotency) Complete(ctx context.Context, c *Claim, rec IdemRecord, ttl time.Duration) error {
	rec.State, rec.Owner, rec.Expires = IdemDone, "", time.Time{}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return s.swap(ctx, c, b, ttl, nil)
}

func (s idempotency) Release(ctx context.Context, c *Claim) error {
	return s.swap(ctx, c, nil, 0, nil)
}

func (s idempotency) swap(ctx context.Context, c *Claim, val []byte, ttl time.Duration, then func()) error {
	ok, err := s.kv.swapOwned(ctx, idemKey(c.Scope, c.Key), c.Owner, val, ttl)
	if err != nil {
		return err
	}
	if !ok {
		return ErrLeaseLost
	}
	if then != nil {
		then()
	}
	return nil
}

type screenshots struct{ kv kv }

// A stored screenshot is captured-at (8 bytes, Unix seconds), the ETag's
// length (1 byte), the ETag, then the PNG: one value, so the image and its
// validators can never disagree after a partial write.
const shotHeader = 9

func shotETag(png []byte) string {
	sum := sha256.Sum256(png)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

func (s screenshots) Get(ctx context.Context, url string) (Screenshot, error) {
	b, err := s.kv.get(ctx, "shot:"+url)
	if err != nil {
		return Screenshot{}, err
	}
	if len(b) < shotHeader || len(b) < shotHeader+int(b[8]) {
		return Screenshot{}, ErrNotFound // written by an older layout: as good as absent
	}
	n := int(b[8])
	return Screenshot{
		CapturedAt: time.Unix(int64(binary.BigEndian.Uint64(b[:8])), 0).UTC(),
		ETag:       string(b[shotHeader : shotHeader+n]),
		PNG:        b[shotHeader+n:],
	}, nil
}

func (s screenshots) Put(ctx context.Context, url string, png []byte, at time.Time, ttl time.Duration) error {
	if len(png) > MaxScreenshotBytes {
		return ErrTooLarge
	}
	tag := shotETag(png)
	b := make([]byte, shotHeader+len(tag)+len(png))
	binary.BigEndian.PutUint64(b, uint64(at.Unix()))
	b[8] = byte(len(tag))
	copy(b[shotHeader:], tag)
	copy(b[shotHeader+len(tag):], png)
	return s.kv.set(ctx, "shot:"+url, b, ttl)
}
