package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"time"
)

// kv is the primitive each backend provides; the scan cache, idempotency keys
// and screenshots are written once on top of it.
type kv interface {
	get(ctx context.Context, key string) ([]byte, error)
	set(ctx context.Context, key string, val []byte, ttl time.Duration) error
	setNX(ctx context.Context, key string, val []byte, ttl time.Duration) (bool, error)
	del(ctx context.Context, key string) error
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
	b := make([]byte, 8+len(report))
	binary.BigEndian.PutUint64(b, uint64(at.UnixNano()))
	copy(b[8:], report)
	return c.kv.set(ctx, "scan:"+url, b, ttl)
}

type idempotency struct{ kv kv }

func idemKey(scope, key string) string { return "idem:" + scope + "\x00" + key }

func (s idempotency) Begin(ctx context.Context, scope, key, fp string, lease time.Duration) (bool, *IdemRecord, error) {
	rec, _ := json.Marshal(IdemRecord{State: IdemInFlight, Fingerprint: fp, Created: time.Now().UTC()})
	// Replays are the common case: a read answers them without a write.
	if b, err := s.kv.get(ctx, idemKey(scope, key)); err == nil {
		var existing IdemRecord
		if err := json.Unmarshal(b, &existing); err == nil {
			return false, &existing, nil
		}
	}
	for attempt := 0; attempt < 3; attempt++ {
		ok, err := s.kv.setNX(ctx, idemKey(scope, key), rec, lease)
		if err != nil || ok {
			return ok, nil, err
		}
		b, err := s.kv.get(ctx, idemKey(scope, key))
		if errors.Is(err, ErrNotFound) {
			continue // expired between the two calls: try to claim again
		}
		if err != nil {
			return false, nil, err
		}
		var existing IdemRecord
		if err := json.Unmarshal(b, &existing); err != nil {
			return false, nil, err
		}
		return false, &existing, nil
	}
	return false, nil, errors.New("idempotency key kept changing state; retry")
}

func (s idempotency) Complete(ctx context.Context, scope, key string, rec IdemRecord, ttl time.Duration) error {
	rec.State = IdemDone
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return s.kv.set(ctx, idemKey(scope, key), b, ttl)
}

func (s idempotency) Release(ctx context.Context, scope, key string) error {
	return s.kv.del(ctx, idemKey(scope, key))
}

type screenshots struct{ kv kv }

func (s screenshots) Get(ctx context.Context, url string) ([]byte, error) {
	return s.kv.get(ctx, "shot:"+url)
}

func (s screenshots) Put(ctx context.Context, url string, png []byte, ttl time.Duration) error {
	return s.kv.set(ctx, "shot:"+url, png, ttl)
}
