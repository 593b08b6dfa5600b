package gather

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/testing/testenv"
)

func TestA2AInterfaces(t *testing.T) {
	base, _ := url.Parse("https://agent.example.com/.well-known/agent-card.json")
	cases := []struct {
		name, card string
		want       []a2aIface
		unusable   []string
	}{
		{"v1.0 with protocolBinding, transport and a relative URL",
			`{"protocolVersion":"1.0","supportedInterfaces":[
				{"url":"https://agent.example.com/a2a","protocolBinding":"JSONRPC"},
				{"url":"/a2a/grpc","transport":"grpc"},
				{"url":"https://agent.example.com/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.1"},
				{"url":"https://agent.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"0.3"},
				{"url":"https://agent.example.com/a2a","protocolBinding":"JSONRPC"}]}`,
			[]a2aIface{{"https://agent.example.com/a2a", A2AJSONRPC, "1.0"}, {"https://agent.example.com/a2a/grpc", A2AGRPC, "1.0"},
				{"https://agent.example.com/rest", A2AHTTPJSON, "1.1"}, {"https://agent.example.com/a2a", A2AJSONRPC, "0.3"}}, nil},
		{"v0.3 url, preferredTransport and additionalInterfaces",
			`{"url":"https://agent.example.com/rpc","protocolVersion":"0.3.0","preferredTransport":"JSON-RPC","additionalInterfaces":[
				{"url":"https://agent.example.com/rpc","transport":"JSONRPC"},{"url":"https://agent.example.com/v1","transport":"REST"},{"url":"mailto:a@b.c","transport":"JSONRPC"}]}`,
			[]a2aIface{{"https://agent.example.com/rpc", A2AJSONRPC, "0.3.0"}, {"https://agent.example.com/v1", A2AHTTPJSON, "0.3.0"}}, []string{"mailto:a@b.c"}},
		{"a legacy card: url only", `{"url":"http://agent.example.com/"}`, []a2aIface{{"http://agent.example.com/", A2AJSONRPC, "0.3"}}, nil},
		{"no interface", `{"name":"x"}`, nil, nil},
	}
	for _, c := range cases {
		got, unusable, ok := a2aInterfaces([]byte(c.card), base)
		if !ok || !reflect.DeepEqual(got, c.want) || !reflect.DeepEqual(unusable, c.unusable) {
			t.Errorf("%s:\n got %v %v %v\nwant %v %v", c.name, got, unusable, ok, c.want, c.unusable)
		}
	}
	for _, bad := range []string{`[]`, `null`, `"card"`, `{`, ``} {
		if _, _, ok := a2aInterfaces([]byte(bad), base); ok {
			t.Errorf("%q read as a card", bad)
		}
	}
	var b strings.Builder
	b.WriteString(`{"supportedInterfaces":[`)
	for i := range 1000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"url":"https://agent.example.com/%d","protocolBinding":"JSONRPC"}`, i)
	}
	b.WriteString(`]}`)
	if got, _, _ := a2aInterfaces([]byte(b.String()), base); len(got) != a2aMaxDeclared {
		t.Errorf("%d interfaces read from a card of 1000", len(got))
	}
}

// The real cards of ../shared/corpus read as their notes in SOURCES.md say.
func TestA2AInterfacesCorpus(t *testing.T) {
	dir := testenv.Shared(t, "corpus/a2a")
	base, _ := url.Parse("https://agent.example.com/.well-known/agent-card.json")
	want := map[string][]a2aIface{
		"currency-agent-two-interfaces.json": {{"http://localhost:10999", A2AJSONRPC, "1.0"}, {"http://localhost:10999", A2AJSONRPC, "0.3"}},
		"currency-agent-v03.json":            {{"http://localhost:10999", A2AJSONRPC, "0.3.0"}},
		"recipe-agent-full.json":             {{"https://recipes.example.com/a2a", A2AJSONRPC, "1.0"}, {"https://recipes.example.com/a2a/grpc", A2AGRPC, "1.0"}},
		"invoice-agent.json":                 {{"https://agent.example.com/a2a/v1", A2AJSONRPC, "0.3"}},
		"weather-agent.json":                 {{"https://api.weathernow.io/a2a", A2AJSONRPC, "1.0"}},
		"incomplete-agent.json":              nil,
		"minimal-agent.json":                 nil,
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) < 5 {
		t.Fatalf("%d corpus cards", len(files))
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, _, ok := a2aInterfaces(body, base)
		if !ok {
			t.Errorf("%s: not read as a card", f)
		}
		if w, listed := want[filepath.Base(f)]; listed && !reflect.DeepEqual(got, w) {
			t.Errorf("%s: %v, want %v", filepath.Base(f), got, w)
		}
	}
}

func TestA2AReadReply(t *testing.T) {
	cases := []struct {
		ct, body string
		want     *A2AReply
	}{
		{"application/json", `{"jsonrpc":"2.0","id":1,"result":{"name":"Helper"}}`, &A2AReply{Result: true, ResultName: "Helper"}},
		{"application/json", `{"jsonrpc":"2.0","id":1,"result":null}`, &A2AReply{Result: true}},
		{"application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`, &A2AReply{Code: -32601, Message: "Method not found"}},
		{"application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, &A2AReply{Code: -32700, Message: "Parse error"}},
		{"text/event-stream", "event: message\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"id\":1,\"result\":{}}\n\n", &A2AReply{Result: true}},
		{"application/json", `{"jsonrpc":"2.0","id":2,"result":{}}`, nil},                                 // another request's answer
		{"application/json", `{"jsonrpc":"2.0","id":null,"result":{}}`, nil},                              // a result names its request
		{"application/json", `{"id":1,"result":{}}`, nil},                                                 // not JSON-RPC 2.0
		{"application/json", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":""}}`, nil}, // both
		{"application/json", `{"jsonrpc":"2.0","id":1,"error":{"message":"no code"}}`, nil},
		{"application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}`, nil},
		{"application/json", `{"jsonrpc":"2.0","id":1}`, nil},
		{"text/html", `<!doctype html><h1>Not found</h1>`, nil},
		{"application/json", `[{"jsonrpc":"2.0","id":1,"result":{}}]`, nil},
	}
	for _, c := range cases {
		if got := a2aReadReply(c.ct, []byte(c.body)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %s: %+v, want %+v", c.ct, c.body, got, c.want)
		}
	}
}

// The request reads the extended card in the interface's era; nothing in it
// sends a message, so no task can come of it.
func TestA2ARequest(t *testing.T) {
	for _, c := range []struct{ version, method, header string }{
		{"1.0", A2AMethodV1, "1.0"}, {"1.2.3", A2AMethodV1, "1.2"}, {"1.0\r\nX: y", A2AMethodV1, "1.0"},
		{"0.3", A2AMethodV03, ""}, {"0.3.0", A2AMethodV03, ""},
	} {
		method, body, h := a2aRequest(c.version)
		var req struct {
			JSONRPC string `json:"jsonrpc"`
			ID      int    `json:"id"`
			Method  string `json:"method"`
		}
		if err := json.Unmarshal(body, &req); err != nil || req.JSONRPC != "2.0" || req.ID != 1 || req.Method != c.method || method != c.method {
			t.Errorf("%s: %s (%v)", c.version, body, err)
		}
		if h["A2A-Version"] != c.header || h["Content-Type"] != "application/json" {
			t.Errorf("%s: headers %v", c.version, h)
		}
		if strings.Contains(strings.ToLower(string(body)), "message") || strings.Contains(strings.ToLower(string(body)), "task") {
			t.Errorf("%s: the request could create a task: %s", c.version, body)
		}
	}
}

func FuzzA2AInterfaces(f *testing.F) {
	f.Add([]byte(`{"supportedInterfaces":[{"url":"/a","protocolBinding":"jsonrpc","protocolVersion":"1.0"}],"url":"https://x.example/","additionalInterfaces":[{"url":"//y.example/","transport":"grpc"}]}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}}`))
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"name\":\"n\"}}\n\n"))
	base, _ := url.Parse("https://agent.example.com/.well-known/agent-card.json")
	f.Fuzz(func(t *testing.T, body []byte) {
		list, unusable, _ := a2aInterfaces(body, base)
		if len(list)+len(unusable) > a2aMaxDeclared {
			t.Fatalf("%d interfaces", len(list)+len(unusable))
		}
		for _, it := range list {
			u, err := url.Parse(it.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				t.Fatalf("interface URL %q", it.URL)
			}
			if _, _, h := a2aRequest(it.Version); strings.ContainsAny(h["A2A-Version"], "\r\n") {
				t.Fatalf("header %q", h["A2A-Version"])
			}
		}
		for _, ct := range []string{"application/json", "text/event-stream"} {
			if r := a2aReadReply(ct, body); r != nil && r.Result && r.Code != 0 {
				t.Fatalf("a reply both result and error: %+v", r)
			}
		}
	})
}

