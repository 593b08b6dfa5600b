package wasm_test

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/edgetest"
	"github.com/agentready/agentready/internal/fixture"
	"github.com/agentready/agentready/internal/stack"
)

// A request that waits in a host call holds its instance: a badge for a
// site never scanned waits for the origin's whole scan. With a pool of as
// many instances as CPUs, two badges for a site that never answers stalled
// every other request, a document from the edge included, for the scan's
// whole deadline. The pool now grows while requests wait in host calls.
func TestRequestsWaitingOnTheOriginDoNotStallTheEdge(t *testing.T) {
	hung, err := fixture.StartHung()
	if err != nil {
		t.Fatal(err)
	}
	defer hung.Close()
	svc := edgetest.StartStack(t, edgetest.Env(), stack.Options{EdgeModule: edgeModule(t), CacheDir: filepath.Join(os.TempDir(), "agentready-test-wazero"), ScanDeadline: 4 * time.Second})
	client := &http.Client{Timeout: 10 * time.Second}
	var wg sync.WaitGroup
	defer wg.Wait()
	const stuck = 6 // more than the warm instances (one per CPU, at least 2)
	for i := 0; i < stuck; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			// Different paths: the origin runs one scan per URL at a time.
			resp, err := client.Get(svc.URL + "/api/badge?url=" + url.QueryEscape(hung.URL+"/"+string(rune('a'+i))))
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}(i)
	}
	// Wait until the scans hold the instances (the hung site has their connections).
	for deadline := time.Now().Add(3 * time.Second); hung.Accepted() < stuck; {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d badge scans reached the hung site", hung.Accepted(), stuck)
		}
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	resp, err := client.Get(svc.URL + "/llms.txt")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if took := time.Since(start); resp.StatusCode != 200 || took > time.Second {
		t.Errorf("/llms.txt while %d badge scans wait on a hung site: %d after %s", stuck, resp.StatusCode, took)
	}
}
