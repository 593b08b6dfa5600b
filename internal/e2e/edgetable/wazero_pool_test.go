package edgetable_test

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/edgemodule"
	"github.com/agentready/agentready/internal/testing/edgetest"
	"github.com/agentready/agentready/internal/testing/stacktest"
)

// A request that waits in a host call holds its instance: a badge for a
// site never scanned waits for the origin's whole scan. With a pool of as
// many instances as CPUs, two badges for a site that never answers stalled
// every other request, a document from the edge included, for the scan's
// whole deadline. The pool now grows while requests wait in host calls.
//
// The origin here answers nothing until the test releases it, so the proof
// is an order, not a duration: /llms.txt is answered while every badge
// still waits on the origin, which is released only afterwards. Were the
// pool not to grow, /llms.txt could not be answered before the release.
func TestRequestsWaitingOnTheOriginDoNotStallTheEdge(t *testing.T) {
	hung := edgetest.StartHungOrigin(t)

	env := edgetest.Env()
	env["AGENTREADY_EDGE_SECRET"] = "0123456789abcdef0123456789abcdef"
	env["AGENTREADY_FREE_DAILY"] = "1000" // every badge below reaches the origin
	svc := stacktest.Start(t, env, stack.Options{Role: stack.RoleEdge, Origins: []string{hung.URL},
		EdgeModule: edgemodule.Build(t), CacheDir: filepath.Join(os.TempDir(), "agentready-test-wazero")})

	// More than the warm instances (wasm.Options.Instances: one per CPU, at
	// least 2), fewer than the most the pool grows to (4 times as many).
	stuck := max(2, runtime.NumCPU()) + 2
	client := &http.Client{Timeout: time.Minute} // a safety net: the test releases them
	var answered atomic.Int32
	var wg sync.WaitGroup
	defer wg.Wait()
	defer hung.Release() // runs before wg.Wait
	for i := 0; i < stuck; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer answered.Add(1)
			resp, err := client.Get(svc.URL + "/api/badge?url=" + url.QueryEscape("https://never-scanned.example/"+strconv.Itoa(i)))
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	// Wait until every badge holds an instance in a host call to the origin.
	for deadline := time.Now().Add(30 * time.Second); hung.Waiting() < int32(stuck); {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d badges reached the origin within 30 s (%d answered)", hung.Waiting(), stuck, answered.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := answered.Load(); n != 0 {
		t.Fatalf("%d badges were answered without waiting on the origin", n)
	}
	type result struct {
		code int
		err  error
	}
	doc := make(chan result, 1)
	go func() {
		resp, err := client.Get(svc.URL + "/llms.txt")
		if err != nil {
			doc <- result{0, err}
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		doc <- result{resp.StatusCode, nil}
	}()
	select {
	case r := <-doc:
		if r.err != nil || r.code != 200 {
			t.Errorf("/llms.txt while %d badges wait on the origin: %d %v", stuck, r.code, r.err)
		}
		if n, w := answered.Load(), hung.Waiting(); n != 0 || w != int32(stuck) {
			t.Errorf("/llms.txt was answered, but %d badges were answered and %d still wait: the order proves nothing", n, w)
		}
	case <-time.After(30 * time.Second): // a safety net: the origin is never released before
		t.Fatalf("/llms.txt not answered within 30 s while %d badges wait on the origin: they stall the edge", stuck)
	}
	hung.Release()
	// Once released, the badges are answered (and the grown instances return).
	for deadline := time.Now().Add(30 * time.Second); answered.Load() < int32(stuck); {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d badges answered within 30 s of the origin's release", answered.Load(), stuck)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
