package edgetable_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/edgemodule"
	"github.com/agentready/agentready/internal/testing/edgetest"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/stacktest"
	"github.com/agentready/agentready/internal/testing/testenv"
)

// The host's cost per request, in-process (no client, no listener): what the
// full-stack numbers of bench/stackbench are made of.
func BenchmarkHost(b *testing.B) {
	env := edgetest.Env()
	for _, k := range []string{"AGENTREADY_FREE_DAILY", "AGENTREADY_BADGE_DAILY"} {
		env[k] = "1000000000"
	}
	svc := stacktest.Start(b, env, stack.Options{EdgeModule: edgemodule.Build(b), CacheDir: filepath.Join(os.TempDir(), "agentready-test-wazero")})
	site, err := fixture.Start(filepath.Join(testenv.RepoRoot(), "testdata", "sites", "full"))
	if err != nil {
		b.Fatal(err)
	}
	defer site.Close()
	for _, bc := range []struct{ name, path string }{
		{"badge", "/api/badge?url=" + url.QueryEscape(site.URL)},
		{"scan", "/api/scan?format=json&url=" + url.QueryEscape(site.URL)},
		{"catalog", "/.well-known/api-catalog"},
		{"openapi", "/openapi.json"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			serve := func() int {
				req := httptest.NewRequest("GET", svc.URL+bc.path, nil)
				req.RemoteAddr = "127.0.0.1:5000"
				rec := httptest.NewRecorder()
				svc.Edge.ServeHTTP(rec, req)
				return rec.Code
			}
			if code := serve(); code != http.StatusOK { // fills the caches
				b.Fatalf("%s: %d", bc.path, code)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if code := serve(); code != http.StatusOK {
					b.Fatalf("%s: %d", bc.path, code)
				}
			}
		})
	}
}
