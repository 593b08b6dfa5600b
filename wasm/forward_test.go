package wasm_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/testing/edgemodule"
	"github.com/agentready/agentready/wasm"
)

// host serves the module in front of origin, connecting through dial.
func host(t *testing.T, origin *httptest.Server, dial func(context.Context) (net.Conn, error)) *httptest.Server {
	t.Helper()
	env := map[string]string{"AGENTREADY_TOKEN_KEYS": "k1:0123456789abcdef0123456789abcdef", "AGENTREADY_EDGE_SECRET": "s3cret"}
	h, err := wasm.New(context.Background(), edgemodule.Build(t), wasm.Options{OriginURL: origin.URL, Dial: dial, Env: env,
		CacheDir: filepath.Join(os.TempDir(), "agentready-test-wazero")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	front := httptest.NewServer(h)
	t.Cleanup(front.Close)
	return front
}

// Forwards reuse their connections to the origin. The proxy once used
// net/http's default transport, which keeps two idle connections per host:
// with more requests in flight nearly every forward dialled (and closed) a
// connection of its own, a fifth of the stack's CPU under load.
func TestForwardsReuseOriginConnections(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	}))
	defer origin.Close()
	var dials atomic.Int64
	front := host(t, origin, func(ctx context.Context) (net.Conn, error) {
		dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, "tcp", origin.Listener.Addr().String())
	})
	const clients, each = 16, 25
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	var wg sync.WaitGroup
	var bad atomic.Int64
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				resp, err := client.Get(front.URL + "/api/anything")
				if err != nil {
					bad.Add(1)
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || string(b) != `{"ok":true}` {
					bad.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if bad.Load() != 0 {
		t.Fatalf("%d of %d forwards failed", bad.Load(), clients*each)
	}
	if n := dials.Load(); n > clients+4 {
		t.Errorf("%d forwards from %d clients dialled the origin %d times", clients*each, clients, n)
	}
}

// An answer the origin streams (Server-Sent Events, or any body of unknown
// length) reaches the client as it is written, not when it ends.
func TestForwardsStream(t *testing.T) {
	for _, ctype := range []string{"text/event-stream", "application/octet-stream"} {
		t.Run(ctype, func(t *testing.T) {
			release := make(chan struct{})
			origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", ctype)
				io.WriteString(w, "data: first\n\n")
				w.(http.Flusher).Flush()
				select {
				case <-release:
				case <-time.After(30 * time.Second):
				}
				io.WriteString(w, "data: second\n\n")
			}))
			defer origin.Close()
			defer close(release)
			front := host(t, origin, nil)
			// The origin holds the rest of the body for 30 s: only a streamed
			// first line arrives within the client's 5 s.
			client := &http.Client{Timeout: 5 * time.Second}
			resp, err := client.Get(front.URL + "/api/stream")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			line, err := bufio.NewReader(resp.Body).ReadString('\n')
			if err != nil || strings.TrimSpace(line) != "data: first" {
				t.Fatalf("first line %q, %v", line, err)
			}
		})
	}
}
