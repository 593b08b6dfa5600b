// Package stacktest starts the whole service (origin and edge, on an
// embedded store of its own) on loopback for a test. It is apart from
// edgetest, the edge's behavioural table, so that a test that only needs
// the table's contract does not link the service.
package stacktest

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/edgetest"
	"github.com/agentready/agentready/origin/store"
)

// Start starts origin and edge on loopback with env as the settings, an
// embedded store of its own, private targets allowed (fixture sites), and
// shutdown at the end of the test. opts sets what a build needs beyond that
// (EdgeModule, CacheDir). With env[edgetest.OriginDown] set, the origin is stopped
// before Start returns.
func Start(tb testing.TB, env map[string]string, opts stack.Options) *stack.Stack {
	tb.Helper()
	st, err := store.OpenEmbedded(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	opts.Addr, opts.AllowPrivate, opts.Store = "127.0.0.1:0", true, st
	opts.Env = func(k string) string { return env[k] }
	svc, err := stack.Start(opts)
	if err != nil {
		st.Close()
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		svc.Shutdown(ctx)
		st.Close()
	})
	if env[edgetest.OriginDown] != "" {
		// Serve starts in a goroutine: a Shutdown before it listens would be
		// lost, so wait until the origin answers, then stop it.
		hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		for deadline := time.Now().Add(10 * time.Second); ; {
			resp, err := hc.Get(svc.OriginURL + "/healthz")
			if err == nil {
				resp.Body.Close()
				break
			}
			if time.Now().After(deadline) {
				tb.Fatalf("the origin never answered: %v", err)
			}
			time.Sleep(10 * time.Millisecond)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := svc.Origin.Shutdown(ctx); err != nil {
			tb.Fatalf("stopping the origin: %v", err)
		}
	}
	return svc
}
