package openapi

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// A description whose references do not all resolve is still a
// description: every operation is read, each broken reference is a finding
// that says where it is and why, and only what it stood for is unknown.
func TestBrokenReferencesAreFindings(t *testing.T) {
	type broken struct{ at, ref, reason string }
	cases := []struct {
		file       string
		version    string
		operations int
		broken     []broken
		check      func(t *testing.T, s *Spec)
	}{
		{
			file: "../../../testdata/sites/brokenrefs/openapi.yaml", version: "3.1.0", operations: 10,
			// The streaming schema's eleven pointers meant the file it was
			// pasted from; the finding says where they do resolve.
			broken: []broken{
				{"#/components/schemas/MessageStreamEvent/$defs/ContentBlockDelta/properties/delta", "#/$defs/Delta", reasonUndefined},
				{"#/components/schemas/MessageStreamEvent/$defs/ContentBlockStart/properties/role", "#/$defs/Roles", reasonUndefined},
				{"#/components/schemas/MessageStreamEvent/$defs/MessageDelta/properties/stop_reason", "#/$defs/StopReason", reasonUndefined},
				{"#/components/schemas/MessageStreamEvent/$defs/MessageDelta/properties/usage", "#/$defs/Usage", reasonUndefined},
				{"#/components/schemas/MessageStreamEvent/oneOf/0", "#/$defs/MessageStart", reasonUndefined},
				{"#/components/schemas/MessageStreamEvent/oneOf/1", "#/$defs/ContentBlockStart", reasonUndefined},
				{"#/components/schemas/MessageStreamEvent/oneOf/2", "#/$defs/ContentBlockDelta", reasonUndefined},
				{"#/components/schemas/MessageStreamEvent/oneOf/3", "#/$defs/ContentBlockStop", reasonUndefined},
				{"#/components/schemas/MessageStreamEvent/oneOf/4", "#/$defs/MessageDelta", reasonUndefined},
				{"#/components/schemas/MessageStreamEvent/oneOf/5", "#/$defs/MessageStop", reasonUndefined},
				{"#/components/schemas/MessageStreamEvent/oneOf/6", "#/$defs/Ping", reasonUndefined},
			},
			check: func(t *testing.T, s *Spec) {
				// The `$id` schema's own #/$defs/… and the anchor resolved:
				// Message's fields are read through them.
				create := op(t, s, "POST", "/messages")
				for _, f := range []string{"id", "role", "content", "usage", "input_tokens", "output_tokens"} {
					if !slices.Contains(create.ResponseFields, f) {
						t.Errorf("POST /messages response fields %v lack %q", create.ResponseFields, f)
					}
				}
				list := op(t, s, "GET", "/models")
				if !list.ListResponse || len(list.Params) != 2 || !slices.Contains(list.Documented4xx(), "4XX") {
					t.Errorf("GET /models: %+v", list)
				}
				if rl := op(t, s, "GET", "/organizations/rate_limits"); !rl.Secured || !slices.Equal(rl.Scopes, []string{"admin:read"}) {
					t.Errorf("rate limits: %+v", rl)
				}
				if b := op(t, s, "POST", "/batches"); !b.AsyncLink || !b.IsWrite() {
					t.Errorf("POST /batches: %+v", b)
				}
				if len(s.Schemes) != 2 || s.ServerURL != "/v1" {
					t.Errorf("schemes %+v, server %q", s.Schemes, s.ServerURL)
				}
				if !strings.Contains(s.Unresolved[1].Reason, "write #/components/schemas/MessageStreamEvent/$defs/Roles") {
					t.Errorf("no hint where it resolves: %q", s.Unresolved[1].Reason)
				}
			},
		},
		{
			file: "testdata/broken-refs/petstore-split-swagger2.json", version: "2.0", operations: 4,
			broken: []broken{
				{"#/paths/~1pets/get/parameters/1", "#/parameters/limit", reasonUndefined},
				{"#/paths/~1pets/get/parameters/2", "parameters.yaml#/pageToken", reasonExternal},
				{"#/paths/~1pets/get/responses/200/schema/items", "definitions.yaml#/Pet", reasonExternal},
				{"#/paths/~1pets/post/parameters/0/schema", "definitions.yaml#/NewPet", reasonExternal},
				{"#/paths/~1pets~1{id}/get/responses/404", "#/responses/NotFound", reasonUndefined},
			},
			check: func(t *testing.T, s *Spec) {
				if get := op(t, s, "GET", "/pets"); len(get.Params) != 1 || get.Params[0].Name != "tags" {
					t.Errorf("GET /pets params %+v: the one that resolves, only", get.Params)
				}
				if add := op(t, s, "POST", "/pets"); !add.Secured || !slices.Contains(add.ResponseFields, "name") {
					t.Errorf("POST /pets: %+v", add)
				}
			},
		},
		{
			file: "testdata/broken-refs/renamed-components-v3.0.json", version: "3.0.3", operations: 4,
			broken: []broken{
				{"#/components/schemas/Ping", "#/components/schemas/Pong", reasonCycle},
				{"#/components/schemas/Pong", "#/components/schemas/Ping", reasonCycle},
				{"#/paths/~1orders/get/responses/default/content/application~1json/schema", "#/components/schemas/Eror", reasonUndefined},
				{"#/paths/~1orders/post/responses/422/content/application~1json/schema", "#/components/schemas/Eror", reasonUndefined},
				{"#/paths/~1orders~1{id}/get/responses/404", "#/components/responses/NotFound", reasonUndefined},
				{"#/paths/~1orders~1{id}~1lines/get/responses/410/content/application~1json/schema", "#/paths/~1orders/get", reasonLoader},
			},
			check: func(t *testing.T, s *Spec) {
				if l := op(t, s, "GET", "/orders/{id}/lines"); !slices.Equal(l.ResponseFields, []string{"qty", "sku"}) {
					t.Errorf("the escaped pointer Line~1Item: fields %v", l.ResponseFields)
				}
				if g := op(t, s, "GET", "/orders"); !g.ListResponse || !slices.Contains(g.Documented4xx(), "") && len(g.ErrorTypes["default"]) != 1 {
					t.Errorf("GET /orders: %+v", g)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			body, err := os.ReadFile(c.file)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Load(body, nil)
			if err != nil {
				t.Fatalf("not loaded: %v", err)
			}
			if s.Version != c.version || len(s.Operations) != c.operations {
				t.Errorf("version %q, %d operations; want %q, %d", s.Version, len(s.Operations), c.version, c.operations)
			}
			var got []broken
			for _, b := range s.Unresolved {
				reason, _, _ := strings.Cut(b.Reason, ";")
				got = append(got, broken{b.At, b.Ref, reason})
			}
			if !slices.Equal(got, c.broken) {
				t.Errorf("unresolved:\n got %v\nwant %v", got, c.broken)
			}
			if n := min(len(c.broken), MaxListed); len(s.Findings) < n || !strings.Contains(s.Findings[0], c.broken[0].ref) {
				t.Errorf("findings %q do not name the broken references", s.Findings)
			}
			if c.check != nil {
				c.check(t, s)
			}
		})
	}
}

func op(t *testing.T, s *Spec, method, path string) Operation {
	t.Helper()
	for _, o := range s.Operations {
		if o.Method == method && o.Path == path {
			return o
		}
	}
	t.Fatalf("no %s %s among %d operations", method, path, len(s.Operations))
	return Operation{}
}

// How one reference resolves, JSON Schema 2020-12's way within one
// document: `$id` starts a base, `$anchor` names a schema, pointers are
// RFC 6901 in a URI fragment.
func TestReferenceResolution(t *testing.T) {
	schemas := map[string]any{
		"a/b":  map[string]any{"type": "string"},
		"t~x":  map[string]any{"type": "string"},
		"S p":  map[string]any{"type": "string"},
		"Flag": true,
		"Tree": map[string]any{"type": "object", "properties": map[string]any{"kids": map[string]any{"type": "array", "items": map[string]any{"$ref": "#/components/schemas/Tree"}}}},
		"Res": map[string]any{"$id": "https://schemas.example.com/res.json", "$defs": map[string]any{
			"In": map[string]any{"$anchor": "inner", "type": "object"},
		}},
		"Rel": map[string]any{"$id": "rel/", "$defs": map[string]any{"X": map[string]any{"type": "object"}}},
		"Lst": map[string]any{"allOf": []any{map[string]any{"type": "object"}}},
		"Ex":  map[string]any{"type": "object", "example": map[string]any{"$id": "https://example.com/not-a-schema"}},
	}
	for _, c := range []struct{ ref, from, want string }{
		{"#/components/schemas/a~1b", "", ""},
		{"#/components/schemas/t~0x", "", ""},
		{"#/components/schemas/S%20p", "", ""},
		{"#/components/schemas/Tree", "", ""},
		{"#/components/schemas/Lst/allOf/0", "", ""},
		{"#/components/schemas/Lst/allOf/01", "", reasonUndefined},
		{"#/components/schemas/Lst/allOf/1", "", reasonUndefined},
		{"#/components/schemas/Lst/allOf/-1", "", reasonUndefined},
		{"#/components/schemas/a/b", "", reasonUndefined},
		{"#/components/schemas/Flag", "", reasonNotObject},
		{"#/info/title", "", reasonNotObject},
		{"#", "", ""},
		{"#components", "", reasonUndefined},
		{"#/components/%zz", "", reasonMalformed},
		{"other.json#/x", "", reasonExternal},
		{"https://example.com/not-a-schema", "", reasonExternal},
		{"https://schemas.example.com/res.json#/$defs/In", "", ""},
		{"https://schemas.example.com/res.json#inner", "", ""},
		{"https://schemas.example.com/res.json", "", ""},
		{"#inner", "", reasonUndefined},                                           // the anchor is Res's, not the document's
		{"#/$defs/In", "Res", ""},                                                 // from inside Res, # is Res
		{"#inner", "Res", ""},                                                     //
		{"https://api.example.com/rel/#/$defs/X", "", ""},                         // a relative $id, against the document's URL
		{"https://api.example.com/openapi.json#/components/schemas/Tree", "", ""}, // the document by its own URL
	} {
		holder := map[string]any{"$ref": c.ref}
		comps := map[string]any{}
		for k, v := range schemas {
			comps[k] = v
		}
		root := map[string]any{"openapi": "3.1.0", "info": map[string]any{"title": "t"}, "components": map[string]any{"schemas": comps}}
		if c.from == "" {
			comps["Holder"] = holder
		} else {
			res := clone2(schemas[c.from].(map[string]any))
			res["properties"] = map[string]any{"h": holder}
			comps[c.from] = res
		}
		base, _ := url.Parse("https://api.example.com/openapi.json")
		broken := repairRefs(root, base)
		got := ""
		if len(broken) > 0 {
			got, _, _ = strings.Cut(broken[0].Reason, ";")
		}
		if got != c.want {
			t.Errorf("%q from %q: %q, want %q", c.ref, c.from, got, c.want)
		}
		if c.want == "" && holder["$ref"] != nil && !strings.HasPrefix(holder["$ref"].(string), "#/") && holder["$ref"] != "#" {
			t.Errorf("%q was not rewritten into a root pointer: %v", c.ref, holder["$ref"])
		}
	}
}

func clone2(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// A reference quoted in a finding is cut by runes.
func TestBrokenReferenceCutByRunes(t *testing.T) {
	long := strings.Repeat("日本語", 100)
	s, err := Load([]byte(`{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"$ref":"#/components/schemas/`+long+`"}}}}}}}}}`), nil)
	if err != nil || len(s.Findings) != 1 {
		t.Fatalf("%v, %q", err, s.Findings)
	}
	if msg := s.Findings[0]; !utf8.ValidString(msg) || !strings.Contains(msg, "日本…") || utf8.RuneCountInString(msg) > 400 {
		t.Errorf("%q", msg)
	}
}

// FuzzReferenceGraph builds documents whose references form arbitrary
// graphs (chains, cycles, self-references, `$id` bases absolute and
// relative, anchors, `$defs`, escaped pointers, external and malformed
// references, references to the wrong kind of object) from the fuzzer's
// bytes. Whatever the graph, the document loads, every operation it
// declares is read, each broken reference is reported once with a known
// reason, and loading twice gives the same answer.
func FuzzReferenceGraph(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{9, 9, 9, 9, 9, 9})                     // self-references
	f.Add([]byte{1, 2, 1, 2, 1, 2, 17, 33, 49, 65, 81}) // ids and anchors
	f.Add([]byte("\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15"))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, ops, refs := refGraph(data)
		s, err := Load([]byte(doc), nil)
		if err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		if len(s.Operations) != ops {
			t.Fatalf("%d operations read of %d\n%s", len(s.Operations), ops, doc)
		}
		if len(s.Unresolved) > refs {
			t.Fatalf("%d unresolved of %d references", len(s.Unresolved), refs)
		}
		seen := map[string]bool{}
		for _, b := range s.Unresolved {
			if seen[b.At] {
				t.Fatalf("%s reported twice", b.At)
			}
			seen[b.At] = true
			reason, _, _ := strings.Cut(b.Reason, ";")
			switch reason {
			case reasonUndefined, reasonExternal, reasonCycle, reasonNotObject, reasonLoader, reasonMalformed:
			default:
				t.Fatalf("unknown reason %q", b.Reason)
			}
		}
		again, err := Load([]byte(doc), nil)
		if err != nil || !slices.Equal(again.Unresolved, s.Unresolved) {
			t.Fatalf("a second load differs: %v\n%v\n%v", err, again.Unresolved, s.Unresolved)
		}
	})
}

