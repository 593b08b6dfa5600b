package gather

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/parse/openapi"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/loopback"
	"github.com/agentready/agentready/internal/testing/testenv"
)

// planOf is what the probes take from doc, loaded by engine/parse/openapi as the
// free scan loads a description found at at.
func planOf(t testing.TB, doc, at string) *apiDesc {
	t.Helper()
	u, _ := url.Parse(at)
	spec, err := openapi.Load([]byte(doc), u)
	if err != nil {
		t.Fatal(err)
	}
	return apiPlan(&OpenAPIDoc{Spec: spec, Resp: &fetch.Response{RequestURL: at, FinalURL: at}})
}

func TestAPIPlanServers(t *testing.T) {
	d := planOf(t, `{"openapi":"3.1.0","servers":[
		{"url":"/api"},
		{"url":"https://{region}.example.com/{v}","variables":{"region":{"default":"eu"},"v":{"default":"v2"}}},
		{"url":"https://{tenant}.example.com/"},
		{"url":"ftp://files.example.com/"},
		{"url":"/api"},
		{"url":"https://user:secret@example.com/api"}
	],"paths":{}}`, "https://www.example.com/docs/openapi.json")
	want := []string{"https://www.example.com/api", "https://eu.example.com/v2"}
	if d.Declared != 6 || !reflect.DeepEqual(d.Servers, want) {
		t.Fatalf("declared %d, servers %v; want 6, %v", d.Declared, d.Servers, want)
	}
	if !reflect.DeepEqual(d.Unusable, []string{"https://{tenant}.example.com/", "ftp://files.example.com/", "https://user:secret@example.com/api"}) {
		t.Errorf("unusable %v", d.Unusable)
	}
	if d.Implicit != "https://www.example.com/" {
		t.Errorf("implicit %q", d.Implicit)
	}

	// Without servers, OpenAPI 3 means "/" of the description's location.
	d = planOf(t, `{"openapi":"3.0.0","paths":{}}`, "http://example.org/v1/openapi.json")
	if d.Declared != 0 || len(d.Servers) != 0 || d.Implicit != "http://example.org/" {
		t.Errorf("no servers: %+v", d)
	}

	// Swagger 2.0: host, basePath and schemes (https preferred); without a
	// host, the description's own host.
	d = planOf(t, "swagger: '2.0'\nhost: api.example.net\nbasePath: v3\nschemes: [http, https]\npaths: {}\n", "http://example.net/swagger.yaml")
	if d.Declared != 1 || !reflect.DeepEqual(d.Servers, []string{"https://api.example.net/v3"}) {
		t.Errorf("swagger host: %+v", d)
	}
	d = planOf(t, "swagger: '2.0'\nbasePath: /v3\npaths: {}\n", "https://example.net/swagger.yaml")
	if d.Declared != 0 || d.Implicit != "https://example.net/v3" {
		t.Errorf("swagger without host: %+v", d)
	}
}

