package stack_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentready/agentready/internal/stack"
)

// With AGENTREADY_BASE_URL the documents that carry absolute URLs name the
// configured service whatever Host a caller sends, and any cache may keep
// them; without it they are built from the Host and answered private with
// Vary: Host (the origin's server card included, as the edge passes it on).
func TestDiscoveryDocumentsAndTheHostHeader(t *testing.T) {
	const evil = "evil.example"
	docs := []string{"/.well-known/mcp.json", "/.well-known/api-catalog", "/.well-known/oauth-protected-resource", "/.well-known/oauth-authorization-server", "/llms.txt", "/"}
	ask := func(base, path string) (*http.Response, string) {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Host = evil
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(b)
	}
	based := start(t, stack.Options{Env: func(k string) string {
		return map[string]string{"AGENTREADY_BASE_URL": "https://agentready.example", "AGENTREADY_TOKEN_KEYS": splitEnv["AGENTREADY_TOKEN_KEYS"]}[k]
	}})
	hosted := start(t, stack.Options{Env: pageEnv})
	for _, path := range docs {
		resp, body := ask(based.URL, path)
		if resp.StatusCode != 200 || strings.Contains(body, evil) || !strings.Contains(body, "https://agentready.example") ||
			!strings.HasPrefix(resp.Header.Get("Cache-Control"), "public, max-age=") || strings.Contains(resp.Header.Get("Vary"), "Host") {
			t.Errorf("%s behind AGENTREADY_BASE_URL, Host %s: %d, Cache-Control %q, Vary %q: %.200s", path, evil, resp.StatusCode, resp.Header.Get("Cache-Control"), resp.Header.Get("Vary"), body)
		}
		resp, body = ask(hosted.URL, path)
		if resp.StatusCode != 200 || !strings.Contains(body, "http://"+evil) ||
			!strings.HasPrefix(resp.Header.Get("Cache-Control"), "private, max-age=") || !strings.Contains(resp.Header.Get("Vary"), "Host") {
			t.Errorf("%s from the Host %s: %d, Cache-Control %q, Vary %q: %.200s", path, evil, resp.StatusCode, resp.Header.Get("Cache-Control"), resp.Header.Get("Vary"), body)
		}
	}
}
