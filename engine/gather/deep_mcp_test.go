package gather

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/parse/mcpcard"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentready/agentready/internal/testing/loopback"
)

// mcpSite is a loopback site whose server card declares endpoints; every
// request to a path under /mcp is logged with its JSON-RPC method.
type mcpSite struct {
	*httptest.Server
	mu   sync.Mutex
	hits []string // "POST tools/list", "DELETE", …
}

func (s *mcpSite) log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.hits...)
}

func (s *mcpSite) count(prefix string) int {
	n := 0
	for _, h := range s.log() {
		if strings.HasPrefix(h, prefix) {
			n++
		}
	}
	return n
}

// startMCPSite serves a homepage, a server card whose remotes are endpoints
// ({{ORIGIN}} is the site's origin) and handler under /mcp.
func startMCPSite(t *testing.T, handler http.Handler, endpoints ...string) *mcpSite {
	t.Helper()
	s := &mcpSite{}
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<!doctype html><title>t</title>")
	})
	mux.HandleFunc("/.well-known/mcp/server-card", func(w http.ResponseWriter, r *http.Request) {
		var remotes []map[string]string
		for _, e := range endpoints {
			remotes = append(remotes, map[string]string{"type": "streamable-http", "url": strings.ReplaceAll(e, "{{ORIGIN}}", s.URL)})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"name": "test/server", "remotes": remotes})
	})
	mux.HandleFunc("/mcp/", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			Method string `json:"method"`
		}
		json.Unmarshal(body, &m)
		s.mu.Lock()
		s.hits = append(s.hits, strings.TrimSpace(r.Method+" "+m.Method))
		s.mu.Unlock()
		handler.ServeHTTP(w, r)
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// testCardGatherer stands in for the web scan's MCP gatherer: the card
// only, without the free scan's own handshake, so the site's log holds
// the live client's requests alone.
var testCardGatherer = Define(MCPCard, "the server card only (tests)", nil, func(c *Ctx) (*MCPCardDoc, error) {
	r := c.Fetch(fetch.Request{URL: c.URL(MCPPaths[0]), Accept: acceptJSON})
	out := &MCPCardDoc{Resp: r}
	if r.Found() {
		out.Card, out.Err = mcpcard.Parse(r.Body, baseOf(r))
	}
	return out, nil
})

func runLive(t *testing.T, siteURL string, cfg fetch.Config) (*MCPLiveDoc, *fetch.Session) {
	t.Helper()
	cfg.Policy = loopback.Policy()
	sess := fetch.NewClient(cfg).NewSession()
	t.Cleanup(sess.Close)
	target, _ := url.Parse(siteURL + "/")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	set, err := MustPlan(append([]*Gatherer{testCardGatherer, mcpLiveGatherer}, noOAuth...)...).Run(ctx, sess, Site{Target: target, Origin: siteURL, ScannerOrigin: sess.Origin()})
	if err != nil {
		t.Fatal(err)
	}
	return Get(set, MCPLive), sess
}

func objectSchema() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string", "description": "query"}}, "required": []any{"q"}}
}

// sdkServer is the official SDK's server with tools, resources and prompts,
// two items a page.
func sdkServer(tools int, opts *mcp.StreamableHTTPOptions) http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "sdk-test", Version: "1.0"}, &mcp.ServerOptions{PageSize: 2})
	for i := range tools {
		srv.AddTool(&mcp.Tool{Name: fmt.Sprintf("tool_%d", i), Description: "finds things by query", InputSchema: objectSchema()},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				panic("the probe must never call a tool")
			})
	}
	for i := range 3 {
		srv.AddResource(&mcp.Resource{URI: fmt.Sprintf("file:///r%d", i), Name: fmt.Sprintf("r%d", i)},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) { return nil, nil })
	}
	srv.AddPrompt(&mcp.Prompt{Name: "summarise"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) { return nil, nil })
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, opts)
}

func listOf(ep MCPLiveEndpoint, kind string) MCPList {
	for _, l := range ep.Lists {
		if l.Kind == kind {
			return l
		}
	}
	return MCPList{}
}

