package stack_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/agentready/agentready/internal/stack"
)

// Behind a trusted reverse proxy each forwarded caller has an allowance of
// its own; without AGENTREADY_TRUSTED_PROXIES every caller the proxy
// forwards shares the proxy's.
func TestTrustedProxyCallersHaveTheirOwnAllowance(t *testing.T) {
	fx := site(t, "full")
	for _, tc := range []struct {
		trusted    string
		secondCode int // the second caller's first scan
	}{
		{"127.0.0.1,::1", 200},
		{"", 429},
	} {
		env := map[string]string{"AGENTREADY_FREE_DAILY": "1", "AGENTREADY_TRUSTED_PROXIES": tc.trusted}
		svc := start(t, stack.Options{Env: func(k string) string { return env[k] }})
		scan := func(forwardedFor string) int {
			t.Helper()
			req, _ := http.NewRequest(http.MethodGet, svc.URL+"/api/scan?format=json&url="+fx.URL, nil)
			req.Header.Set("X-Forwarded-For", forwardedFor)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp.StatusCode
		}
		if got := scan("198.51.100.7"); got != 200 {
			t.Fatalf("trusted %q: the first caller's scan: %d", tc.trusted, got)
		}
		if got := scan("198.51.100.7"); got != 429 {
			t.Errorf("trusted %q: the first caller's second scan (allowance 1): %d, want 429", tc.trusted, got)
		}
		if got := scan("198.51.100.8"); got != tc.secondCode {
			t.Errorf("trusted %q: another forwarded caller's first scan: %d, want %d", tc.trusted, got, tc.secondCode)
		}
	}
}
