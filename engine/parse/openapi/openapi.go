package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"gopkg.in/yaml.v3"

	"github.com/agentready/agentready/engine/clip"
	"github.com/agentready/agentready/engine/internal/jsonerr"
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
	// Secured: anonymous callers cannot meet the effective security
	// requirement (the operation's, else the document's): it lists
	// requirements and none of them is empty. An empty one ({}) makes
	// authentication optional, so `security: [{}]` and `[{}, {key: []}]`
	// are not secured, and an operation's `security: []` lifts the
	// document's.
	Secured    bool     `json:"secured,omitempty"`
	Scopes     []string `json:"scopes,omitempty"` // scopes named in its effective requirements
	Extensions []string `json:"extensions,omitempty"`
	// ErrorTypes are the media types (lower case, without parameters, at
	// most MaxListed) of its documented 4xx and default responses, by
	// response key ("404", "4XX" upper-cased, "default"); a key with none
	// documents no body.
	ErrorTypes map[string][]string `json:"-"`
}

// Documented4xx lists the 4xx codes the operation documents ("4XX"
// included), sorted.
func (o Operation) Documented4xx() []string {
	var codes []string
	for k := range o.ErrorTypes {
		if k != "default" {
			codes = append(codes, k)
		}
	}
	sort.Strings(codes)
	return codes
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
	Version    string      `json:"version"` // "3.1.0", "2.0", …
	Title      string      `json:"title"`
	Operations []Operation `json:"-"`
	Paths      int         `json:"paths"`
	Webhooks   bool        `json:"webhooks"`
	Schemes    []Scheme    `json:"schemes,omitempty"`
	// ServerURL is the first declared server as written, resolved against
	// the description's URL ("" when none is declared).
	ServerURL    string   `json:"serverUrl,omitempty"`
	Servers      Servers  `json:"-"`
	ExternalDocs string   `json:"externalDocs,omitempty"`
	Findings     []string `json:"findings,omitempty"`
	// Unresolved are the $refs that do not resolve within the document;
	// each made only what it stands for unknown (see refs.go).
	Unresolved []BrokenRef `json:"unresolved,omitempty"`
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
	swagger := strings.HasPrefix(fmt.Sprint(root["swagger"]), "2")
	if !swagger && !strings.HasPrefix(fmt.Sprint(root["openapi"]), "3") {
		return nil, ErrNotOpenAPI
	}
	if _, err := json.Marshal(root); err != nil {
		return nil, errors.New("it holds a value JSON cannot represent (such as YAML's .inf or .nan)")
	}
	s := &Spec{Unresolved: repairRefs(root, base)}
	var doc *openapi3.T
	var err error
	switch {
	case swagger:
		doc, err = loadRetrying(root, &s.Unresolved, func(js []byte) (*openapi3.T, error) {
			var d2 openapi2.T
			if err := json.Unmarshal(js, &d2); err != nil {
				return nil, err
			}
			repairSwagger2(&d2)
			return openapi2conv.ToV3(&d2)
		})
		if err != nil {
			return nil, errors.New(describeLoad(err))
		}
		s.Version = "2.0"
	default:
		doc, err = loadRetrying(root, &s.Unresolved, load)
		if err != nil {
			// Tolerate what publishers commonly get wrong, and say so.
			if fixed, notes := sanitize(root); len(notes) > 0 {
				js2, _ := json.Marshal(fixed)
				if doc, err = load(js2); err == nil {
					s.Findings = append(s.Findings, notes...)
				}
			}
			if err != nil {
				return nil, errors.New(describeLoad(err))
			}
		}
		s.Version = fmt.Sprint(root["openapi"])
	}
	s.Findings = append(s.Findings, refFindings(s.Unresolved)...)
	build(s, doc, root, base)
	return s, nil
}

// loadRetrying loads root with read; when the reader refuses a reference
// that the walk resolved (kin-openapi cannot reach every member the JSON
// holds), that reference is marked unresolved and the document read again,
// a few times at most.
func loadRetrying(root map[string]any, broken *[]BrokenRef, read func([]byte) (*openapi3.T, error)) (*openapi3.T, error) {
	for tries := 0; ; tries++ {
		js, err := json.Marshal(root)
		if err != nil {
			return nil, err
		}
		doc, err := read(js)
		if err == nil || tries == maxLoaderRetries {
			return doc, err
		}
		var more []BrokenRef
		for _, m := range loadQuotedRef.FindAllStringSubmatch(err.Error(), -1) {
			more = append(more, breakLoaderRef(root, m[1])...)
		}
		if len(more) == 0 {
			return nil, err
		}
		*broken = append(*broken, more...)
	}
}

