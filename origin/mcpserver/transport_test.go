package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/report"
)

// newTestServer has tools that refuse every site: no network in these tests.
func newTestServer(t testing.TB) *Server {
	t.Helper()
	refuse := errors.New("no sites in this test")
	s, err := New(Deps{
		ValidateURL: func(string) (string, error) { return "", refuse },
		Scan:        func(context.Context, string) (*report.Result, error) { return nil, refuse },
		Fetch:       func(context.Context, string, string) (*engine.Document, error) { return nil, refuse },
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// isRPCError reports whether b is exactly a JSON-RPC 2.0 error response.
func isRPCError(b []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) != nil || len(top) != 3 || string(top["jsonrpc"]) != `"2.0"` || top["id"] == nil {
		return false
	}
	var e struct {
		Code    *int   `json:"code"`
		Message string `json:"message"`
	}
	return json.Unmarshal(top["error"], &e) == nil && e.Code != nil && e.Message != ""
}

// The handler as a net/http server runs it (benchmarks, embedding): the
// body limit is the guard's own, and the SDK's DNS-rebinding refusal, which
// quotes the Host header, is answered in our words.
func TestHandlerOverNetHTTP(t *testing.T) {
	srv := httptest.NewServer(newTestServer(t).Handler())
	defer srv.Close()
	post := func(body string, host string) (*http.Response, []byte) {
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	resp, b := post(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`+strings.Repeat("ZQX", MaxRequestBytes/3)+`"}}`, "")
	if resp.StatusCode != 413 || !isRPCError(b) || bytes.Contains(b, []byte("ZQX")) {
		t.Errorf("body over the limit: %d %.200s", resp.StatusCode, b)
	}
	resp, b = post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`, "ZQX.attacker.example")
	if resp.StatusCode != 403 || !isRPCError(b) || bytes.Contains(b, []byte("ZQX")) || !strings.Contains(string(b), "DNS-rebinding") {
		t.Errorf("foreign Host on a loopback listener: %d %s", resp.StatusCode, b)
	}
	resp, b = post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`, "")
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"result":{}`) {
		t.Errorf("ping: %d %s", resp.StatusCode, b)
	}
}

// Whatever the SDK writes as an error (text/plain, or a JSON-RPC error that
// quotes the request) leaves the guard as a JSON-RPC error in our words.
func TestGuardRewritesSDKErrors(t *testing.T) {
	for _, tc := range []struct {
		name, ctype, body string
		status            int
		wantStatus, code  int
	}{
		{"plain 400", "text/plain; charset=utf-8", "malformed payload: ZQX", 400, 400, CodeInvalidRequest},
		{"not handled", "text/plain; charset=utf-8", `JSON RPC not handled: "ZQX" unsupported`, 400, 400, CodeMethodNotFound},
		{"missing id", "text/plain; charset=utf-8", `JSON RPC invalid request: missing id for "ZQX"`, 400, 400, CodeInvalidRequest},
		{"plain 500", "text/plain; charset=utf-8", "storing stream: ZQX", 500, 500, CodeInternalError},
		{"session closing", "text/plain; charset=utf-8", "session is closing", 404, 500, CodeInternalError},
		{"JSON 400", "application/json", `{"jsonrpc":"2.0","id":"q","error":{"code":-32020,"message":"Mcp-Name header value 'ZQX'"}}`, 400, 400, CodeHeaderMismatch},
		{"JSON 200 uncoded", "application/json", `{"jsonrpc":"2.0","id":"q","error":{"code":0,"message":"unmarshaling \"ZQX\""}}`, 200, 200, CodeInvalidParams},
		{"JSON 200 coded", "application/json", `{"jsonrpc":"2.0","id":"q","error":{"code":-32603,"message":"ZQX"}}`, 200, 200, CodeInternalError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			})
			req := httptest.NewRequest("POST", "/api/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":"q","method":"ping"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "*/*")
			w := httptest.NewRecorder()
			(&transportGuard{next: next}).ServeHTTP(w, req)
			b := w.Body.Bytes()
			var e struct {
				ID    any `json:"id"`
				Error struct{ Code int }
			}
			json.Unmarshal(b, &e)
			if w.Code != tc.wantStatus || !isRPCError(b) || e.Error.Code != tc.code || bytes.Contains(b, []byte("ZQX")) || w.Header().Get("Content-Type") != "application/json" {
				t.Errorf("%d %s", w.Code, b)
			}
			if e.ID != "q" {
				t.Errorf("id %v, want the request's", e.ID)
			}
		})
	}
	// A success passes through byte for byte.
	ok := `{"jsonrpc":"2.0","id":1,"result":{"error":"not an error: a result member"}}`
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, ok)
	})
	req := httptest.NewRequest("POST", "/api/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	w := httptest.NewRecorder()
	(&transportGuard{next: next}).ServeHTTP(w, req)
	if w.Code != 200 || w.Body.String() != ok {
		t.Errorf("a result was altered: %d %s", w.Code, w.Body)
	}
}

// Arguments that fail a tool's input schema are a tool error naming the
// argument the tool declares, never the value or member the client sent.
func TestArgumentErrorsQuoteNothing(t *testing.T) {
	h := newTestServer(t).Handler()
	for _, tc := range []struct{ args, want string }{
		{`{"level":"ZQXtwo"}`, "level has the wrong type"},
		{`"ZQX"`, "must be a JSON object"},
		{`{"ZQXextra":1}`, "does not take"},
	} {
		body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_check_definitions","arguments":` + tc.args + `}}`
		req := httptest.NewRequest("POST", "/api/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		var resp struct {
			ID     int `json:"id"`
			Result struct {
				Content []struct{ Text string }
				IsError bool `json:"isError"`
			}
		}
		if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &resp) != nil || resp.ID != 7 || !resp.Result.IsError || len(resp.Result.Content) != 1 {
			t.Fatalf("%s: %d %s", tc.args, w.Code, w.Body)
		}
		text := resp.Result.Content[0].Text
		if !strings.Contains(text, tc.want) || !strings.Contains(text, "arguments") || strings.Contains(w.Body.String(), "ZQX") || strings.Contains(text, "Go value") {
			t.Errorf("%s: %s", tc.args, text)
		}
	}
	// A required argument is named from the schema.
	body := `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_check","arguments":{}}}`
	req := httptest.NewRequest("POST", "/api/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if !strings.Contains(w.Body.String(), "missing required id") {
		t.Errorf("missing id: %s", w.Body)
	}
}

// A tool that panics answers a tool error; the process (and the next call) lives on.
func TestToolPanicIsAToolError(t *testing.T) {
	s, err := New(Deps{ValidateURL: func(string) (string, error) { panic("boom ZQX") }})
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	for range 2 {
		body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"scan_url","arguments":{"url":"example.com"}}}`
		req := httptest.NewRequest("POST", "/api/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 || !strings.Contains(w.Body.String(), `"isError":true`) || !strings.Contains(w.Body.String(), "failed unexpectedly") || strings.Contains(w.Body.String(), "ZQX") {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}

// Any body through the real SDK: the answer is a JSON-RPC error object, a
// JSON-RPC answer, or an empty 202, never text and never the request quoted
// in an error.
func FuzzMCPTransport(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_check","arguments":{"id":"9.9"}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"nope"}`,
		`[]`, `{`, `null`, `{"jsonrpc":"2.0","id":1}`,
	} {
		f.Add(seed, "")
		f.Add(seed, "2025-06-18")
	}
	h := newTestServer(f).Handler()
	fixed := fixedMessages(f)
	f.Fuzz(func(t *testing.T, body, version string) {
		req := httptest.NewRequest("POST", "/api/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if version != "" {
			req.Header.Set("MCP-Protocol-Version", version)
		}
		w := httptest.NewRecorder()
		done := make(chan struct{})
		go func() { h.ServeHTTP(w, req); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second): // a deadline, not a wait: a hang fails here instead of stalling the fuzzer
			t.Fatalf("no answer within 5 s to %q (version %q)", body, version)
		}
		b := w.Body.Bytes()
		switch {
		case w.Code == 202 && len(b) == 0:
		case w.Header().Get("Content-Type") != "application/json" || !json.Valid(b):
			t.Fatalf("%d %q: %.300s", w.Code, w.Header().Get("Content-Type"), b)
		case w.Code >= 400 && !isRPCError(b):
			t.Fatalf("%d is not a JSON-RPC error: %.300s", w.Code, b)
		}
		if w.Code >= 400 && len(body) > 8 && quotes(b, body, fixed) {
			t.Fatalf("the error quotes the request: %s", b)
		}
	})
}

