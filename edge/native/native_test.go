package native_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/edgetest"
	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/origin/store"
)

func start(t *testing.T, env map[string]string) string {
	st, err := store.OpenEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	svc, err := stack.Start(stack.Options{Addr: "127.0.0.1:0", AllowPrivate: true, Store: st, Env: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		svc.Shutdown(ctx)
		st.Close()
	})
	return svc.URL
}

// The behavioural table, against the edge handler compiled natively.
func TestNativeEdge(t *testing.T) { edgetest.Run(t, start) }
