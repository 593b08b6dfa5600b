package wasm

import (
	"context"
	"log/slog"
	"sync"
)

// pool lends instances, one request each. At most warm of them run module
// code at once (one per CPU: more would only contend), but an instance that
// waits in a host call does not count: a badge for a site never scanned
// holds its instance for the origin's whole scan (seconds), and a fixed pool
// of one instance per CPU let two such requests stall every other one. So
// the pool grows, up to max, by the instances waiting in host calls.
// Instances beyond warm are closed when they come back with nobody waiting,
// so memory (about 10 MB an instance) returns to the warm level after a burst.
type pool struct {
	warm, max int
	fresh     func(context.Context) (*instance, error)
	discard   func(*instance)

	mu      sync.Mutex
	idle    []*instance
	live    int              // idle + lent + being instantiated
	blocked int              // lent instances waiting in a host call
	waiters []chan *instance // FIFO; a nil send means "a slot is free: make one"
}

// canGrow reports whether another instance may be made: under max, and
// fewer than warm of the lent ones running module code. Called with mu held
// and no idle instance.
func (p *pool) canGrow() bool { return p.live < p.max && p.live-p.blocked < p.warm }

// get lends an instance: an idle one, else a fresh one when the pool may
// grow, else the next one returned (until ctx ends).
func (p *pool) get(ctx context.Context) (*instance, error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		inst := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return inst, nil
	}
	if p.canGrow() {
		p.live++
		p.mu.Unlock()
		return p.make(ctx)
	}
	ch := make(chan *instance, 1)
	p.waiters = append(p.waiters, ch)
	p.mu.Unlock()
	select {
	case inst := <-ch:
		if inst == nil {
			return p.make(ctx)
		}
		return inst, nil
	case <-ctx.Done():
		p.mu.Lock()
		for i, w := range p.waiters {
			if w == ch {
				p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
				p.mu.Unlock()
				return nil, ctx.Err()
			}
		}
		p.mu.Unlock()
		// Handed one just as ctx ended: pass it on.
		if inst := <-ch; inst != nil {
			p.put(inst)
		} else {
			p.release()
		}
		return nil, ctx.Err()
	}
}

// make instantiates for a slot already counted in live.
func (p *pool) make(ctx context.Context) (*instance, error) {
	inst, err := p.fresh(context.WithoutCancel(ctx))
	if err != nil {
		p.release()
		return nil, err
	}
	return inst, nil
}

// put returns an instance: to the first waiter, else to the idle list while
// it holds fewer than warm, else it is closed.
func (p *pool) put(inst *instance) {
	p.mu.Lock()
	if len(p.waiters) > 0 {
		w := p.waiters[0]
		p.waiters = p.waiters[1:]
		p.mu.Unlock()
		w <- inst
		return
	}
	if len(p.idle) < p.warm {
		p.idle = append(p.idle, inst)
		p.mu.Unlock()
		return
	}
	p.live--
	p.mu.Unlock()
	p.discard(inst)
}

// release gives up a slot whose instance is gone (it trapped, or could not
// be made): a waiter, if any, makes a fresh one in its place.
func (p *pool) release() {
	p.mu.Lock()
	if len(p.waiters) > 0 {
		w := p.waiters[0]
		p.waiters = p.waiters[1:]
		p.mu.Unlock()
		w <- nil
		return
	}
	p.live--
	p.mu.Unlock()
}

// block notes that a lent instance waits in a host call until unblock; a
// waiter may then have a fresh instance.
func (p *pool) block() {
	p.mu.Lock()
	p.blocked++
	if len(p.waiters) > 0 && len(p.idle) == 0 && p.canGrow() {
		p.live++
		w := p.waiters[0]
		p.waiters = p.waiters[1:]
		p.mu.Unlock()
		w <- nil
		return
	}
	p.mu.Unlock()
}

func (p *pool) unblock() {
	p.mu.Lock()
	p.blocked--
	p.mu.Unlock()
}

// sizes reports the idle and live counts (tests).
func (p *pool) sizes() (idle, live int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle), p.live
}

func logDiscardErr(err error) {
	if err != nil {
		slog.Error("closing an edge instance", "err", err)
	}
}
