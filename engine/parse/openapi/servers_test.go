package openapi

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func mustLoad(t *testing.T, doc, at string) *Spec {
	t.Helper()
	var base *url.URL
	if at != "" {
		base, _ = url.Parse(at)
	}
	s, err := Load([]byte(doc), base)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Servers are read the way a client reaches them; ServerURL is the first
// as written.
func TestServers(t *testing.T) {
	cases := []struct {
		name, doc, at string
		want          Servers
		serverURL     string
	}{
		{"3.x: relative, variables, unusable, duplicates", `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"servers":[
			{"url":"/api"},
			{"url":"https://{region}.example.com/{v}","variables":{"region":{"default":"eu"},"v":{"default":"v2"}}},
			{"url":"https://{tenant}.example.com/"},
			{"url":"ftp://files.example.com/"},
			{"url":"/api"},
			{"url":"https://user:secret@example.com/api"},
			{"url":"https://example.com/q?x=1#f"}
		],"paths":{}}`, "https://www.example.com/docs/openapi.json",
			Servers{Declared: 7, URLs: []string{"https://www.example.com/api", "https://eu.example.com/v2", "https://example.com/q"},
				Unusable: []string{"https://{tenant}.example.com/", "ftp://files.example.com/", "https://user:secret@example.com/api"}, Implicit: "https://www.example.com/"},
			"https://www.example.com/api"},
		// Without servers, OpenAPI 3 means "/" of the description's location.
		{"3.x: none declared", `{"openapi":"3.0.0","info":{"title":"t","version":"1"},"paths":{}}`, "http://example.org/v1/openapi.json",
			Servers{Implicit: "http://example.org/"}, ""},
		{"3.x: no base URL", `{"openapi":"3.0.0","info":{"title":"t","version":"1"},"servers":[{"url":"/v1"}],"paths":{}}`, "",
			Servers{Declared: 1, Unusable: []string{"/v1"}}, "/v1"},
		// Swagger 2.0: host, basePath and schemes, https preferred.
		{"2.0: host and schemes", "swagger: '2.0'\ninfo: {title: t, version: '1'}\nhost: api.example.net\nbasePath: v3\nschemes: [http, https]\npaths: {}\n", "http://example.net/swagger.yaml",
			Servers{Declared: 1, URLs: []string{"https://api.example.net/v3"}, Implicit: "https://example.net/v3"}, "https://api.example.net/v3"},
		// Without schemes, the scheme the description was fetched with.
		{"2.0: no schemes", "swagger: '2.0'\ninfo: {title: t, version: '1'}\nhost: api.example.net\npaths: {}\n", "http://example.net/swagger.yaml",
			Servers{Declared: 1, URLs: []string{"http://api.example.net"}, Implicit: "http://example.net"}, "http://api.example.net"},
		{"2.0: no host", "swagger: '2.0'\ninfo: {title: t, version: '1'}\nbasePath: /v3\npaths: {}\n", "https://example.net/swagger.yaml",
			Servers{Implicit: "https://example.net/v3"}, "https://example.net/v3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := mustLoad(t, c.doc, c.at)
			got := s.Servers
			got.first = ""
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("servers %+v, want %+v", got, c.want)
			}
			if s.ServerURL != c.serverURL {
				t.Errorf("ServerURL %q, want %q", s.ServerURL, c.serverURL)
			}
		})
	}
}

