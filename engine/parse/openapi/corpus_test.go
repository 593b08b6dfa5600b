package openapi

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentready/agentready/internal/testing/testenv"
)

// Every real document in the shared corpus loads, with the operations it declares.
func TestCorpusLoads(t *testing.T) {
	want := map[string]struct {
		version string
		ops     int
	}{
		"callback-example-v3.0.json":  {"3.0.0", 1},
		"flight-query-v3.2.yaml":      {"3.2.0", 1},
		"non-oauth-scopes-v3.1.yaml":  {"3.1.0", 1},
		"petstore-expanded-v3.0.json": {"3.0.0", 4},
		"petstore-v3.0.yaml":          {"3.0.0", 3},
		"swagger2-petstore.json":      {"2.0", 3},
		"tictactoe-v3.1.yaml":         {"3.1.0", 3},
		"webhook-example-v3.1.yaml":   {"3.1.0", 0},
		"xkcd-v3.0.yaml":              {"3.0.0", 2},
		"apis-guru-swagger2.yaml":     {"2.0", 2},   // Swagger 2.0 in YAML
		"random-lovecraft-v3.0.yaml":  {"3.0.0", 4}, // empty descriptions, quoted path keys
	}
	files, _ := filepath.Glob(testenv.Shared(t, "corpus/openapi") + "/*")
	if len(files) != len(want) {
		t.Fatalf("corpus has %d files, table has %d", len(files), len(want))
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		s, err := Load(body, nil)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		w := want[name]
		if s.Version != w.version || len(s.Operations) != w.ops {
			t.Errorf("%s: version %q ops %d, want %q %d", name, s.Version, len(s.Operations), w.version, w.ops)
		}
	}
}

func loadCorpus(t *testing.T, name string) *Spec {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.Shared(t, "corpus/openapi"), name))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCorpusModel(t *testing.T) {
	tt := loadCorpus(t, "tictactoe-v3.1.yaml")
	if len(tt.Findings) == 0 {
		t.Error("tictactoe: the map-shaped security must be reported")
	}
	kinds := map[string]bool{}
	for _, sc := range tt.Schemes {
		for _, f := range sc.Flows {
			kinds[f.Kind] = f.Scopes > 0
		}
	}
	if !kinds["clientCredentials"] || !kinds["authorizationCode"] {
		t.Errorf("tictactoe flows %v", kinds)
	}
	sw := loadCorpus(t, "swagger2-petstore.json")
	var list *Operation
	for i, o := range sw.Operations {
		if o.Method == "GET" && o.Path == "/pets" {
			list = &sw.Operations[i]
		}
	}
	if list == nil || !list.ListResponse {
		t.Fatalf("swagger 2.0 GET /pets returns an array: %+v", list)
	}
	if _, ok := list.HasParam(func(n string) bool { return n == "limit" }); !ok {
		t.Error("swagger 2.0 parameters survive the conversion")
	}
	if wh := loadCorpus(t, "webhook-example-v3.1.yaml"); !wh.Webhooks || wh.Paths != 0 {
		t.Errorf("webhook example: webhooks=%v paths=%d", wh.Webhooks, wh.Paths)
	}
	if cb := loadCorpus(t, "callback-example-v3.0.json"); !cb.Operations[0].Callbacks {
		t.Error("callback example: callbacks on the POST")
	}
	nos := loadCorpus(t, "non-oauth-scopes-v3.1.yaml")
	if len(nos.Operations[0].Scopes) == 0 {
		t.Error("non-oauth scopes named in the requirement are kept")
	}
	if xk := loadCorpus(t, "xkcd-v3.0.yaml"); xk.ExternalDocs == "" {
		t.Error("xkcd: externalDocs")
	}
	if q := loadCorpus(t, "flight-query-v3.2.yaml"); q.Operations[0].Method != "QUERY" || !q.Operations[0].IsRead() {
		t.Errorf("3.2 QUERY operation: %+v", q.Operations)
	}
}

func TestNotOpenAPI(t *testing.T) {
	for _, body := range []string{`{"error":"not found"}`, "Not found", `[1,2,3]`, "<html></html>"} {
		if _, err := Load([]byte(body), nil); err == nil {
			t.Errorf("%q loaded as OpenAPI", body)
		}
	}
	if _, err := Load([]byte("openapi: 3.0.0\ninfo: {title: x, version: '1'}\npaths:\n  /a:\n    get:\n      responses:\n        200: {description: ok}\n"), nil); err != nil {
		t.Errorf("YAML with integer response keys: %v", err)
	}
}

func FuzzLoad(f *testing.F) {
	files, _ := filepath.Glob("../../../../shared/corpus/openapi/*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	broken, _ := filepath.Glob("testdata/broken-refs/*")
	for _, p := range append(broken, "../../../testdata/sites/brokenrefs/openapi.yaml") {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("a: &a [*a, *a, *a]\nb: &b [*a, *a, *a]\nc: &c [*b, *b, *b]\nopenapi: 3.0.0\n"))
	base, _ := url.Parse("https://docs.example.com/api/openapi.json")
	f.Fuzz(func(t *testing.T, body []byte) {
		s, err := Load(body, nil)
		if err == nil && s.Version == "" {
			t.Fatal("loaded without a version")
		}
		if err != nil {
			msg := err.Error()
			if p := libraryText.FindString(msg); p != "" || !utf8.ValidString(msg) || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error %q is not plain words on one line (%q)", msg, p)
			}
		}
		if s, err = Load(body, base); err != nil {
			return
		}
		if len(s.Servers.Unusable) > MaxListed || len(s.Servers.URLs) > s.Servers.Declared {
			t.Fatalf("servers %+v", s.Servers)
		}
		for _, u := range s.Servers.URLs {
			p, err := url.Parse(u)
			if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || strings.ContainsAny(u, "{}") {
				t.Fatalf("server %q is not a requestable URL", u)
			}
		}
		for _, op := range s.Operations {
			for code, mts := range op.ErrorTypes {
				if len(mts) > MaxListed || (code != "default" && !strings.HasPrefix(code, "4")) {
					t.Fatalf("%s %s: error types %q: %v", op.Method, op.Path, code, mts)
				}
			}
		}
	})
}