// The official SDK server: the modern stateless protocol answers first, and
// every list is walked page by page (two items a page).
func TestLiveMCPModernSDKServer(t *testing.T) {
	site := startMCPSite(t, sdkServer(5, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}), "{{ORIGIN}}/mcp/")
	doc, _ := runLive(t, site.URL, fetch.Config{})
	if len(doc.Endpoints) != 1 {
		t.Fatalf("endpoints %+v", doc.Endpoints)
	}
	ep := doc.Endpoints[0]
	if ep.Failure != "" || ep.Era != "modern" || ep.ProtocolVersion != "2026-07-28" || ep.Server != "sdk-test" {
		t.Fatalf("endpoint %+v", ep)
	}
	tools, res, prompts := listOf(ep, "tools"), listOf(ep, "resources"), listOf(ep, "prompts")
	if tools.Items != 5 || tools.Pages != 3 || tools.Failure != "" || len(ep.Tools) != 5 {
		t.Errorf("tools %+v (%d kept)", tools, len(ep.Tools))
	}
	if res.Items != 3 || res.Pages != 2 || prompts.Items != 1 || prompts.Pages != 1 {
		t.Errorf("resources %+v prompts %+v", res, prompts)
	}
	if ep.ToolsDropped != 0 || ep.ToolsUndeclared {
		t.Errorf("dropped %d undeclared %v", ep.ToolsDropped, ep.ToolsUndeclared)
	}
	if site.count("POST tools/call") != 0 || site.count("POST initialize") != 0 || site.count("GET") != 0 {
		t.Errorf("requests %v", site.log())
	}
	if len(ep.Calls) != len(site.log()) {
		t.Errorf("%d calls logged, %d reached the site: %v", len(ep.Calls), len(site.log()), site.log())
	}
	for _, c := range ep.Calls {
		if c.Outcome != "result" || c.HTTPStatus != 200 {
			t.Errorf("call %+v", c)
		}
	}
}

// legacyOnly hides the SDK server's server/discover, like a server written
// before 2026-07-28.
func legacyOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"server/discover"`)) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// A legacy server: discover fails, initialize opens a session (SSE
// answers), the lists work, and the session is ended with DELETE.
func TestLiveMCPLegacyFallback(t *testing.T) {
	site := startMCPSite(t, legacyOnly(sdkServer(1, nil)), "{{ORIGIN}}/mcp/")
	doc, _ := runLive(t, site.URL, fetch.Config{})
	ep := doc.Endpoints[0]
	if ep.Failure != "" || ep.Era != "legacy" || ep.ProtocolVersion != "2025-11-25" {
		t.Fatalf("endpoint %+v", ep)
	}
	if !strings.Contains(ep.ModernFailure, "server/discover got HTTP 400 with JSON-RPC error -32601 (method not found)") {
		t.Errorf("modern failure %q", ep.ModernFailure)
	}
	if l := listOf(ep, "tools"); l.Items != 1 || l.Failure != "" {
		t.Errorf("tools %+v", l)
	}
	if site.count("POST initialize") != 1 || site.count("POST notifications/initialized") != 1 || site.count("DELETE") != 1 || site.count("GET") != 0 {
		t.Errorf("requests %v", site.log())
	}
}

// The free scan's handshake ends the session a stateful server opened with
// its initialize, as the transport spec asks: after the legacy tools/list,
// and also when server/discover answered and the session was never used.
func TestProbeMCPEndsItsSession(t *testing.T) {
	for name, tc := range map[string]struct {
		h      http.Handler
		modern bool
		tools  int // listed through the session (the legacy era)
	}{
		"legacy":               {legacyOnly(sdkServer(1, nil)), false, 1},
		"modern, session idle": {sdkServer(1, nil), true, 0},
	} {
		t.Run(name, func(t *testing.T) {
			site := startMCPSite(t, tc.h, "{{ORIGIN}}/mcp/")
			sess := fetch.NewClient(fetch.Config{Policy: loopback.Policy()}).NewSession()
			defer sess.Close()
			target, _ := url.Parse(site.URL + "/")
			set, err := WebPlan.Run(context.Background(), sess, Site{Target: target, Origin: site.URL, ScannerOrigin: sess.Origin()})
			if err != nil {
				t.Fatal(err)
			}
			pr := Get(set, MCPCard).Probe
			if !pr.Legacy || pr.Modern != tc.modern || len(pr.Tools) != tc.tools {
				t.Errorf("probe %+v", pr)
			}
			log := site.log()
			if site.count("POST initialize") != 1 || site.count("DELETE") != 1 || log[len(log)-1] != "DELETE" {
				t.Errorf("requests %v: want one initialize and the session ended last", log)
			}
		})
	}
}

// rpcHandler answers JSON-RPC with fixed results per method.
func rpcHandler(results map[string]string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.NewDecoder(r.Body).Decode(&m)
		if m.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		res, ok := results[m.Method]
		w.Header().Set("Content-Type", "application/json")
		if !ok {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"nope"}}`, m.ID)
			return
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, res)
	})
}

