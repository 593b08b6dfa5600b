package edgetest

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// HungOrigin is an origin that holds every request (but its health probe)
// until Release, or until the request is canceled, then answers 503: what
// the edge sees of an origin that stopped answering.
type HungOrigin struct {
	URL     string
	release func()
	waiting atomic.Int32
}

// StartHungOrigin starts one for the length of the test. Its cleanup
// releases the requests before it closes the server, which waits for them.
func StartHungOrigin(tb testing.TB) *HungOrigin {
	h := &HungOrigin{}
	release := make(chan struct{})
	h.release = sync.OnceFunc(func() { close(release) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" { // the balancer's probe: this origin is up
			return
		}
		h.waiting.Add(1)
		defer h.waiting.Add(-1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
		http.Error(w, "released by the test", http.StatusServiceUnavailable)
	}))
	h.URL = srv.URL
	tb.Cleanup(srv.Close)
	tb.Cleanup(h.release) // cleanups run last first: released, then closed
	return h
}

// Waiting is how many requests it holds now.
func (h *HungOrigin) Waiting() int32 { return h.waiting.Load() }

// Release lets every held request (and every later one) through; it may be
// called more than once.
func (h *HungOrigin) Release() { h.release() }
