package origin_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/agentready/agentready/internal/testenv"
	"github.com/agentready/agentready/origin"
)

// The served description validates with an OpenAPI library and covers every
// endpoint of the interface spec.
func TestOpenAPIDocument(t *testing.T) {
	l := openapi3.NewLoader()
	doc, err := l.LoadFromData(origin.OpenAPIDocument)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("invalid OpenAPI: %v", err)
	}
	if doc.OpenAPI != "3.1.0" || doc.Info.Version != "1.0.0" {
		t.Errorf("openapi %s, version %s", doc.OpenAPI, doc.Info.Version)
	}
	if len(doc.Security) != 2 || len(doc.Security[0]) != 0 || doc.Security[1]["apiKey"] == nil {
		t.Errorf("declared security must be: none, or X-API-Key: %v", doc.Security)
	}
	if k := doc.Components.SecuritySchemes["apiKey"].Value; k.In != "header" || k.Name != "X-API-Key" {
		t.Errorf("apiKey scheme %+v", k)
	}
	if path, ok := testenv.OptionalShared(t, "reference/service-spec.md"); ok {
		spec, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		row := regexp.MustCompile("(?m)^\\| (GET|POST|DELETE) \\| (/[^ ]+) \\|")
		n := 0
		for _, m := range row.FindAllStringSubmatch(string(spec), -1) {
			n++
			item := doc.Paths.Value(m[2])
			if item == nil || item.GetOperation(m[1]) == nil {
				t.Errorf("%s %s is in the interface spec but not in /openapi.json", m[1], m[2])
			}
		}
		if n != 16 {
			t.Fatalf("read %d endpoints from the spec, want 16", n)
		}
	}
	scan := doc.Paths.Value("/api/scan").Get
	if scan.Responses.Value("200").Value.Content.Get("text/event-stream") == nil || !strings.Contains(*scan.Responses.Value("200").Value.Description, "scan.completed") {
		t.Error("the SSE events are not described")
	}
	for _, h := range []string{"X-RateLimit-Limit", "RateLimit-Policy"} {
		if scan.Responses.Value("200").Value.Headers[h] == nil {
			t.Errorf("rate-limit header %s not declared", h)
		}
	}
}