const modernDiscover = `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"resources":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"raw","version":"1"}}}`

// Tools the SDK client refuses (a null entry, an x-mcp-header on an object)
// are counted; a list the capabilities declare but that fails is recorded
// with what it got; a tools list that never ends stops at five pages.
func TestLiveMCPDroppedToolsAndFailingList(t *testing.T) {
	bad := `{"name":"bad","inputSchema":{"type":"object","properties":{"o":{"type":"object","x-mcp-header":"X"}}}}`
	good := `{"name":"good","inputSchema":{"type":"object"}}`
	site := startMCPSite(t, rpcHandler(map[string]string{
		"server/discover": modernDiscover,
		"tools/list":      `{"tools":[` + good + `,null,` + bad + `],"nextCursor":"again"}`,
	}), "{{ORIGIN}}/mcp/")
	doc, _ := runLive(t, site.URL, fetch.Config{})
	ep := doc.Endpoints[0]
	tools := listOf(ep, "tools")
	if ep.Era != "modern" || tools.Pages != MaxMCPPages || !tools.Capped || tools.Items != MaxMCPPages {
		t.Fatalf("endpoint %+v tools %+v", ep, tools)
	}
	if ep.ToolsDropped != 2*MaxMCPPages {
		t.Errorf("dropped %d", ep.ToolsDropped)
	}
	if res := listOf(ep, "resources"); res.Failure != "resources/list got JSON-RPC error -32601 (method not found)" {
		t.Errorf("resources %+v", res)
	}
	if l := listOf(ep, "prompts"); l.Tried || site.count("POST prompts/list") != 0 {
		t.Errorf("prompts were not declared but asked for: %+v", l)
	}
}

// Broken endpoints fail with what they answered, in plain words.
func TestLiveMCPBroken(t *testing.T) {
	for name, tc := range map[string]struct {
		h    http.HandlerFunc
		want string
	}{
		"500": {func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}, "server/discover got HTTP 500; initialize got HTTP 500"},
		"html": {func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<!doctype html><p>hello")
		}, "initialize got an HTML page instead of JSON-RPC"},
		"not-json-rpc": {func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"ok":true}`)
		}, "initialize got a body that holds no JSON-RPC response"},
		"bad-version": {func(w http.ResponseWriter, r *http.Request) {
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			json.NewDecoder(r.Body).Decode(&m)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"1999-01-01","capabilities":{},"serverInfo":{"name":"x","version":"1"}}}`, m.ID)
		}, "protocol version no MCP release defines"},
	} {
		t.Run(name, func(t *testing.T) {
			site := startMCPSite(t, tc.h, "{{ORIGIN}}/mcp/")
			doc, _ := runLive(t, site.URL, fetch.Config{})
			ep := doc.Endpoints[0]
			if ep.Era != "" || !strings.Contains(ep.Failure, tc.want) {
				t.Fatalf("failure %q, want %q (%+v)", ep.Failure, tc.want, ep.Calls)
			}
			if site.count("DELETE") != 0 || site.count("GET") != 0 {
				t.Errorf("requests %v", site.log())
			}
		})
	}
}