// fixedMessages are the transport's own error texts (the msg… constants of
// transport.go), which may contain a short body by coincidence: the parse
// error's example starts with {"jsonrpc.
func fixedMessages(t testing.TB) map[string]bool {
	src, err := os.ReadFile("transport.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\tmsg\w*\s*= ("(?:[^"\\]|\\.)*")`).FindAllStringSubmatch(string(src), -1) {
		if s, err := strconv.Unquote(m[1]); err == nil {
			out[s] = true
		}
	}
	if len(out) < 20 {
		t.Fatalf("read %d fixed messages from transport.go", len(out))
	}
	return out
}

// quotes reports body inside what an error answer could carry from the
// request: a message that is not one of the fixed texts, or error data beyond
// the docs link and the supported versions. The JSON-RPC frame and the fixed
// texts are the server's own words.
func quotes(answer []byte, body string, fixed map[string]bool) bool {
	type rpcErr struct {
		Error struct {
			Message string         `json:"message"`
			Data    map[string]any `json:"data"`
		} `json:"error"`
	}
	var many []rpcErr
	if err := json.Unmarshal(answer, &many); err != nil {
		var one rpcErr
		if json.Unmarshal(answer, &one) != nil {
			return bytes.Contains(answer, []byte(body))
		}
		many = []rpcErr{one}
	}
	for _, e := range many {
		if !fixed[e.Error.Message] && strings.Contains(e.Error.Message, body) {
			return true
		}
		delete(e.Error.Data, "docs")
		delete(e.Error.Data, "supported")
		if d, _ := json.Marshal(e.Error.Data); len(e.Error.Data) > 0 && strings.Contains(string(d), body) {
			return true
		}
	}
	return false
}

func benchPost(b *testing.B, h http.Handler, body string, version string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", "/api/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set("MCP-Protocol-Version", version)
		req.Header.Set("Mcp-Method", "tools/list")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func toolsListBatch(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = `{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"tools/list"}`
	}
	return "[" + strings.Join(items, ",") + "]"
}

// What the guard costs on the hot path: tools/list (21 KB answered) with and
// without it, 2026-07-28 protocol.
//
//	go test -run '^$' -bench ToolsList -benchtime 2000x ./origin/mcpserver
func BenchmarkToolsList(b *testing.B) {
	s := newTestServer(b)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"b","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	for _, c := range []struct {
		name string
		h    http.Handler
	}{
		{"guarded", s.Handler()},
		{"sdk-only", s.raw},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if w := benchPost(b, c.h, body, "2026-07-28"); w.Code != 200 {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
		})
	}
}

// The batch attack (1,000 tools/list in one POST) and the largest batch
// still allowed: request and answer sizes, and the time one POST takes
// (docs/benchmarks.md, "MCP transport limits").
//
//	go test -run '^$' -bench Batch -benchtime 20x ./origin/mcpserver
func BenchmarkBatch(b *testing.B) {
	s := newTestServer(b)
	for _, c := range []struct {
		name string
		n    int
		h    http.Handler
	}{
		{"1000-tools-list-sdk-only", 1000, s.raw}, // what the attack drew before the guard
		{"1000-tools-list", 1000, s.Handler()},
		{"16-tools-list-sdk-only", 16, s.raw},
		{"16-tools-list", 16, s.Handler()},
	} {
		body := toolsListBatch(c.n)
		b.Run(c.name, func(b *testing.B) {
			var answered int
			for b.Loop() {
				w := benchPost(b, c.h, body, "")
				answered = w.Body.Len()
			}
			b.ReportMetric(float64(len(body)), "req-bytes")
			b.ReportMetric(float64(answered), "resp-bytes")
			b.ReportMetric(float64(answered)/float64(len(body)), "amplification")
		})
	}
}