// maxLoaderRetries bounds loadRetrying: each try parses the whole document.
const maxLoaderRetries = 8

// repairSwagger2 gives each Swagger 2.0 operation without its own
// `produces` the document's, as Swagger 2.0 says it has: openapi2conv
// would otherwise assume application/json for its responses. A path whose
// item is null is dropped (openapi2conv cannot convert it).
func repairSwagger2(d2 *openapi2.T) {
	for p, item := range d2.Paths {
		if item == nil {
			delete(d2.Paths, p)
			continue
		}
		if len(d2.Produces) == 0 {
			continue
		}
		for _, op := range item.Operations() {
			if len(op.Produces) == 0 {
				op.Produces = d2.Produces
			}
		}
	}
}

func load(js []byte) (*openapi3.T, error) {
	l := openapi3.NewLoader()
	l.IsExternalRefsAllowed = false
	return l.LoadFromData(js)
}

// Decode parses JSON or YAML into a JSON-shaped tree: maps with string keys,
// so it marshals as JSON (YAML allows other keys; they are stringified).
// YAML reads both, leniently (a trailing comma in JSON passes); a body that
// YAML refuses but that starts like JSON is read as JSON, which allows what
// YAML does not (a key given twice: the last one counts), and when that
// fails too its error is JSON's, worded by jsonerr. A YAML error is worded
// by describeYAML: never the parser's own text.
func Decode(body []byte) (any, error) {
	var raw any
	yerr := yaml.Unmarshal(body, &raw)
	if yerr == nil {
		return normalize(raw, 0), nil
	}
	if looksJSON(body) {
		js := bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
		jerr := json.Unmarshal(js, &raw)
		if jerr == nil {
			return normalize(raw, 0), nil
		}
		return nil, errors.New("it is not valid JSON: " + jsonerr.Describe(js, jerr))
	}
	return nil, errors.New("it is neither JSON nor valid YAML: " + describeYAML(yerr))
}

// looksJSON reports a body whose first significant byte opens a JSON object
// or array.
func looksJSON(body []byte) bool {
	b := bytes.TrimLeft(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")), " \t\r\n")
	return len(b) > 0 && (b[0] == '{' || b[0] == '[')
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
	s.Servers = readServers(root, s.Version == "2.0", base)
	s.ServerURL = s.Servers.first
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
			if pr != nil && pr.Value != nil && pr.Value.Name != "" {
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
		o.ErrorTypes = errorTypes(op.Responses)
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
	o.Secured = len(reqs) > 0
	seen := map[string]bool{}
	for _, req := range reqs {
		if len(req) == 0 {
			o.Secured = false
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

// errorTypes reads the documented 4xx and default responses (their $refs
// resolved by the loader; a $ref cycle leaves a response without content).
func errorTypes(rs *openapi3.Responses) map[string][]string {
	out := map[string][]string{}
	for code, r := range rs.Map() {
		is4xx := len(code) == 3 && code[0] == '4' && (strings.EqualFold(code[1:], "XX") || isDigits(code[1:]))
		if !is4xx && code != "default" {
			continue
		}
		if is4xx {
			code = strings.ToUpper(code)
		}
		mts := out[code] // "4xx" and "4XX" are one key
		if r != nil && r.Value != nil {
			for mt := range r.Value.Content {
				mts = append(mts, mediaType(mt))
			}
		}
		out[code] = mts
	}
	if len(out) == 0 {
		return nil
	}
	for code, mts := range out {
		sort.Strings(mts)
		mts = slices.Compact(mts)
		out[code] = mts[:min(len(mts), MaxListed)]
	}
	return out
}

// mediaType lower-cases a media type and drops its parameters.
func mediaType(s string) string {
	s, _, _ = strings.Cut(s, ";")
	return clip.To(strings.ToLower(strings.TrimSpace(s)), 200)
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
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