// refGraph writes an OpenAPI 3.1 document from data: eight schemas whose
// `$id`, `$anchor` and `$ref`s data chooses, referenced from two
// operations' responses, parameters and a path item. It returns the
// document, its operations and its $refs.
func refGraph(data []byte) (doc string, ops, refs int) {
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return int(b)
	}
	names := []string{"A", "b/c", "t~x", "S p", "E", "F", "G", "H"}
	esc := func(n string) string {
		return strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(n, "~", "~0"), "/", "~1"), " ", "%20")
	}
	target := func() string {
		i := next()
		n := names[i%len(names)]
		switch (i / len(names)) % 14 {
		case 0:
			return "#/components/schemas/" + esc(n)
		case 1:
			return "#/components/schemas/" + esc(n) + "/$defs/d"
		case 2:
			return "#/$defs/d" // from the document's root: only inside an $id
		case 3:
			return "#a" + strconv.Itoa(i%len(names)) // an anchor
		case 4:
			return "https://s.example.com/" + strconv.Itoa(i%len(names)) + "#/$defs/d"
		case 5:
			return "rel" + strconv.Itoa(i%len(names)) + "/#a" + strconv.Itoa(i%len(names))
		case 6:
			return "other.yaml#/components/schemas/" + esc(n)
		case 7:
			return "#/components/schemas/" + n // unescaped: the slash splits it
		case 8:
			return "#/paths/~1a/get" // an operation where a schema belongs
		case 9:
			return "#"
		case 10:
			return "#/info/title"
		case 11:
			return "#/components/%zz"
		case 12:
			return "#/components/parameters/P"
		default:
			return "#/components/schemas/" + esc(n) + "/properties/p"
		}
	}
	ref := func() string {
		refs++
		b, _ := json.Marshal(target())
		return `{"$ref":` + string(b) + `}`
	}
	var schemas []string
	for i, n := range names {
		flags := next()
		var members []string
		if flags&1 != 0 {
			members = append(members, `"$id":"https://s.example.com/`+strconv.Itoa(i)+`"`)
		} else if flags&2 != 0 {
			members = append(members, `"$id":"rel`+strconv.Itoa(i)+`/"`)
		}
		if flags&4 != 0 {
			members = append(members, `"$anchor":"a`+strconv.Itoa(i)+`"`)
		}
		if flags&8 != 0 {
			members = append(members, `"$ref":`+strconv.Quote(target()))
			refs++
		}
		members = append(members, `"properties":{"p":`+ref()+`}`, `"$defs":{"d":`+ref()+`}`)
		schemas = append(schemas, strconv.Quote(n)+`:{`+strings.Join(members, ",")+`}`)
	}
	doc = `{"openapi":"3.1.0","$self":"https://api.example.com/openapi.json","info":{"title":"g","version":"1"},` +
		`"paths":{"/a":{"get":{"parameters":[` + ref() + `,{"$ref":"#/components/parameters/P"}],"responses":{"200":{"description":"ok","content":{"application/json":{"schema":` + ref() + `}}},"404":` + ref() + `}},` +
		`"post":{"requestBody":{"content":{"application/json":{"schema":` + ref() + `}}},"responses":{"201":{"description":"ok"}}}}},` +
		`"components":{"parameters":{"P":{"name":"p","in":"query"}},"schemas":{` + strings.Join(schemas, ",") + `}}}`
	return doc, 2, refs + 1
}