// A hung endpoint ends at the session's per-request timeout, twice (discover,
// then initialize), not at the scan's deadline.
func TestLiveMCPHung(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	site := startMCPSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}), "{{ORIGIN}}/mcp/")
	start := time.Now()
	doc, _ := runLive(t, site.URL, fetch.Config{RequestTimeout: 500 * time.Millisecond})
	ep := doc.Endpoints[0]
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %s", took)
	}
	if !strings.Contains(ep.Failure, "initialize got no answer") {
		t.Errorf("failure %q", ep.Failure)
	}
}

// A same-site endpoint that redirects to a link-local address is stopped by
// the session's address guard: the SDK's traffic has no way around it.
func TestLiveMCPGuard(t *testing.T) {
	site := startMCPSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data", http.StatusTemporaryRedirect)
	}), "{{ORIGIN}}/mcp/")
	doc, sess := runLive(t, site.URL, fetch.Config{})
	ep := doc.Endpoints[0]
	if ep.Era != "" || !strings.Contains(ep.Failure, "initialize got no answer") {
		t.Fatalf("failure %q", ep.Failure)
	}
	for _, rec := range sess.Records() {
		if strings.Contains(rec.URL, "169.254") && rec.Status != 0 {
			t.Errorf("reached %+v", rec)
		}
	}
	if !strings.Contains(ep.Failure, "link-local") {
		t.Errorf("the failure does not say why: %q", ep.Failure)
	}
}

// Endpoints on another registrable domain are listed, not tried; a third
// same-site endpoint is over the cap.
func TestLiveMCPEndpointSelection(t *testing.T) {
	site := startMCPSite(t, sdkServer(1, &mcp.StreamableHTTPOptions{Stateless: true}),
		"https://mcp.other.example/mcp", "{{ORIGIN}}/mcp/a", "{{ORIGIN}}/mcp/b", "{{ORIGIN}}/mcp/c")
	doc, _ := runLive(t, site.URL, fetch.Config{})
	if len(doc.CrossSite) != 1 || doc.CrossSite[0] != "https://mcp.other.example/mcp" || doc.NotTried != 1 || len(doc.Endpoints) != 2 {
		t.Fatalf("%+v", doc)
	}
	for _, ep := range doc.Endpoints {
		if ep.Era != "modern" {
			t.Errorf("%s: %+v", ep.URL, ep)
		}
	}
	if site.count("POST server/discover") != 2 {
		t.Errorf("requests %v", site.log())
	}
}

// A server that answers a list with a stream of its own requests gets no
// answer to them, and the probe's requests stay under MaxMCPRequests.
func TestLiveMCPServerRequestsAreNotAnswered(t *testing.T) {
	site := startMCPSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.NewDecoder(r.Body).Decode(&m)
		switch {
		case m.ID == nil:
			w.WriteHeader(http.StatusAccepted)
		case m.Method == "server/discover":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, modernDiscover)
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range 500 {
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"s%d\",\"method\":\"ping\"}\n\n", i)
			}
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"tools\":[],\"resources\":[]}}\n\n", m.ID)
		}
	}), "{{ORIGIN}}/mcp/")
	doc, _ := runLive(t, site.URL, fetch.Config{})
	ep := doc.Endpoints[0]
	if ep.Era != "modern" {
		t.Fatalf("%+v", ep)
	}
	if l := listOf(ep, "tools"); l.Failure != "" || l.Pages != 1 {
		t.Errorf("tools %+v", l)
	}
	if n := len(site.log()); n > MaxMCPRequests {
		t.Errorf("%d requests reached the server", n)
	}
	if site.count("POST response") != 0 {
		t.Errorf("the probe answered the server's requests: %v", site.log())
	}
}

