package wellknown

import (
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentready/agentready/engine/parse/linkset"
	"github.com/agentready/agentready/internal/testing/testenv"
)

// Every document in ../shared/corpus/wellknown has its row: the parser the
// scanner uses for it, and the verdict-relevant fields it must extract.
func TestCorpus(t *testing.T) {
	dir := testenv.Shared(t, "corpus/wellknown")
	site, _ := url.Parse("https://adrianub.dev/")
	rows := map[string]func(body []byte) string{
		// a linkset whose only relation is `item` (no service-desc)
		"adrianub-api-catalog.json": func(b []byte) string {
			ls, err := linkset.Parse(b, site)
			if err != nil || len(ls.Contexts) != 1 || len(ls.Contexts[0].Rels["item"]) != 4 || len(ls.Contexts[0].Rels["service-desc"]) != 0 {
				return "want one context with four items"
			}
			return ""
		},
		"scalekit-api-catalog.json": func(b []byte) string {
			ls, err := linkset.Parse(b, site)
			if err != nil || len(ls.Contexts) != 1 || len(ls.Contexts[0].Rels["service-desc"]) != 2 || len(ls.Contexts[0].Rels["service-doc"]) != 1 {
				return "want two service-desc and one service-doc"
			}
			return ""
		},
		"adrianub-oauth-authorization-server.json": func(b []byte) string {
			a, err := ParseAuthServer(b, "https://adrianub.dev")
			if err != nil || a.Issuer != "https://adrianub.dev" || a.TokenEndpoint != "https://adrianub.dev/oauth/token" || len(a.Problems) != 0 {
				return "want issuer and token endpoint, no problems"
			}
			return ""
		},
		// `resource` with a trailing slash still names the origin
		"adrianub-oauth-protected-resource.json": func(b []byte) string {
			p, err := ParseProtectedResource(b, site)
			if err != nil || p.Resource != "https://adrianub.dev/" || len(p.AuthorizationServers) != 1 || len(p.Problems) != 0 {
				return "want the resource and one authorization server"
			}
			return ""
		},
		"adrianub-agent-skills-index.json": func(b []byte) string {
			ix, err := ParseSkillsIndex(b, false)
			if err != nil || ix.Version != "0.2" || ix.Entries != 3 {
				return "want a v0.2 index with three entries"
			}
			return ""
		},
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) != len(rows) {
		t.Errorf("corpus has %d files, table %d", len(files), len(rows))
	}
	for _, f := range files {
		row, ok := rows[filepath.Base(f)]
		if !ok {
			t.Errorf("%s has no row", filepath.Base(f))
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if why := row(b); why != "" {
			t.Errorf("%s: %s", filepath.Base(f), why)
		}
	}
}
