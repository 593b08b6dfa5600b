package origin_test

import (
	"encoding/json"
	"testing"

	"github.com/agentready/agentready/internal/version"
	"github.com/agentready/agentready/origin"
)

// /healthz and the MCP server card say the build's one version
// (internal/version), not a number of their own; a Config's Version still
// overrides both.
func TestHealthzAndCardSayTheBuildsVersion(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  origin.Config
		want string
	}{
		{"the build's", origin.Config{}, version.String()},
		{"set by the caller", origin.Config{Version: "v7.7.7-test"}, "v7.7.7-test"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := startOrigin(t, c.cfg, nil)
			resp, b := get(t, o.URL+"/healthz")
			var h struct{ Status, Version string }
			if err := json.Unmarshal(b, &h); err != nil || resp.StatusCode != 200 || h.Status != "ok" {
				t.Fatalf("/healthz: %d %s (%v)", resp.StatusCode, b, err)
			}
			if h.Version != c.want {
				t.Errorf("/healthz says version %q, want %q", h.Version, c.want)
			}
			_, b = get(t, o.URL+"/.well-known/mcp.json")
			var card struct {
				Version    string
				ServerInfo struct{ Version string }
			}
			if err := json.Unmarshal(b, &card); err != nil {
				t.Fatal(err)
			}
			if card.Version != c.want || card.ServerInfo.Version != c.want {
				t.Errorf("the MCP server card says %q (serverInfo %q), want %q", card.Version, card.ServerInfo.Version, c.want)
			}
		})
	}
}