// The last request of an endpoint's budget is kept for the DELETE that
// ends the session: however many POSTs a server drew out (cancellations of
// timed-out pages count too), the session is ended; a second DELETE of the
// same session is not sent.
func TestMCPTransportKeepsTheDelete(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.Header.Get("Mcp-Session-Id"))
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	sess := fetch.NewClient(fetch.Config{Policy: loopback.Policy()}).NewSession()
	defer sess.Close()
	c := &Ctx{Context: context.Background(), sess: sess}
	endpoint := srv.URL + "/mcp"
	tr := &mcpSessionTransport{c: c, endpoint: endpoint}
	n := 0
	send := func(method, session string) error {
		n++
		req, _ := http.NewRequest(method, endpoint, strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, n)))
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	posts := 0
	for send(http.MethodPost, "s1") == nil {
		posts++
	}
	if posts != MaxMCPRequests-1 {
		t.Errorf("%d POSTs went out, want %d", posts, MaxMCPRequests-1)
	}
	if err := send(http.MethodDelete, "s1"); err != nil {
		t.Errorf("the DELETE was refused after the POSTs: %v", err)
	}
	if err := send(http.MethodDelete, "s1"); err == nil {
		t.Error("the same session was ended twice")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != MaxMCPRequests || seen[len(seen)-1] != "DELETE s1" {
		t.Errorf("the server saw %d requests, the last %q", len(seen), seen[len(seen)-1])
	}
}

// A list page larger than the body cap is reported as cut, not parsed from
// its beginning.
func TestLiveMCPHugeList(t *testing.T) {
	huge := `{"tools":[` + strings.Repeat(`{"name":"t","inputSchema":{"type":"object"}},`, 40000) + `{"name":"last","inputSchema":{"type":"object"}}]}`
	site := startMCPSite(t, rpcHandler(map[string]string{"server/discover": modernDiscover, "tools/list": huge, "resources/list": `{"resources":[]}`}), "{{ORIGIN}}/mcp/")
	doc, _ := runLive(t, site.URL, fetch.Config{})
	ep := doc.Endpoints[0]
	if l := listOf(ep, "tools"); !strings.HasPrefix(l.Failure, "tools/list got an answer that was cut") || len(ep.Tools) != 0 {
		t.Fatalf("tools %+v (%d kept)", l, len(ep.Tools))
	}
	if l := listOf(ep, "resources"); l.Failure != "" || l.Pages != 1 {
		t.Errorf("resources %+v", l)
	}
}

// Whatever the endpoint did, the probe leaves no SDK goroutine behind (a
// session it opened is closed, a failed one too).
func TestLiveMCPLeavesNoGoroutines(t *testing.T) {
	sites := []*mcpSite{
		startMCPSite(t, legacyOnly(sdkServer(3, nil)), "{{ORIGIN}}/mcp/"),
		startMCPSite(t, sdkServer(3, &mcp.StreamableHTTPOptions{Stateless: true}), "{{ORIGIN}}/mcp/"),
		startMCPSite(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"ok":true}`)
		}), "{{ORIGIN}}/mcp/"),
	}
	for _, s := range sites {
		runLive(t, s.URL, fetch.Config{})
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		// Client frames only: the test's own SDK servers may keep theirs.
		if !strings.Contains(stacks, "mcp.(*streamableClientConn)") && !strings.Contains(stacks, "mcp.(*ClientSession)") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("SDK goroutines left:\n%s", stacks)
		}
		runtime.Gosched()
		time.Sleep(10 * time.Millisecond)
	}
}

// tools/list is asked for even when the capabilities do not declare tools:
// listing tools anyway is recorded; refusing is simply having none.
func TestLiveMCPUndeclaredTools(t *testing.T) {
	const bare = `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{}}`
	site := startMCPSite(t, rpcHandler(map[string]string{"server/discover": bare, "tools/list": `{"tools":[{"name":"x","inputSchema":{"type":"object"}}]}`}), "{{ORIGIN}}/mcp/")
	doc, _ := runLive(t, site.URL, fetch.Config{})
	if ep := doc.Endpoints[0]; !ep.ToolsUndeclared || listOf(ep, "tools").Items != 1 {
		t.Errorf("listed: %+v", ep)
	}
	site = startMCPSite(t, rpcHandler(map[string]string{"server/discover": bare}), "{{ORIGIN}}/mcp/")
	doc, _ = runLive(t, site.URL, fetch.Config{})
	if ep := doc.Endpoints[0]; ep.ToolsUndeclared || ep.Era != "modern" || listOf(ep, "tools").Tried || listOf(ep, "tools").Failure != "" {
		t.Errorf("refused: %+v", ep)
	}
}