// Secured means anonymous callers cannot meet the effective requirement.
// An empty requirement object makes authentication optional (security:
// [{}] alone or beside others), and an operation's own security, empty or
// optional, overrides the document's. (Before, an operation with [{}, {key:
// []}] counted as secured here while the deep API probes, which read the
// description again, called it open; both now read it here.)
func TestSecured(t *testing.T) {
	const v3 = `{"openapi":"3.0.3","info":{"title":"t","version":"1"},
		"components":{"securitySchemes":{"key":{"type":"apiKey","in":"header","name":"X-Key"}}},
		%TOP%"paths":{"/a":{"get":{%OP%"responses":{"200":{"description":"ok"}}}}}}`
	cases := []struct {
		name, top, op string
		secured       bool
	}{
		{"no security anywhere", ``, ``, false},
		{"document's requirement applies", `"security":[{"key":[]}],`, ``, true},
		{"operation's own requirement", ``, `"security":[{"key":[]}],`, true},
		{"optional: [{}]", ``, `"security":[{}],`, false},
		{"optional: [{}, {key}]", ``, `"security":[{},{"key":[]}],`, false},
		{"optional: [{key}, {}]", ``, `"security":[{"key":[]},{}],`, false},
		{"document's optional auth", `"security":[{},{"key":[]}],`, ``, false},
		{"document secured, operation lifts it with []", `"security":[{"key":[]}],`, `"security":[],`, false},
		{"document secured, operation makes it optional", `"security":[{"key":[]}],`, `"security":[{}],`, false},
		{"document optional, operation requires", `"security":[{}],`, `"security":[{"key":[]}],`, true},
		{"map-shaped security is repaired, not ignored", ``, `"security":{"key":[]},`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := strings.NewReplacer("%TOP%", c.top, "%OP%", c.op).Replace(v3)
			s := mustLoad(t, doc, "https://example.com/openapi.json")
			if len(s.Operations) != 1 || s.Operations[0].Secured != c.secured {
				t.Errorf("%s: operations %+v, want secured=%v", doc, s.Operations, c.secured)
			}
		})
	}
	// Swagger 2.0 the same, through the conversion.
	sw := mustLoad(t, `{"swagger":"2.0","info":{"title":"t","version":"1"},"securityDefinitions":{"key":{"type":"apiKey","in":"header","name":"X"}},
		"security":[{"key":[]}],"paths":{"/secured":{"get":{"responses":{"200":{"description":"ok"}}}},
		"/open":{"get":{"security":[],"responses":{"200":{"description":"ok"}}}},
		"/optional":{"get":{"security":[{},{"key":[]}],"responses":{"200":{"description":"ok"}}}}}}`, "https://example.com/swagger.json")
	want := map[string]bool{"/secured": true, "/open": false, "/optional": false}
	for _, op := range sw.Operations {
		if w, ok := want[op.Path]; !ok || op.Secured != w {
			t.Errorf("swagger 2.0 %s: secured=%v, want %v", op.Path, op.Secured, w)
		}
	}
}

// The documented 4xx and default responses, their $refs resolved, media
// types normalised; Swagger 2.0 responses take the operation's produces,
// else the document's.
func TestErrorTypes(t *testing.T) {
	s := mustLoad(t, `
openapi: 3.0.3
info: {title: t, version: '1'}
components:
  responses:
    NotFound: {$ref: "#/components/responses/Missing"}
    Missing:
      description: gone
      content: {"Application/Problem+JSON; charset=utf-8": {}, "application/json": {}}
    Loop: {$ref: "#/components/responses/Loop"}
paths:
  /items/{id}:
    get:
      responses:
        "200": {description: ok, content: {application/json: {}}}
        "404": {$ref: "#/components/responses/NotFound"}
        4xx: {description: any client error}
        "429": {description: slow down, content: {text/plain: {}}}
        "500": {description: broken, content: {text/html: {}}}
        default: {description: other, content: {application/json: {}}}
  /loop:
    get:
      responses: {"4XX": {$ref: "#/components/responses/Loop"}}
`, "https://example.com/openapi.yaml")
	ops := map[string]Operation{}
	for _, op := range s.Operations {
		ops[op.Path] = op
	}
	items := ops["/items/{id}"]
	want := map[string][]string{"404": {"application/json", "application/problem+json"}, "4XX": nil, "429": {"text/plain"}, "default": {"application/json"}}
	if !reflect.DeepEqual(items.ErrorTypes, want) {
		t.Errorf("/items/{id}: %#v, want %#v", items.ErrorTypes, want)
	}
	if got := items.Documented4xx(); !reflect.DeepEqual(got, []string{"404", "429", "4XX"}) {
		t.Errorf("documented 4xx %v", got)
	}
	// A $ref cycle ends: the code is documented, without a body.
	if loop := ops["/loop"]; !reflect.DeepEqual(loop.ErrorTypes, map[string][]string{"4XX": nil}) {
		t.Errorf("/loop: %#v", loop.ErrorTypes)
	}

	sw := mustLoad(t, `{"swagger":"2.0","info":{"title":"t","version":"1"},"produces":["application/xml"],"paths":{
		"/a/{id}":{"get":{"responses":{"404":{"description":"x","schema":{"type":"object"}}}}},
		"/b/{id}":{"get":{"produces":["application/json"],"responses":{"404":{"description":"x","schema":{"type":"object"}}}}},
		"/c/{id}":{"get":{"responses":{"404":{"description":"no body"}}}}}}`, "https://example.com/swagger.json")
	got := map[string][]string{}
	for _, op := range sw.Operations {
		got[op.Path] = op.ErrorTypes["404"]
	}
	if !reflect.DeepEqual(got, map[string][]string{"/a/{id}": {"application/xml"}, "/b/{id}": {"application/json"}, "/c/{id}": nil}) {
		t.Errorf("swagger 2.0 error types %v", got)
	}
}
