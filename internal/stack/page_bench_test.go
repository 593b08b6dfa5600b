package stack_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin/store"
)

// The scan page's cost at the wazero-hosted edge, in-process (no client, no
// listener): the homepage and assets come from the edge's rendered-document
// cache; a result page reads the report from the edge cache (10 s) or the
// origin's /api/report and renders it. Needs bin/edge.wasm (make wasm).
func BenchmarkScanPage(b *testing.B) {
	mod, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "bin", "edge.wasm"))
	if err != nil {
		b.Skipf("no bin/edge.wasm (%v): run make wasm first", err)
	}
	st, err := store.OpenEmbedded(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc, err := stack.Start(stack.Options{Addr: "127.0.0.1:0", AllowPrivate: true, Store: st, EdgeModule: mod,
		CacheDir: filepath.Join(os.TempDir(), "agentready-test-wazero"), Env: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Shutdown(context.Background())
	s, err := fixture.Start(filepath.Join(testenv.RepoRoot(), "testdata", "sites", "full"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	resp, err := http.Get(svc.URL + "/api/scan?format=json&url=" + url.QueryEscape(s.URL))
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("scan: %v %v", resp, err)
	}
	resp.Body.Close()
	benchPages(b, svc, s.URL)
}

func benchPages(b *testing.B, svc *stack.Stack, site string) {
	q := url.QueryEscape(site)
	for _, bc := range []struct{ name, path, accept string }{
		{"home", "/", "text/html"},
		{"app.js", "/assets/app.js", "*/*"},
		{"report", "/report?url=" + q, "text/html"},
		{"report-markdown", "/report?url=" + q, "text/markdown"},
		{"report-origin-read", "/report?url=" + q, "text/html"},
		{"how-we-score", "/how-we-score", "text/html"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			serve := func() int {
				req := httptest.NewRequest("GET", svc.URL+bc.path, nil)
				req.RemoteAddr = "127.0.0.1:5000"
				req.Header.Set("Accept", bc.accept)
				if bc.name == "report-origin-read" {
					req.Header.Set("Cache-Control", "no-cache") // past the edge cache, to the origin's /api/report
				}
				rec := httptest.NewRecorder()
				svc.Edge.ServeHTTP(rec, req)
				return rec.Code
			}
			if code := serve(); code != http.StatusOK {
				b.Fatalf("%s: %d", bc.path, code)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if code := serve(); code != http.StatusOK {
					b.Fatalf("%s: %d", bc.path, code)
				}
			}
		})
	}
}