func TestAPIPlanErrorOps(t *testing.T) {
	d := planOf(t, `
openapi: 3.0.3
security: [{key: []}]
components:
  responses:
    NotFound: {$ref: "#/components/responses/Missing"}
    Missing:
      description: gone
      content: {"application/problem+json; charset=utf-8": {}}
    Loop: {$ref: "#/components/responses/Loop"}
paths:
  /items/{id}:
    get:
      security: []
      responses:
        "200": {description: ok}
        "404": {$ref: "#/components/responses/NotFound"}
        default: {description: other, content: {application/json: {}}}
    delete:
      security: []
      responses: {"404": {description: gone}}
  /me:
    get:
      responses:
        401: {description: no key, content: {application/json: {}}}
  /secret/{id}:
    get:
      responses: {"404": {description: no credentials documented}}
  /list:
    get:
      security: []
      responses: {"404": {description: no path parameter to fill}}
  /open/{id}:
    get:
      security: [{}, {key: []}]
      responses: {"404": {description: anonymous callers allowed by the empty alternative}}
  /loop/{id}:
    get:
      security: []
      responses: {"4XX": {$ref: "#/components/responses/Loop"}}
  /rate/{id}:
    get:
      security: []
      responses: {"429": {description: cannot be provoked by a read}}
`, "https://example.com/openapi.yaml")
	got := map[string]apiErrorOp{}
	for _, op := range d.Ops {
		got[op.Path] = op
	}
	if d.Candidates != 4 || len(d.Ops) != 4 {
		t.Fatalf("%d candidates, ops %+v; want /items/{id}, /loop/{id}, /me, /open/{id}", d.Candidates, d.Ops)
	}
	if open := got["/open/{id}"]; open.Expect != APIExpectMissing {
		t.Errorf("/open/{id}: %+v", open)
	}
	items := got["/items/{id}"]
	if items.Expect != APIExpectMissing || !reflect.DeepEqual(items.Codes, []string{"404"}) ||
		!reflect.DeepEqual(items.Types["404"], []string{"application/problem+json"}) || !reflect.DeepEqual(items.Types["default"], []string{"application/json"}) {
		t.Errorf("/items/{id}: %+v", items)
	}
	if me := got["/me"]; me.Expect != APIExpectNoCredentials || !reflect.DeepEqual(me.Codes, []string{"401"}) {
		t.Errorf("/me: %+v", me)
	}
	// A $ref cycle ends (no media types), it does not hang.
	if loop := got["/loop/{id}"]; !reflect.DeepEqual(loop.Codes, []string{"4XX"}) || len(loop.Types["4XX"]) != 0 {
		t.Errorf("/loop/{id}: %+v", loop)
	}

	// Swagger 2.0: a response with a schema is in the operation's (or the
	// document's) produces types; one without has no body.
	d = planOf(t, `{"swagger":"2.0","produces":["application/json"],"paths":{
		"/a/{id}":{"get":{"responses":{"404":{"description":"x","schema":{"type":"object"}}}}},
		"/b/{id}":{"get":{"produces":["application/xml"],"responses":{"404":{"description":"x","schema":{"type":"object"}}}}},
		"/c/{id}":{"get":{"responses":{"404":{"description":"no body"}}}}}}`, "https://example.com/swagger.json")
	if len(d.Ops) != 3 || !reflect.DeepEqual(d.Ops[0].Types["404"], []string{"application/json"}) ||
		!reflect.DeepEqual(d.Ops[1].Types["404"], []string{"application/xml"}) || len(d.Ops[2].Types["404"]) != 0 {
		t.Errorf("swagger 2.0 ops: %+v", d.Ops)
	}
}

func TestAPIPlanBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"openapi":"3.0.0","paths":{`)
	for i := range 500 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"/r%03d/{id}":{"get":{"responses":{"404":{"description":"x"}}}}`, i)
	}
	b.WriteString(`}}`)
	d := planOf(t, b.String(), "https://example.com/openapi.json")
	if d.Candidates != 500 || len(d.Ops) != apiMaxCandidates {
		t.Fatalf("%d candidates, %d kept", d.Candidates, len(d.Ops))
	}
	chosen := apiChoose(d.Ops, APIMaxErrorOps)
	if len(chosen) != APIMaxErrorOps || chosen[0].Path != "/r000/{id}" {
		t.Errorf("chosen %+v", chosen)
	}
}

func TestAPIChooseTakesBothKinds(t *testing.T) {
	var ops []apiErrorOp
	for i := range 8 {
		ops = append(ops, apiErrorOp{Path: fmt.Sprintf("/a%d/{id}", i), Expect: APIExpectMissing})
	}
	ops = append(ops, apiErrorOp{Path: "/z/me", Expect: APIExpectNoCredentials})
	got := apiChoose(ops, 5)
	if len(got) != 5 || got[4].Path != "/z/me" || got[0].Path != "/a0/{id}" {
		t.Errorf("chosen %+v", got)
	}
	if apiFill("/a/{id}/b/{other_id}") != "/a/"+APINonexistent+"/b/"+APINonexistent {
		t.Error(apiFill("/a/{id}/b/{other_id}"))
	}
}

