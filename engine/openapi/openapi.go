package openapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"gopkg.in/yaml.v3"
)

// MaxBytes is the largest document loaded.
const MaxBytes = 4 << 20

// Param is an operation or path-level parameter.
type Param struct {
	Name string `json:"name"`
	In   string `json:"in"`
}

// Operation is one method on one path.
type Operation struct {
	Method         string   `json:"method"`
	Path           string   `json:"path"`
	OperationID    string   `json:"operationId,omitempty"`
	Params         []Param  `json:"params,omitempty"`
	Responses      []string `json:"responses,omitempty"`
	RequestIsArray bool     `json:"requestIsArray,omitempty"`
	ListResponse   bool     `json:"listResponse,omitempty"`
	ResponseFields []string `json:"responseFields,omitempty"` // property names of 2xx JSON bodies, one level deep
	AsyncLink      bool     `json:"asyncLink,omitempty"`      // a 202 that says where to learn the outcome
	Callbacks      bool     `json:"callbacks,omitempty"`
	Secured        bool     `json:"secured,omitempty"` // effective security requirement is non-empty
	Scopes         []string `json:"scopes,omitempty"`  // scopes named in its effective requirements
	Extensions     []string `json:"extensions,omitempty"`
}

// IsWrite reports POST, PUT, PATCH or DELETE.
func (o Operation) IsWrite() bool {
	switch o.Method {
	case "POST", "PUT", "PATCH", "DELETE":
		return true
	}
	return false
}

// IsRead reports GET or the read-only QUERY method of OpenAPI 3.2.
func (o Operation) IsRead() bool { return o.Method == "GET" || o.Method == "QUERY" }

// HasParam reports a parameter (any location) with one of the names.
func (o Operation) HasParam(pred func(name string) bool) (string, bool) {
	for _, p := range o.Params {
		if pred(p.Name) {
			return p.Name, true
		}
	}
	return "", false
}

// Flow is an OAuth2 flow of a scheme.
type Flow struct {
	Kind   string `json:"kind"` // clientCredentials, authorizationCode, implicit, password, deviceAuthorization
	Scopes int    `json:"scopes"`
}

// Scheme is a security scheme.
type Scheme struct {
	Name   string `json:"name"`
	Type   string `json:"type"`             // apiKey, http, oauth2, openIdConnect, mutualTLS
	Scheme string `json:"scheme,omitempty"` // for http: bearer, basic
	Flows  []Flow `json:"flows,omitempty"`
}

// Spec is a loaded document.
type Spec struct {
	Version      string      `json:"version"` // "3.1.0", "2.0", …
	Title        string      `json:"title"`
	Operations   []Operation `json:"-"`
	Paths        int         `json:"paths"`
	Webhooks     bool        `json:"webhooks"`
	Schemes      []Scheme    `json:"schemes,omitempty"`
	ServerURL    string      `json:"serverUrl,omitempty"`
	ExternalDocs string      `json:"externalDocs,omitempty"`
	Findings     []string    `json:"findings,omitempty"`
}

// ErrNotOpenAPI means the document is JSON or YAML but not an OpenAPI/Swagger description.
var ErrNotOpenAPI = errors.New("not an OpenAPI or Swagger document")

// Load parses body. base resolves a relative server URL.
func Load(body []byte, base *url.URL) (*Spec, error) {
	if len(body) > MaxBytes {
		return nil, fmt.Errorf("document is larger than %d bytes", MaxBytes)
	}
	raw, err := Decode(body)
	if err != nil {
		return nil, err
	}
	return FromTree(raw, base)
}

// FromTree is Load for a document already decoded with Decode.
func FromTree(tree any, base *url.URL) (*Spec, error) {
	root, ok := tree.(map[string]any)
	if !ok {
		return nil, ErrNotOpenAPI
	}
	js, err := json.Marshal(root)
	if err != nil {
		return nil, err
	}
	s := &Spec{}
	var doc *openapi3.T
	switch {
	case strings.HasPrefix(fmt.Sprint(root["swagger"]), "2"):
		var d2 openapi2.T
		if err := json.Unmarshal(js, &d2); err != nil {
			return nil, fmt.Errorf("swagger 2.0 document does not load: %v", firstLine(err.Error()))
		}
		if doc, err = openapi2conv.ToV3(&d2); err != nil {
			return nil, fmt.Errorf("swagger 2.0 document does not convert: %v", firstLine(err.Error()))
		}
		s.Version = "2.0"
	case strings.HasPrefix(fmt.Sprint(root["openapi"]), "3"):
		doc, err = load(js)
		if err != nil {
			// Tolerate what publishers commonly get wrong, and say so.
			if fixed, notes := sanitize(root); len(notes) > 0 {
				js2, _ := json.Marshal(fixed)
				if doc, err = load(js2); err == nil {
					s.Findings = append(s.Findings, notes...)
				}
			}
			if err != nil {
				return nil, fmt.Errorf("OpenAPI document does not load: %v", firstLine(err.Error()))
			}
		}
		s.Version = fmt.Sprint(root["openapi"])
	default:
		return nil, ErrNotOpenAPI
	}
	build(s, doc, root, base)
	return s, nil
}

