package store

import (
	"context"
	"sync"
	"time"
)

// Replays remembers the signed identities the origin accepted, so that a
// captured one sent again (to this origin, or to any origin sharing the
// store) is refused while it would still verify.
type Replays interface {
	// First reports whether key is seen for the first time within ttl,
	// and remembers it for ttl.
	First(ctx context.Context, key string, ttl time.Duration) (bool, error)
}

// kvReplays keeps the keys in the shared store (Redis): SET NX with a TTL.
type kvReplays struct{ kv kv }

func (r kvReplays) First(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	return r.kv.setNX(ctx, "replay:"+key, []byte{1}, ttl)
}

// memReplays keeps the keys in memory, for the embedded store: one process
// holds it, so no other origin can be sent a replay, and a file write per
// forwarded request would cost far more than the check is worth. Keys are
// kept in generations of ttl each and a key is forgotten once two newer
// generations exist, so memory holds at most the keys of about three ttl's.
type memReplays struct {
	mu       sync.Mutex
	now      func() time.Time
	gens     [3]map[string]struct{}
	genStart time.Time
}

func newMemReplays(now func() time.Time) *memReplays {
	r := &memReplays{now: now}
	for i := range r.gens {
		r.gens[i] = map[string]struct{}{}
	}
	return r
}

func (r *memReplays) First(_ context.Context, key string, ttl time.Duration) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	for r.genStart.IsZero() || now.Sub(r.genStart) >= ttl {
		if r.genStart.IsZero() || now.Sub(r.genStart) >= 3*ttl {
			for i := range r.gens {
				clear(r.gens[i])
			}
			r.genStart = now
			break
		}
		r.gens[2], r.gens[1], r.gens[0] = r.gens[1], r.gens[0], r.gens[2]
		clear(r.gens[0])
		r.genStart = r.genStart.Add(ttl)
	}
	for _, g := range r.gens {
		if _, seen := g[key]; seen {
			return false, nil
		}
	}
	r.gens[0][key] = struct{}{}
	return true, nil
}