// The real descriptions of ../shared/corpus: every one reads without a
// panic, and the servers of those that declare some come out resolved.
func TestAPIPlanCorpus(t *testing.T) {
	dir := testenv.Shared(t, "corpus/openapi")
	want := map[string][]string{
		"apis-guru-swagger2.yaml":     {"https://api.apis.guru/v2/"},
		"swagger2-petstore.json":      {"http://petstore.swagger.io/v1"},
		"petstore-v3.0.yaml":          {"http://petstore.swagger.io/v1"},
		"petstore-expanded-v3.0.json": {"http://petstore.swagger.io/api"},
		"random-lovecraft-v3.0.yaml":  {"https://randomlovecraft.com/api"},
		"xkcd-v3.0.yaml":              {"http://xkcd.com/"},
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) < 5 {
		t.Fatalf("%d corpus files", len(files))
	}
	base, _ := url.Parse("https://docs.example.com/openapi.json")
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := openapi.Load(body, base)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		d := apiPlan(&OpenAPIDoc{Spec: spec, Resp: &fetch.Response{FinalURL: base.String()}})
		name := filepath.Base(f)
		if w, ok := want[name]; ok && !reflect.DeepEqual(d.Servers, w) {
			t.Errorf("%s: servers %v, want %v", name, d.Servers, w)
		}
		// Its GET /board/{row}/{column} writes its security as a map, which
		// engine/parse/openapi repairs (with a finding): the operation is secured
		// and documents no 401 or 403, so no request can provoke its 400.
		if name == "tictactoe-v3.1.yaml" && len(d.Ops) != 0 {
			t.Errorf("%s: ops %+v", name, d.Ops)
		}
	}
}

func FuzzAPIPlan(f *testing.F) {
	f.Add([]byte(`{"openapi":"3.0.0","servers":[{"url":"/{v}","variables":{"v":{"default":"x"}}}],"paths":{"/a/{id}":{"get":{"responses":{"404":{"$ref":"#/x"}}}}}}`))
	f.Add([]byte("swagger: '2.0'\nhost: h\npaths:\n  /a/{b}:\n    get:\n      security: [{k: []}]\n      responses: {401: {schema: {}}}\n"))
	f.Add([]byte(`{"openapi":"3","paths":{"/{a}":{"get":{"responses":{"4XX":{"$ref":"#/paths/~1{a}/get/responses/4XX"}}}}}}`))
	base, _ := url.Parse("https://example.com/spec/openapi.json")
	f.Fuzz(func(t *testing.T, body []byte) {
		spec, err := openapi.Load(body, base)
		if err != nil {
			return
		}
		d := apiPlan(&OpenAPIDoc{Spec: spec, Resp: &fetch.Response{FinalURL: base.String()}})
		if len(d.Ops) > apiMaxCandidates || len(d.Unusable) > apiMaxListed || d.Candidates < len(d.Ops) {
			t.Fatalf("unbounded: %d ops, %d unusable, %d candidates", len(d.Ops), len(d.Unusable), d.Candidates)
		}
		for _, s := range d.Servers {
			u, err := url.Parse(s)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(s, "{}") {
				t.Fatalf("server %q is not a requestable URL", s)
			}
		}
		for _, op := range apiChoose(d.Ops, APIMaxErrorOps) {
			if apiTemplateVar.MatchString(apiFill(op.Path)) {
				t.Fatalf("%q still has a template", op.Path)
			}
			if op.Expect != APIExpectMissing && op.Expect != APIExpectNoCredentials {
				t.Fatalf("expectation %q", op.Expect)
			}
		}
	})
}

