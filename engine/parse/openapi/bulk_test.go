package openapi

import (
	"net/url"
	"testing"
)

// A write that takes one item or many (oneOf/anyOf with an array) is bulk,
// like one whose body is an array; an object alone is not.
func TestRequestIsArray(t *testing.T) {
	doc := `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{
	 "/array":{"post":{"requestBody":{"content":{"application/json":{"schema":{"type":"array","items":{"type":"object"}}}}},"responses":{"200":{"description":"ok"}}}},
	 "/oneof":{"post":{"requestBody":{"content":{"application/json":{"schema":{"oneOf":[{"type":"object"},{"type":"array","items":{"type":"object"}}]}}}},"responses":{"200":{"description":"ok"}}}},
	 "/anyof":{"post":{"requestBody":{"content":{"application/json":{"schema":{"anyOf":[{"type":"object"},{"type":"array"}]}}}},"responses":{"200":{"description":"ok"}}}},
	 "/object":{"post":{"requestBody":{"content":{"application/json":{"schema":{"oneOf":[{"type":"object"},{"type":"string"}]}}}},"responses":{"200":{"description":"ok"}}}}}}`
	base, _ := url.Parse("https://api.example/openapi.json")
	spec, err := Load([]byte(doc), base)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"/array": true, "/oneof": true, "/anyof": true, "/object": false}
	for _, op := range spec.Operations {
		if w, ok := want[op.Path]; ok && op.RequestIsArray != w {
			t.Errorf("%s: RequestIsArray %v, want %v", op.Path, op.RequestIsArray, w)
		}
		delete(want, op.Path)
	}
	if len(want) != 0 {
		t.Errorf("operations not loaded: %v", want)
	}
}