func load(js []byte) (*openapi3.T, error) {
	l := openapi3.NewLoader()
	l.IsExternalRefsAllowed = false
	return l.LoadFromData(js)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// Decode parses JSON or YAML into a JSON-shaped tree: maps with string keys,
// so it marshals as JSON (YAML allows other keys; they are stringified).
func Decode(body []byte) (any, error) {
	var raw any
	if err := yaml.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("neither JSON nor YAML: %v", firstLine(err.Error()))
	}
	return normalize(raw, 0), nil
}

// normalize turns YAML's map[any]any into map[string]any.
func normalize(v any, depth int) any {
	if depth > 200 {
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e, depth+1)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = normalize(e, depth+1)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = normalize(e, depth+1)
		}
		return x
	}
	return v
}

var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace", "query"}

// sanitize repairs operation-level `security` written as a map instead of an array.
func sanitize(root map[string]any) (map[string]any, []string) {
	var notes []string
	paths, _ := root["paths"].(map[string]any)
	for p, item := range paths {
		pi, _ := item.(map[string]any)
		for _, m := range methods {
			op, _ := pi[m].(map[string]any)
			if op == nil {
				continue
			}
			if sec, ok := op["security"].(map[string]any); ok {
				op["security"] = []any{sec}
				notes = append(notes, fmt.Sprintf("%s %s: `security` must be an array of requirement objects", strings.ToUpper(m), p))
			}
		}
	}
	if sec, ok := root["security"].(map[string]any); ok {
		root["security"] = []any{sec}
		notes = append(notes, "top-level `security` must be an array of requirement objects")
	}
	return root, notes
}

func build(s *Spec, doc *openapi3.T, root map[string]any, base *url.URL) {
	if doc.Info != nil {
		s.Title = doc.Info.Title
	}
	if doc.ExternalDocs != nil {
		s.ExternalDocs = doc.ExternalDocs.URL
	}
	if len(doc.Servers) > 0 {
		s.ServerURL = resolveServer(doc.Servers[0].URL, base)
	}
	if wh, ok := root["webhooks"].(map[string]any); ok && len(wh) > 0 {
		s.Webhooks = true
	}
	if _, ok := root["x-webhooks"]; ok {
		s.Webhooks = true
	}
	if doc.Components != nil {
		names := make([]string, 0, len(doc.Components.SecuritySchemes))
		for n := range doc.Components.SecuritySchemes {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			ref := doc.Components.SecuritySchemes[n]
			if ref == nil || ref.Value == nil {
				continue
			}
			v := ref.Value
			sc := Scheme{Name: n, Type: v.Type, Scheme: strings.ToLower(v.Scheme)}
			if f := v.Flows; f != nil {
				add := func(kind string, fl *openapi3.OAuthFlow) {
					if fl != nil {
						sc.Flows = append(sc.Flows, Flow{Kind: kind, Scopes: len(fl.Scopes)})
					}
				}
				add("implicit", f.Implicit)
				add("password", f.Password)
				add("clientCredentials", f.ClientCredentials)
				add("authorizationCode", f.AuthorizationCode)
			}
			s.Schemes = append(s.Schemes, sc)
		}
	}
	if doc.Paths != nil {
		keys := doc.Paths.InMatchingOrder()
		sort.Strings(keys)
		s.Paths = len(keys)
		for _, p := range keys {
			item := doc.Paths.Value(p)
			if item == nil {
				continue
			}
			ops := item.Operations()
			ms := make([]string, 0, len(ops))
			for m := range ops {
				ms = append(ms, m)
			}
			sort.Strings(ms)
			for _, m := range ms {
				s.Operations = append(s.Operations, operation(doc, p, strings.ToUpper(m), ops[m], item.Parameters))
			}
		}
	}
	// OpenAPI 3.2 QUERY operations, if kin-openapi's model did not carry them.
	have := map[string]bool{}
	for _, o := range s.Operations {
		have[o.Method+" "+o.Path] = true
	}
	if paths, ok := root["paths"].(map[string]any); ok {
		for p, item := range paths {
			if have["QUERY "+p] {
				continue
			}
			pi, _ := item.(map[string]any)
			if q, ok := pi["query"].(map[string]any); ok {
				op := Operation{Method: "QUERY", Path: p}
				op.OperationID, _ = q["operationId"].(string)
				s.Operations = append(s.Operations, op)
			}
		}
		sort.SliceStable(s.Operations, func(i, j int) bool {
			a, b := s.Operations[i], s.Operations[j]
			return a.Path < b.Path || a.Path == b.Path && a.Method < b.Method
		})
	}
}

