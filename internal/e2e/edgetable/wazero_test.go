package edgetable_test

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/edgemodule"
	"github.com/agentready/agentready/internal/testing/edgetest"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/stacktest"
	"github.com/agentready/agentready/internal/testing/testenv"
)

func startWazero(t *testing.T, env map[string]string) string {
	svc := stacktest.Start(t, env, stack.Options{EdgeModule: edgemodule.Build(t), CacheDir: filepath.Join(os.TempDir(), "agentready-test-wazero")})
	if !svc.Wasm {
		t.Fatal("the stack did not host the module")
	}
	return svc.URL
}

// The behavioural table, against the edge compiled to WebAssembly and hosted by wazero.
func TestWazeroEdge(t *testing.T) { edgetest.Run(t, startWazero) }

// 64 concurrent clients through a pool of warm instances: every answer belongs
// to its own request (no state leaks between requests sharing an instance).
func TestConcurrentClientsNoCrossTalk(t *testing.T) {
	base := startWazero(t, edgetest.Env())
	var sites []*fixture.Site
	for _, name := range []string{"full", "peer", "partial", "empty"} {
		s, err := fixture.Start(filepath.Join(testenv.RepoRoot(), "testdata", "sites", name))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		sites = append(sites, s)
	}
	want := map[string]string{}
	for _, s := range sites {
		resp, err := http.Get(base + "/api/badge?url=" + url.QueryEscape(s.URL))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want[s.URL] = string(b)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64*20)
	for c := 0; c < 64; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				s := sites[(c+i)%len(sites)]
				path := "/api/badge?url=" + url.QueryEscape(s.URL)
				if i%2 == 1 {
					path = "/.well-known/oauth-protected-resource"
				}
				resp, err := http.Get(base + path)
				if err != nil {
					errs <- err.Error()
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if i%2 == 0 && string(b) != want[s.URL] {
					errs <- "badge for " + s.URL + " came back different"
				}
				if i%2 == 1 && !strings.Contains(string(b), `"resource": "`+base+`"`) {
					errs <- "protected-resource metadata came back different"
				}
			}
		}(c)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
