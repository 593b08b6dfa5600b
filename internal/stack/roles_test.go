package stack_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/origin/store"
)

// splitEnv is what every process of a split deployment shares.
var splitEnv = map[string]string{
	"AGENTREADY_TOKEN_KEYS":  "k1:0123456789abcdef0123456789abcdef",
	"AGENTREADY_EDGE_SECRET": "0123456789abcdef0123456789abcdef",
}

// The deployment of deploy/compose.yaml in one test process: two origins on
// one store, an edge in front of them. A token minted by the edge is good at
// both origins, scans go through, and with one origin stopped every scan is
// answered by the other.
func TestSplitRolesAndFailover(t *testing.T) {
	fx := site(t, "full")
	st, err := store.OpenEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	env := func(k string) string { return splitEnv[k] }
	a := start(t, stack.Options{Role: stack.RoleOrigin, Env: env, Store: st})
	b := start(t, stack.Options{Role: stack.RoleOrigin, Env: env, Store: st})
	if a.Edge != nil || a.URL != a.OriginURL {
		t.Fatalf("an origin runs an edge (%T) or listens elsewhere than its URL (%s, %s)", a.Edge, a.URL, a.OriginURL)
	}
	// An origin is reachable by the edges, so by anyone who finds it: it
	// answers only what an edge signed, and its health for the balancer.
	for path, want := range map[string]int{"/api/scan?format=json&url=" + fx.URL: 401, "/api/mcp": 401, "/healthz": 200} {
		resp, err := http.Get(a.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || want == 401 && !strings.Contains(string(body), `"code":"invalid_identity"`) {
			t.Errorf("GET %s straight to an origin: %d %.200s, want %d", path, resp.StatusCode, body, want)
		}
	}
	edge := start(t, stack.Options{Role: stack.RoleEdge, Env: env, Origins: []string{a.URL, b.URL}})
	if edge.Origin != nil {
		t.Fatal("an edge runs an origin")
	}

	resp, err := http.Post(edge.URL+"/api/agent/token", "application/json", strings.NewReader(`{"grant_type":"client_credentials","scope":"scan:read"}`))
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if resp.StatusCode != 200 || tok.AccessToken == "" {
		t.Fatalf("token: %d", resp.StatusCode)
	}
	scan := func(what string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, edge.URL+"/api/scan?format=json&fresh=1&url="+fx.URL, nil)
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var r struct {
			CurrentLevel int `json:"currentLevel"`
		}
		if resp.StatusCode != 200 || json.Unmarshal(body, &r) != nil || r.CurrentLevel != 3 {
			t.Fatalf("%s: %d %.300s", what, resp.StatusCode, body)
		}
	}
	// Round robin: four scans reach both origins, each checking the token
	// and the edge's signature with the shared settings.
	for i := 0; i < 4; i++ {
		scan("a scan through the edge")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		scan("a scan with origin a stopped")
	}
}