// A $ref beside assertions in an OpenAPI 3.1 schema, in a cycle: read by
// kin-openapi as it is, this 300-byte document overflows the stack, a fatal
// error that stops the whole process. It loads, and the cycle is a
// recursive schema like any other.
func TestRefBesideAssertionsInACycle(t *testing.T) {
	doc := `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"$ref":"#/components/schemas/A"}}}}}}}},
"components":{"schemas":{"A":{"$ref":"#/components/schemas/B","properties":{"p":{"$ref":"#/components/schemas/A"}}},"B":{"properties":{"q":{"$ref":"#/components/schemas/A"}}}}}}`
	s, err := Load([]byte(doc), nil)
	if err != nil || len(s.Unresolved) != 0 {
		t.Fatalf("%v, %+v", err, s)
	}
	if a := op(t, s, "GET", "/a"); !slices.Equal(a.ResponseFields, []string{"p"}) {
		t.Errorf("response fields %v: A's own property", a.ResponseFields)
	}
}

// largeSpec is the brokenrefs site's description grown to about 1.1 MB
// (the hidden site's size): its paths and schemas copied under new names,
// each copy with the eleven broken references.
func largeSpec(b *testing.B) []byte {
	raw, err := os.ReadFile("../../../testdata/sites/brokenrefs/openapi.yaml")
	if err != nil {
		b.Fatal(err)
	}
	tree, err := Decode(raw)
	if err != nil {
		b.Fatal(err)
	}
	root := tree.(map[string]any)
	paths := root["paths"].(map[string]any)
	schemas := root["components"].(map[string]any)["schemas"].(map[string]any)
	basePaths, baseSchemas := clone2(paths), clone2(schemas)
	for i := 0; ; i++ {
		for p, v := range basePaths {
			paths[fmt.Sprintf("/v%d%s", i, p)] = v
		}
		for n, v := range baseSchemas {
			schemas[fmt.Sprintf("%s%d", n, i)] = v
		}
		if js, _ := json.Marshal(root); len(js) > 1100<<10 {
			return js
		}
	}
}

// Loading a 1.1 MB description with broken references, and the reference
// walk alone (go test ./engine/parse/openapi -run '^$' -bench Large -benchmem).
func BenchmarkLoadLargeWithBrokenRefs(b *testing.B) {
	js := largeSpec(b)
	b.SetBytes(int64(len(js)))
	for b.Loop() {
		if _, err := Load(js, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRepairRefsLarge(b *testing.B) {
	js := largeSpec(b)
	b.SetBytes(int64(len(js)))
	for b.Loop() {
		b.StopTimer()
		tree, _ := Decode(js)
		b.StartTimer()
		repairRefs(tree.(map[string]any), nil)
	}
}