// deepRun runs the deep plan over the site at origin, served on loopback.
func deepRun(t *testing.T, origin string, cfg fetch.Config) *Set {
	t.Helper()
	cfg.Policy = loopback.Policy()
	client := fetch.NewClient(cfg)
	sess := client.NewSession()
	t.Cleanup(sess.Close)
	target, _ := url.Parse(origin + "/")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	set, err := DeepPlan().Run(ctx, sess, Site{Target: target, Origin: origin, ScannerOrigin: sess.Origin()})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// A description with ten servers and twenty provokable operations costs at
// most three GETs and three preflights of servers and five operation GETs,
// and no write reaches the site though it documents POST, PUT and DELETE.
func TestAPIProbesAreBoundedAndReadOnly(t *testing.T) {
	var servers, paths []string
	for i := range 10 {
		servers = append(servers, fmt.Sprintf(`{"url":"{{ORIGIN}}/s%d"}`, i))
	}
	for i := range 20 {
		paths = append(paths, fmt.Sprintf(`"/r%02d/{id}":{"get":{"responses":{"404":{"description":"x"}}},"put":{"responses":{"404":{"description":"x"}}},"delete":{"responses":{"404":{"description":"x"}}},"post":{"responses":{"404":{"description":"x"}}}}`, i))
	}
	spec := `{"openapi":"3.0.0","info":{"title":"t","version":"1"},"servers":[` + strings.Join(servers, ",") + `],"paths":{` + strings.Join(paths, ",") + `}}`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "openapi.json"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "index.html"), []byte("<html><body>hi</body></html>"), 0o644)
	site, err := fixture.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	set := deepRun(t, site.URL, fetch.Config{})
	srv, errs := Get(set, APIServers), Get(set, APIErrors)
	if srv == nil || len(srv.Tried) != APIMaxServers || srv.Beyond != 7 || srv.Declared != 10 {
		t.Fatalf("servers: %+v", srv)
	}
	if errs == nil || len(errs.Tries) != APIMaxErrorOps || errs.Candidates != 20 || errs.Base != site.URL+"/s0" {
		t.Fatalf("errors: %+v", errs)
	}
	options, opGets := 0, 0
	for _, h := range site.Hits() {
		switch {
		case h.Method == http.MethodOptions:
			options++
		case h.Method == http.MethodGet && strings.Contains(h.Path, APINonexistent):
			opGets++
		case h.Method != http.MethodGet && h.Method != http.MethodHead:
			t.Errorf("the probes sent %s %s", h.Method, h.Path)
		}
	}
	if options != APIMaxServers || opGets != APIMaxErrorOps {
		t.Errorf("%d preflights and %d operation GETs; want %d and %d", options, opGets, APIMaxServers, APIMaxErrorOps)
	}
}

// A server that never answers costs the per-request timeout, not the
// scan: the artifact records the failure and the plan finishes.
func TestAPIServersHungServer(t *testing.T) {
	hung, err := fixture.StartHung()
	if err != nil {
		t.Fatal(err)
	}
	defer hung.Close()
	spec := `{"openapi":"3.0.0","info":{"title":"t","version":"1"},"servers":[{"url":"` + hung.URL + `/api"}],"paths":{"/x/{id}":{"get":{"responses":{"404":{"description":"x"}}}}}}`
	site, err := fixture.Start("", fixture.WithConfig(fixture.Config{Routes: map[string]fixture.Route{
		"/":             {ContentType: "text/html", Body: "<html><body>hi</body></html>"},
		"/openapi.json": {ContentType: "application/json", Body: spec},
	}}))
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	start := time.Now()
	set := deepRun(t, site.URL, fetch.Config{RequestTimeout: 500 * time.Millisecond})
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the deep plan took %s", d)
	}
	srv := Get(set, APIServers)
	if srv == nil || len(srv.Tried) != 1 || srv.Tried[0].Get.Err == nil || srv.Tried[0].Preflight.Err == nil {
		t.Fatalf("servers: %+v", srv)
	}
	if e := Get(set, APIErrors); e == nil || len(e.Tries) != 1 || e.Tries[0].Resp.Err == nil {
		t.Fatalf("errors: %+v", e)
	}
}