// What an agent endpoint saw, per request.
type a2aSeen struct {
	method, path, origin, contentType, version string
	body                                       []byte
}

// Five same-site JSON-RPC interfaces and two HTTP+JSON ones cost two POSTs
// and one GET; the POSTs carry the extended-card request and no Origin; a
// cross-site interface and a gRPC one are listed, not contacted.
func TestA2AProbeIsBoundedAndCreatesNothing(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []a2aSeen
	)
	var card string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if strings.HasPrefix(r.URL.Path, "/agent") || strings.HasPrefix(r.URL.Path, "/rest") {
			mu.Lock()
			seen = append(seen, a2aSeen{r.Method, r.URL.Path, r.Header.Get("Origin"), r.Header.Get("Content-Type"), r.Header.Get("A2A-Version"), body})
			mu.Unlock()
		}
		switch {
		case r.URL.Path == "/":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><body>agent</body></html>")
		case r.URL.Path == "/.well-known/agent-card.json":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, card)
		case r.URL.Path == "/agent/1":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"name":"Seen"}}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ifs := []string{
		`{"url":"` + srv.URL + `/agent/1","protocolBinding":"JSONRPC","protocolVersion":"1.0"}`,
		`{"url":"` + srv.URL + `/agent/2","protocolBinding":"JSONRPC","protocolVersion":"0.3"}`,
		`{"url":"https://elsewhere.example/agent","protocolBinding":"JSONRPC"}`,
		`{"url":"` + srv.URL + `/agent/grpc","protocolBinding":"GRPC"}`,
	}
	for i := 3; i <= 5; i++ {
		ifs = append(ifs, fmt.Sprintf(`{"url":"%s/agent/%d","protocolBinding":"JSONRPC"}`, srv.URL, i))
	}
	ifs = append(ifs, `{"url":"`+srv.URL+`/rest/1","protocolBinding":"HTTP+JSON"}`, `{"url":"`+srv.URL+`/rest/2","protocolBinding":"HTTP+JSON"}`)
	card = `{"name":"n","supportedInterfaces":[` + strings.Join(ifs, ",") + `]}`
	set := deepRun(t, srv.URL, fetch.Config{})
	doc := Get(set, AgentInterfaces)
	if doc == nil || doc.Declared != 9 || len(doc.Tried) != 3 || doc.Beyond != 4 ||
		!reflect.DeepEqual(doc.CrossSite, []string{"https://elsewhere.example/agent"}) || !reflect.DeepEqual(doc.GRPC, []string{srv.URL + "/agent/grpc"}) {
		t.Fatalf("artifact %+v", doc)
	}
	if r := doc.Tried[0].Reply; r == nil || !r.Result || r.ResultName != "Seen" {
		t.Errorf("first interface's reply %+v", r)
	}
	if doc.Tried[1].Reply != nil || doc.Tried[1].Resp.Status != 404 {
		t.Errorf("second interface: %+v", doc.Tried[1])
	}
	mu.Lock()
	defer mu.Unlock()
	posts, gets := 0, 0
	for _, s := range seen {
		switch s.method {
		case http.MethodPost:
			posts++
			if s.origin != "" || s.contentType != "application/json" {
				t.Errorf("POST %s with Origin %q, Content-Type %q", s.path, s.origin, s.contentType)
			}
			var req struct{ Method string }
			json.Unmarshal(s.body, &req)
			want, version := A2AMethodV1, "1.0"
			if s.path == "/agent/2" {
				want, version = A2AMethodV03, ""
			}
			if req.Method != want || s.version != version {
				t.Errorf("POST %s called %q with A2A-Version %q", s.path, req.Method, s.version)
			}
		case http.MethodGet:
			gets++
			if s.path != "/rest/1" {
				t.Errorf("GET %s", s.path)
			}
		default:
			t.Errorf("%s %s", s.method, s.path)
		}
	}
	if posts != A2AMaxJSONRPC || gets != A2AMaxHTTP {
		t.Errorf("%d POSTs and %d GETs to the agent; want %d and %d", posts, gets, A2AMaxJSONRPC, A2AMaxHTTP)
	}
}