func resolveServer(raw string, base *url.URL) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	return u.String()
}

// acceptsArray: the body schema is an array, or offers one as an
// alternative (oneOf/anyOf "one item or many", the usual way to declare a
// single-or-bulk write).
func acceptsArray(s *openapi3.Schema) bool {
	if s == nil {
		return false
	}
	if s.Type.Is("array") {
		return true
	}
	for _, alts := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf} {
		for _, a := range alts {
			if a != nil && a.Value != nil && a.Value.Type.Is("array") {
				return true
			}
		}
	}
	return false
}

func operation(doc *openapi3.T, path, method string, op *openapi3.Operation, shared openapi3.Parameters) Operation {
	o := Operation{Method: method, Path: path, OperationID: op.OperationID}
	for _, ps := range []openapi3.Parameters{shared, op.Parameters} {
		for _, pr := range ps {
			if pr != nil && pr.Value != nil {
				o.Params = append(o.Params, Param{Name: pr.Value.Name, In: pr.Value.In})
			}
		}
	}
	for k := range op.Extensions {
		o.Extensions = append(o.Extensions, k)
	}
	sort.Strings(o.Extensions)
	if rb := op.RequestBody; rb != nil && rb.Value != nil {
		for mt, media := range rb.Value.Content {
			if strings.Contains(mt, "json") && media != nil && media.Schema != nil && acceptsArray(media.Schema.Value) {
				o.RequestIsArray = true
			}
		}
	}
	o.Callbacks = len(op.Callbacks) > 0
	if op.Responses != nil {
		codes := make([]string, 0, op.Responses.Len())
		for code := range op.Responses.Map() {
			codes = append(codes, code)
		}
		sort.Strings(codes)
		o.Responses = codes
		fields := map[string]bool{}
		for _, code := range codes {
			r := op.Responses.Value(code)
			if r == nil || r.Value == nil {
				continue
			}
			if code == "202" && asyncLink(r.Value) {
				o.AsyncLink = true
			}
			if !strings.HasPrefix(code, "2") {
				continue
			}
			for mt, media := range r.Value.Content {
				if !strings.Contains(mt, "json") && mt != "*/*" || media == nil || media.Schema == nil || media.Schema.Value == nil {
					continue
				}
				sch := media.Schema.Value
				if sch.Type.Is("array") || isCollection(sch) {
					o.ListResponse = true
				}
				for name, prop := range sch.Properties {
					fields[name] = true
					if prop != nil && prop.Value != nil {
						for sub := range prop.Value.Properties {
							fields[sub] = true
						}
					}
				}
			}
		}
		for f := range fields {
			o.ResponseFields = append(o.ResponseFields, f)
		}
		sort.Strings(o.ResponseFields)
	}
	reqs := doc.Security
	if op.Security != nil {
		reqs = *op.Security
	}
	seen := map[string]bool{}
	for _, req := range reqs {
		if len(req) > 0 {
			o.Secured = true
		}
		for _, scopes := range req {
			for _, sc := range scopes {
				if !seen[sc] {
					seen[sc] = true
					o.Scopes = append(o.Scopes, sc)
				}
			}
		}
	}
	sort.Strings(o.Scopes)
	return o
}

var itemKeys = map[string]bool{"data": true, "items": true, "results": true, "records": true, "entries": true, "list": true,
	"values": true, "objects": true, "nodes": true, "edges": true, "hits": true, "elements": true, "rows": true}

// isCollection reports an object that wraps a list of items: an array under a
// conventional name (data, items, results…), or a small envelope (at most four
// members) around one array. A report that merely contains arrays is not a list.
func isCollection(sch *openapi3.Schema) bool {
	arrays := 0
	for name, prop := range sch.Properties {
		if prop == nil || prop.Value == nil || !prop.Value.Type.Is("array") {
			continue
		}
		if itemKeys[strings.ToLower(name)] {
			return true
		}
		arrays++
	}
	return arrays == 1 && len(sch.Properties) <= 4
}

func asyncLink(r *openapi3.Response) bool {
	for h := range r.Headers {
		switch strings.ToLower(h) {
		case "location", "content-location", "operation-location", "link":
			return true
		}
	}
	if len(r.Links) > 0 {
		return true
	}
	for _, media := range r.Content {
		if media == nil || media.Schema == nil || media.Schema.Value == nil {
			continue
		}
		for name := range media.Schema.Value.Properties {
			n := strings.ToLower(strings.ReplaceAll(name, "_", ""))
			if strings.Contains(n, "statusurl") || strings.Contains(n, "location") || n == "href" || n == "links" || n == "self" || strings.Contains(n, "pollurl") || n == "monitor" {
				return true
			}
		}
	}
	return false
}

// Declares402 reports a 402 response on any operation.
func (s *Spec) Declares402() bool {
	for _, o := range s.Operations {
		for _, c := range o.Responses {
			if c == "402" {
				return true
			}
		}
	}
	return false
}
