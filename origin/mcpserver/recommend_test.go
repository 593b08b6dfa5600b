package mcpserver

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/advice"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/profile"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/loopback"
	"github.com/agentready/agentready/internal/testing/testenv"
)

// get_recommendations is the engine's plan and nothing else (the tool once
// had its own copy of the level gating and its own snippets).
// Real scans of fixture sites on loopback, the tool called by the MCP Go
// client over HTTP: its structured content is advice.For of the very result
// the scan returned, field for field.
func TestRecommendationsAreTheEnginePlan(t *testing.T) {
	sc := engine.New(engine.Options{Fetch: fetch.Config{Policy: loopback.Policy()}})
	var mu sync.Mutex
	scanned := map[string]*report.Result{}
	s, err := New(Deps{
		ValidateURL: func(raw string) (string, error) { return raw, nil },
		Scan: func(ctx context.Context, u string) (*report.Result, error) {
			r, err := sc.Scan(ctx, u, nil)
			if err == nil {
				mu.Lock()
				scanned[u] = r
				mu.Unlock()
			}
			return r, err
		},
		Fetch: func(context.Context, string, string) (*engine.Document, error) { return nil, context.Canceled },
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	targets := map[int]bool{}
	judgedLast := map[string]bool{}
	for _, name := range []string{"peer", "partial", "empty", "full"} {
		t.Run(name, func(t *testing.T) {
			site, err := fixture.Start(filepath.Join(testenv.RepoRoot(), "testdata", "sites", name))
			if err != nil {
				t.Fatal(err)
			}
			defer site.Close()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_recommendations", Arguments: map[string]any{"url": site.URL}})
			if err != nil || res.IsError {
				t.Fatalf("get_recommendations: %v %+v", err, res)
			}
			mu.Lock()
			r := scanned[site.URL]
			mu.Unlock()
			if r == nil {
				t.Fatal("the tool did not scan through Deps.Scan")
			}
			want := advice.For(r)
			var got, exp any
			b, _ := json.Marshal(res.StructuredContent)
			wb, _ := json.Marshal(want)
			if json.Unmarshal(b, &got) != nil || json.Unmarshal(wb, &exp) != nil || !reflect.DeepEqual(got, exp) {
				t.Fatalf("the tool's output is not the engine's plan:\n tool   %s\n engine %s", b, wb)
			}
			if len(want.Steps) == 0 {
				t.Fatal("a fixture site with nothing to fix: the comparison proves little")
			}
			targets[want.TargetLevel] = true

			// As another kind of site: the plan of the report judged as
			// that profile, from the same scan.
			for _, as := range report.Profiles {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_recommendations", Arguments: map[string]any{"url": site.URL, "profile": as}})
				if err != nil || res.IsError {
					t.Fatalf("get_recommendations as %s: %v %+v", as, err, res)
				}
				jr, err := profile.As(r, as)
				if err != nil {
					t.Fatal(err)
				}
				want := advice.For(jr)
				b, _ := json.Marshal(res.StructuredContent)
				wb, _ := json.Marshal(want)
				if json.Unmarshal(b, &got) != nil || json.Unmarshal(wb, &exp) != nil || !reflect.DeepEqual(got, exp) {
					t.Fatalf("as %s, the tool's output is not the engine's plan of the judged report:\n tool   %s\n engine %s", as, b, wb)
				}
				for _, st := range want.Steps {
					if st.NotApplicable != "" {
						judgedLast[as] = true
					}
				}
			}
		})
	}
	// Some profile takes a failing check out, so the profile changed a plan.
	if len(judgedLast) == 0 {
		t.Error("no profile put a check last on any fixture site: the profile argument proves little")
	}
	// An unknown profile is refused before it costs a scan.
	site, err := fixture.Start(filepath.Join(testenv.RepoRoot(), "testdata", "sites", "empty"))
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_recommendations", Arguments: map[string]any{"url": site.URL, "profile": "blog"}})
	mu.Lock()
	r := scanned[site.URL]
	mu.Unlock()
	if err == nil && !res.IsError || r != nil {
		t.Errorf("an unknown profile: error %v, result %+v, scanned %v", err, res, r != nil)
	}
	// The sites cover a plan with a next level and one without.
	if !targets[0] || !targets[1] {
		t.Errorf("target levels seen: %v", targets)
	}
}