// The card's security schemes decide whether the interfaces get the scan's
// token: one that names the authorization server that issued it (a flow's
// tokenUrl, its metadata, an OpenID Connect discovery URL; v0.3 or v1.0
// shape; relative or spelt otherwise) does, anything else does not.
func TestA2ATokenScheme(t *testing.T) {
	base, _ := url.Parse("https://shop.example/.well-known/agent-card.json")
	tok := &OAuthTokenDoc{Issuer: "https://shop.example", MetadataURL: "https://shop.example" + WellKnownAS, Endpoint: "https://shop.example/oauth/token"}
	for _, c := range []struct {
		name, schemes, want string
	}{
		{"v0.3 client credentials", `{"oauth":{"type":"oauth2","flows":{"clientCredentials":{"tokenUrl":"https://shop.example/oauth/token","scopes":{}}}}}`, "oauth"},
		{"relative token URL, other flow", `{"o":{"type":"oauth2","flows":{"authorizationCode":{"authorizationUrl":"/authorize","tokenUrl":"/oauth/token/","scopes":{}}}}}`, "o"},
		{"token URL spelt otherwise", `{"o":{"type":"OAuth2","flows":{"clientCredentials":{"tokenUrl":"HTTPS://SHOP.example:443/oauth/token"}}}}`, "o"},
		{"v0.3 metadata URL", `{"m":{"type":"oauth2","oauth2MetadataUrl":"https://shop.example/.well-known/oauth-authorization-server","flows":{}}}`, "m"},
		{"v1.0 shape", `{"key":{"apiKeySecurityScheme":{"location":"header","name":"X-Key"}},"v1":{"oauth2SecurityScheme":{"flows":{"clientCredentials":{"tokenUrl":"https://shop.example/oauth/token"}}}}}`, "v1"},
		{"OpenID Connect", `{"oidc":{"type":"openIdConnect","openIdConnectUrl":"https://shop.example/.well-known/openid-configuration"}}`, "oidc"},
		{"v1.0 OpenID Connect", `{"oidc":{"openIdConnectSecurityScheme":{"openIdConnectUrl":"https://shop.example/.well-known/openid-configuration"}}}`, "oidc"},
		{"another authorization server", `{"o":{"type":"oauth2","flows":{"clientCredentials":{"tokenUrl":"https://login.idp.example/oauth/token"}}}}`, ""},
		{"another path", `{"o":{"type":"oauth2","flows":{"clientCredentials":{"tokenUrl":"https://shop.example/tenant2/oauth/token"}}}}`, ""},
		{"plain bearer", `{"b":{"type":"http","scheme":"bearer"}}`, ""},
		{"wrong shapes", `{"a":{"type":"oauth2","flows":["x"]},"b":{"type":"openIdConnect","openIdConnectUrl":7},"c":null}`, ""},
		{"a broken scheme beside a good one", `{"a":"oauth2","b":{"type":"oauth2","flows":{"clientCredentials":{"tokenUrl":"/oauth/token"}}}}`, "b"},
	} {
		body := []byte(`{"name":"a","securitySchemes":` + c.schemes + `}`)
		if got := a2aTokenScheme(body, base, tok); got != c.want {
			t.Errorf("%s: scheme %q, want %q", c.name, got, c.want)
		}
	}
	if got := a2aTokenScheme([]byte(`{"securitySchemes":{"o":{"type":"oauth2","flows":{"clientCredentials":{"tokenUrl":"/oauth/token"}}}}}`), base, &OAuthTokenDoc{}); got != "" {
		t.Errorf("a scheme (%q) was matched without a token", got)
	}
	if got := a2aTokenScheme([]byte(`[1]`), base, tok); got != "" {
		t.Errorf("a card that is not an object matched %q", got)
	}
}
