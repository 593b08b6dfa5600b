package mcpserver

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/loopback"
	"github.com/agentready/agentready/internal/testing/testenv"
)

// The scan tools carry the report's signals and the explaining tools describe
// them, through the MCP Go client over HTTP against a real scan of the
// signals fixture site where all five pass (so the SDK also validates the
// structured content against the tools' output schemas).
func TestSignalsOverMCP(t *testing.T) {
	sc := engine.New(engine.Options{Fetch: fetch.Config{Policy: loopback.Policy()}})
	s, err := New(Deps{
		ValidateURL: func(raw string) (string, error) { return raw, nil },
		Scan:        func(ctx context.Context, u string) (*report.Result, error) { return sc.Scan(ctx, u, nil) },
		Fetch:       func(context.Context, string, string) (*engine.Document, error) { return nil, context.Canceled },
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
	site, err := fixture.Start(filepath.Join(testenv.RepoRoot(), "testdata", "signals", "pass"))
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()

	call := func(name string, args map[string]any, out any) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}

	// only_failing drops passing checks, never signals.
	var scan ScanOutput
	call("scan_url", map[string]any{"url": site.URL, "only_failing": true}, &scan)
	var ids []string
	for _, sg := range scan.Signals {
		ids = append(ids, sg.ID)
		if sg.Status != report.Pass || !sg.Passed {
			t.Errorf("%s: %s %q", sg.ID, sg.Status, sg.Message)
		}
	}
	if !reflect.DeepEqual(ids, []string{"webbotauth", "ucp", "acp", "ap2", "mpp"}) {
		t.Errorf("scan_url signals %v", ids)
	}

	var defs DefinitionsOutput
	call("get_check_definitions", map[string]any{}, &defs)
	if len(defs.Signals) != 5 || defs.Signals[0].ID != "webbotauth" || defs.Signals[0].Rule == "" || defs.Signals[4].Group != report.GroupCommerce {
		t.Errorf("get_check_definitions signals %+v", defs.Signals)
	}
	var lv1 DefinitionsOutput
	call("get_check_definitions", map[string]any{"level": 1}, &lv1)
	if len(lv1.Signals) != 0 || len(lv1.Checks) == 0 {
		t.Errorf("level 1 lists %d signals, %d checks", len(lv1.Signals), len(lv1.Checks))
	}

	var ucp CheckOutput
	call("get_check", map[string]any{"id": "UCP", "url": site.URL}, &ucp)
	if ucp.Signal == nil || ucp.Signal.ID != "ucp" || ucp.Definition.ID != "ucp" || ucp.Definition.Rule == "" || ucp.Result != nil {
		t.Errorf("get_check ucp: %+v", ucp)
	}
	if ucp.SignalResult == nil || ucp.SignalResult.Status != report.Pass || !strings.Contains(ucp.SignalResult.FoundAt, "/.well-known/ucp") {
		t.Errorf("get_check ucp result: %+v", ucp.SignalResult)
	}
	var check CheckOutput
	call("get_check", map[string]any{"id": "1.1"}, &check)
	if check.Signal != nil || check.SignalResult != nil || check.Definition.ID != "1.1" {
		t.Errorf("a check carries signal fields: %+v", check)
	}

	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_check", Arguments: map[string]any{"id": "x402"}})
	if err != nil || !res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "webbotauth, ucp, acp, ap2 and mpp") {
		t.Errorf("unknown id: %v %+v", err, res)
	}
	if len(checks.Signals()) != 5 {
		t.Errorf("%d signals", len(checks.Signals()))
	}
}
