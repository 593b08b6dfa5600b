package edgetest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// OriginDown, set in the env given to StartStack, stops the origin once the
// service is up: every build then has to answer for an origin that is gone.
const OriginDown = "EDGETEST_ORIGIN_DOWN"

// rawDo sends a request without the contract check: non-canonical spellings
// of a path are not routes /openapi.json can describe.
func rawDo(t *testing.T, method, target, body string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, target, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// checkEnvelope fails unless the answer is status with the error envelope:
// application/json, error, code, message and docs non-empty strings, docs an
// absolute URL, and code the one expected (when given).
func checkEnvelope(t *testing.T, what string, resp *http.Response, b []byte, status int, code string) {
	t.Helper()
	var e map[string]any
	if resp.StatusCode != status {
		t.Errorf("%s: status %d, want %d: %.300s", what, resp.StatusCode, status, b)
		return
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s: content type %q, want application/json: %.200s", what, ct, b)
	}
	if err := json.Unmarshal(b, &e); err != nil {
		t.Errorf("%s: the body is not JSON: %.200s", what, b)
		return
	}
	for _, k := range []string{"error", "code", "message", "docs"} {
		if s, ok := e[k].(string); !ok || s == "" {
			t.Errorf("%s: envelope member %s is not a non-empty string: %.300s", what, k, b)
		}
	}
	if d, _ := e["docs"].(string); d != "" {
		if u, err := url.Parse(d); err != nil || !u.IsAbs() || u.Host == "" {
			t.Errorf("%s: docs %q is not an absolute URL", what, d)
		}
	}
	if code != "" && e["code"] != code {
		t.Errorf("%s: code %v, want %s", what, e["code"], code)
	}
}

// paths: the edge routes, charges, signs and forwards one spelling of a path,
// the one the origin's router computes, so "/api//scan" is a charged scan
// that the origin accepts as signed (401 invalid_identity before).
func paths(t *testing.T, c client) {
	s := site(t, "empty")
	query := "?format=json&url=" + url.QueryEscape(s.URL)
	remaining := -1
	for _, p := range []string{"/api/scan", "//api/scan", "/api//scan", "/api/./scan", "/api/x/../scan", "/api/%2e%2e/api/scan", "/api/%73can"} {
		resp, b := rawDo(t, "GET", c.base+p+query, "", "X-API-Key", APIKey)
		n, err := strconv.Atoi(resp.Header.Get("X-RateLimit-Remaining"))
		if resp.StatusCode != 200 || err != nil || !json.Valid(b) || !strings.Contains(string(b), `"checks"`) {
			t.Errorf("GET %s: %d %.200s", p, resp.StatusCode, b)
			continue
		}
		if remaining >= 0 && n != remaining-1 {
			t.Errorf("GET %s: remaining %d after %d: not charged as the scan it is", p, n, remaining)
		}
		remaining = n
	}
	_, llms := c.do("GET", "/llms.txt", "")
	for _, p := range []string{"/./llms.txt", "//llms.txt", "/x/../llms.txt"} {
		if resp, b := rawDo(t, "GET", c.base+p, ""); resp.StatusCode != 200 || string(b) != string(llms) {
			t.Errorf("GET %s: %d, not /llms.txt", p, resp.StatusCode)
		}
	}
	// An encoded slash is refused, and costs nothing.
	resp, b := rawDo(t, "GET", c.base+"/api%2Fscan"+query, "", "X-API-Key", APIKey)
	checkEnvelope(t, "GET /api%2Fscan", resp, b, 400, "invalid_path")
	if resp, _ := rawDo(t, "GET", c.base+"/api/scan"+query, "", "X-API-Key", APIKey); resp.Header.Get("X-RateLimit-Remaining") != strconv.Itoa(remaining-1) {
		t.Errorf("after an encoded slash: remaining %q, want %d", resp.Header.Get("X-RateLimit-Remaining"), remaining-1)
	}
	// MCP under a non-canonical path reaches the origin with a valid identity.
	resp, b = rawDo(t, "POST", c.base+"//api/./mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		"Content-Type", "application/json", "Accept", "application/json, text/event-stream", "X-API-Key", APIKey)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"result"`) {
		t.Errorf("MCP ping at //api/./mcp: %d %.300s", resp.StatusCode, b)
	}
}

// errorEnvelopes walks the edge's error answers: each is the envelope.
func errorEnvelopes(t *testing.T, c client) {
	s := site(t, "empty")
	scan := "/api/scan?format=json&url=" + url.QueryEscape(s.URL)
	oversize := strings.Repeat(" ", 1<<20) + "{}"
	for _, tc := range []struct {
		what, method, path, body string
		hdr                      []string
		status                   int
		code                     string
	}{
		{"bad method on a document", "DELETE", "/llms.txt", "", nil, 405, "method_not_allowed"},
		{"bad method on the token endpoint", "GET", "/api/agent/token", "", nil, 405, "method_not_allowed"},
		{"bad method on a scan", "PUT", scan, "", nil, 405, "method_not_allowed"},
		{"token request refused", "POST", "/api/agent/token", `{"grant_type":"password"}`, []string{"Content-Type", "application/json"}, 400, "unsupported_grant_type"},
		{"body over 1 MiB", "POST", "/api/scan", oversize, []string{"Content-Type", "application/json"}, 413, "payload_too_large"},
		{"body over 1 MiB to MCP", "POST", "/api/mcp", oversize, []string{"Content-Type", "application/json"}, 413, "payload_too_large"},
		{"scan body over 64 KiB", "POST", "/api/scan", `{"url":"example.com","x":"` + strings.Repeat("x", 65<<10) + `"}`, []string{"Content-Type", "application/json"}, 413, "payload_too_large"},
		{"bad token", "GET", scan, "", []string{"Authorization", "Bearer v1.nope.nope.nope"}, 401, "invalid_token"},
		{"not a bearer token", "GET", scan, "", []string{"Authorization", "Basic dXNlcjpwYXNz"}, 401, "invalid_token"},
		{"bad API key", "GET", scan, "", []string{"X-API-Key", "ar_wrong"}, 401, "invalid_api_key"},
		{"unknown path", "GET", "/api/nope", "", nil, 404, "not_found"},
		{"encoded slash", "GET", "/api%2Fscan", "", nil, 400, "invalid_path"},
		{"scan without url", "GET", "/api/scan", "", nil, 400, "missing_url"},
		{"scan of an ftp url", "GET", "/api/scan?url=ftp%3A%2F%2Fexample.com", "", nil, 400, "invalid_url"},
		{"scan in an unknown format", "GET", "/api/scan?format=xml&url=" + url.QueryEscape(s.URL), "", nil, 400, "unsupported_format"},
		{"scan posted as text", "POST", "/api/scan", `{"url":"example.com"}`, []string{"Content-Type", "text/plain"}, 415, "unsupported_media_type"},
		{"scan posted as broken JSON", "POST", "/api/scan", `{"url":`, []string{"Content-Type", "application/json"}, 400, "invalid_json"},
		{"scan posted without url", "POST", "/api/scan", `{}`, []string{"Content-Type", "application/json"}, 400, "missing_url"},
		{"bad Idempotency-Key", "POST", "/api/scan", `{"url":"example.com"}`, []string{"Content-Type", "application/json", "Idempotency-Key", strings.Repeat("k", 256)}, 400, "invalid_idempotency_key"},
		{"badge without url", "GET", "/api/badge", "", nil, 400, "missing_url"},
	} {
		var resp *http.Response
		var b []byte
		if strings.Contains(tc.path, "%2F") {
			resp, b = rawDo(t, tc.method, c.base+tc.path, tc.body, tc.hdr...)
		} else {
			resp, b = c.do(tc.method, tc.path, tc.body, tc.hdr...)
		}
		checkEnvelope(t, tc.what, resp, b, tc.status, tc.code)
	}
}

// charging: requests that cannot do work cost nothing; without a payee the
// exhausted allowance is a 429 that says when to retry, not a payment to "".
func charging(t *testing.T, c client) {
	s := site(t, "empty")
	valid := "/api/scan?format=json&url=" + url.QueryEscape(s.URL)
	asJSON := []string{"Content-Type", "application/json"}
	malformed := []struct {
		method, path, body string
		hdr                []string
	}{
		{"GET", "/api/scan", "", nil},
		{"GET", "/api/scan?url=", "", nil},
		{"GET", "/api/scan?url=ftp%3A%2F%2Fexample.com", "", nil},
		{"GET", "/api/scan?url=example", "", nil},
		{"GET", "/api/scan?url=exa_mple.com", "", nil},
		{"GET", "/api/scan?url=http%3A%2F%2Fuser%40example.com", "", nil},
		{"GET", "/api/scan?url=example.com%3A0", "", nil},
		{"GET", "/api/scan?url=a..b", "", nil},
		{"GET", "/api/scan?url=" + strings.Repeat("a", 2050) + ".com", "", nil},
		{"GET", "/api/scan?format=html&url=" + url.QueryEscape(s.URL), "", nil},
		{"POST", "/api/scan", `{"url":"example.com"}`, []string{"Content-Type", "text/plain"}},
		{"POST", "/api/scan", `{"url":"example.com"}`, nil},
		{"POST", "/api/scan", `{"url":`, asJSON},
		{"POST", "/api/scan", `{"url":42}`, asJSON},
		{"POST", "/api/scan", `[]`, asJSON},
		{"POST", "/api/scan", `{}`, asJSON},
		{"POST", "/api/scan", `{"url":""}`, asJSON},
		{"POST", "/api/scan", `{"url":"mailto:x@example.com"}`, asJSON},
		{"POST", "/api/scan", `{"url":"example.com"}`, []string{"Content-Type", "application/json", "Idempotency-Key", "ü"}},
		{"POST", "/api/scan", `{"url":"example.com","pad":"` + strings.Repeat("x", 65<<10) + `"}`, asJSON},
	}
	for i := 0; i < 30; i++ {
		m := malformed[i%len(malformed)]
		resp, b := c.do(m.method, m.path, m.body, m.hdr...)
		if resp.StatusCode < 400 || resp.StatusCode >= 500 || resp.StatusCode == 402 || resp.StatusCode == 429 {
			t.Errorf("malformed %s %.60s %.40s: %d %.200s", m.method, m.path, m.body, resp.StatusCode, b)
			continue
		}
		checkEnvelope(t, "malformed "+m.method+" "+m.path, resp, b, resp.StatusCode, "")
		if resp.Header.Get("X-RateLimit-Remaining") != "3" || resp.Header.Get("RateLimit-Remaining") != "3" {
			t.Errorf("malformed %s %.60s %.40s was charged: remaining %q", m.method, m.path, m.body, resp.Header.Get("X-RateLimit-Remaining"))
		}
	}
	for i := 2; i >= 0; i-- {
		resp, b := c.do("GET", valid, "")
		if resp.StatusCode != 200 || resp.Header.Get("X-RateLimit-Remaining") != strconv.Itoa(i) {
			t.Fatalf("valid scan after the malformed ones: %d remaining %q: %.200s", resp.StatusCode, resp.Header.Get("X-RateLimit-Remaining"), b)
		}
	}
	resp, b := c.do("GET", valid, "")
	checkEnvelope(t, "over the allowance without a payee", resp, b, 429, "allowance_exhausted")
	retry, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	if resp.Header.Get("PAYMENT-REQUIRED") != "" || strings.Contains(string(b), "payTo") || retry <= 0 || !strings.Contains(string(b), "retry after") ||
		resp.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("429 without a payee: %v %s", resp.Header, b)
	}
	// Still refused for what it is, not for the allowance.
	resp, b = c.do("GET", "/api/scan", "")
	checkEnvelope(t, "malformed over the allowance", resp, b, 400, "missing_url")
}

// originDown: with the origin gone every build answers the 502 envelope.
func originDown(t *testing.T, c client) {
	s := site(t, "empty")
	for _, p := range []string{"/api/scan?format=json&url=" + url.QueryEscape(s.URL), "/openapi.json"} {
		resp, b := c.do("GET", p, "")
		checkEnvelope(t, "origin down: GET "+p, resp, b, 502, "origin_unavailable")
	}
	// Whether a path exists is the origin's to say: with it gone, any API
	// path is a 502 (which the contract, judging unknown paths, cannot see).
	resp, b := rawDo(t, "GET", c.base+"/api/nope", "")
	checkEnvelope(t, "origin down: GET /api/nope", resp, b, 502, "origin_unavailable")
}

// hardening runs the hardening checks that need a service started for them
// alone: charging only requests that can do work (without a payee) and an
// origin that is down.
func hardening(t *testing.T, start Start) {
	t.Run("charging only real work", func(t *testing.T) {
		env := Env()
		delete(env, "AGENTREADY_PAYTO")
		charging(t, client{t, start(t, env)})
	})
	t.Run("origin down", func(t *testing.T) {
		env := Env()
		env[OriginDown] = "1"
		originDown(t, client{t, start(t, env)})
	})
}
