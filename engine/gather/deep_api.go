package gather

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/openapi"
	"github.com/agentready/agentready/engine/weburl"
)

// The deep scan's API probes use the OpenAPI description the free scan
// found: api.servers asks each declared server whether it answers (and lets
// a browser agent in), api.errors provokes the 4xx answers the description
// documents and keeps what came back. Only GET and OPTIONS are sent: never
// a write.

// Bounds of the API probes. Together they cost at most
// 2*APIMaxServers + APIMaxErrorOps = 11 requests, in one round after the
// description.
const (
	APIMaxServers  = 3 // servers tried (a GET and a preflight each)
	APIMaxErrorOps = 5 // operations requested to provoke a documented 4xx
	// apiMaxListed caps every list an artifact keeps for the report.
	apiMaxListed = 20
	// apiMaxCandidates caps the operations kept before choosing the ones tried.
	apiMaxCandidates = 50
	apiMaxRefHops    = 8
)

// APIPreflightOrigin is the Origin of the CORS preflight: a browser agent on
// a site of its own.
const APIPreflightOrigin = "https://agent.example"

// APINonexistent fills every path parameter of an operation requested to
// provoke a 404: no real resource is named so.
const APINonexistent = "agentready-nonexistent-0000"

// Why a request is expected to produce a documented 4xx.
const (
	APIExpectNoCredentials = "no-credentials"   // a secured operation requested without credentials (401/403)
	APIExpectMissing       = "missing-resource" // path parameters naming nothing (404, 400, 410, 422)
)

// APIServerTry is one declared server as the deep scan tried it.
type APIServerTry struct {
	URL       string
	Get       *fetch.Response // GET of the server's base URL
	Preflight *fetch.Response // OPTIONS with Origin and Access-Control-Request-Method: GET
}

// APIServersDoc is what api.servers judges; nil when no OpenAPI description was found.
type APIServersDoc struct {
	SpecURL   string
	Declared  int            // servers the description declares
	Tried     []APIServerTry // same-site servers, at most APIMaxServers
	CrossSite []string       // declared on another registrable domain: not contacted
	Unusable  []string       // declared but not requestable (template without default, not http(s))
	Beyond    int            // same-site servers past APIMaxServers, not tried
}

// APIErrorTry is one operation requested to provoke a documented 4xx.
type APIErrorTry struct {
	Path   string // as documented, e.g. /items/{id}
	URL    string
	Expect string   // APIExpectNoCredentials or APIExpectMissing
	Codes  []string // the 4xx codes the operation documents ("4XX" included)
	// Types are the documented media types by response key ("404", "4XX",
	// "default"); a key without content documents no body.
	Types map[string][]string
	Resp  *fetch.Response
	// JSONParses reports a JSON media type whose whole body is valid JSON.
	JSONParses bool
}

// APIErrorsDoc is what api.errors judges; nil when no OpenAPI description was found.
type APIErrorsDoc struct {
	SpecURL string
	// Base is the server the operations were requested on: the first
	// declared same-site server, else the description's implicit one.
	Base string
	// OffSite: the description declares servers, none of them requestable
	// on the site's domain, so nothing was tried.
	OffSite    bool
	Candidates int // GET operations whose documented 4xx a request can provoke
	Tries      []APIErrorTry
}

// Keys of the API probes' artifacts.
var (
	APIServers = NewKey[*APIServersDoc]("deep-api-servers")
	APIErrors  = NewKey[*APIErrorsDoc]("deep-api-errors")
	// apiDescription is the description re-read for what the model of
	// engine/openapi does not keep (every server, the media types of error
	// responses); both probes share one decoding.
	apiDescription = NewKey[*apiDesc]("deep-api-description")
)

var _ = deepGatherer(Define(apiDescription, "The OpenAPI description decoded again for its servers and documented GET errors (no request).", []AnyKey{Spec},
	func(c *Ctx) (*apiDesc, error) {
		doc := Get(c, Spec)
		if doc == nil || doc.Spec == nil || doc.Resp == nil {
			return nil, nil
		}
		tree, err := openapi.Decode(doc.Resp.Body)
		if err != nil {
			return nil, nil
		}
		d := apiPlan(tree, baseOf(doc.Resp))
		d.SpecURL = doc.Resp.FinalURL
		return d, nil
	}))

var _ = deepGatherer(Define(APIServers, "GET and a CORS preflight (OPTIONS) of up to three same-site servers the OpenAPI description declares.", []AnyKey{apiDescription},
	func(c *Ctx) (*APIServersDoc, error) {
		d := Get(c, apiDescription)
		if d == nil {
			return nil, nil
		}
		out := &APIServersDoc{SpecURL: d.SpecURL, Declared: d.Declared, Unusable: d.Unusable}
		var reqs []fetch.Request
		for _, s := range d.Servers {
			switch {
			case !weburl.SameSite(c.Site.Target, s):
				if len(out.CrossSite) < apiMaxListed {
					out.CrossSite = append(out.CrossSite, s)
				}
			case len(out.Tried) >= APIMaxServers:
				out.Beyond++
			default:
				out.Tried = append(out.Tried, APIServerTry{URL: s})
				reqs = append(reqs,
					fetch.Request{URL: s, Accept: "application/json,*/*;q=0.5", MaxBody: 64 << 10},
					// A browser sends preflights without following redirects.
					fetch.Request{Method: http.MethodOptions, URL: s, NoRedirect: true, MaxBody: 16 << 10,
						Header: map[string]string{"Origin": APIPreflightOrigin, "Access-Control-Request-Method": "GET"}})
			}
		}
		all := c.FetchAll(reqs)
		for i := range out.Tried {
			out.Tried[i].Get, out.Tried[i].Preflight = all[2*i], all[2*i+1]
		}
		return out, nil
	}))

var _ = deepGatherer(Define(APIErrors, "GET up to five operations of the OpenAPI description in a way that should produce a 4xx they document (a path parameter naming nothing, a secured operation without credentials).", []AnyKey{apiDescription},
	func(c *Ctx) (*APIErrorsDoc, error) {
		d := Get(c, apiDescription)
		if d == nil {
			return nil, nil
		}
		out := &APIErrorsDoc{SpecURL: d.SpecURL, Candidates: d.Candidates}
		for _, s := range d.Servers {
			if weburl.SameSite(c.Site.Target, s) {
				out.Base = s
				break
			}
		}
		if out.Base == "" {
			if d.Declared > 0 {
				out.OffSite = true
				return out, nil
			}
			if !weburl.SameSite(c.Site.Target, d.Implicit) {
				out.OffSite = true
				return out, nil
			}
			out.Base = d.Implicit
		}
		base := strings.TrimSuffix(out.Base, "/")
		var reqs []fetch.Request
		for _, op := range apiChoose(d.Ops, APIMaxErrorOps) {
			u := base + apiFill(op.Path)
			if _, err := url.Parse(u); err != nil || !weburl.SameSite(c.Site.Target, u) {
				continue
			}
			out.Tries = append(out.Tries, APIErrorTry{Path: op.Path, URL: u, Expect: op.Expect, Codes: op.Codes, Types: op.Types})
			reqs = append(reqs, fetch.Request{URL: u, Accept: "application/json,application/problem+json;q=0.9,*/*;q=0.5", MaxBody: 256 << 10})
		}
		for i, r := range c.FetchAll(reqs) {
			t := &out.Tries[i]
			t.Resp = r
			t.JSONParses = r.Err == nil && r.Complete() && APIIsJSON(r.ContentType()) && json.Valid(r.Body)
		}
		return out, nil
	}))

// APIIsJSON reports a JSON media type: application/json or a +json suffix.
func APIIsJSON(mediaType string) bool {
	mt := strings.ToLower(strings.TrimSpace(mediaType))
	return mt == "application/json" || strings.HasSuffix(mt, "+json") || mt == "text/json"
}

// apiDesc is what the deep API probes read from an OpenAPI description.
type apiDesc struct {
	SpecURL    string
	Declared   int      // servers the description declares (Swagger 2.0: a host)
	Servers    []string // declared servers that can be requested, resolved, deduplicated, in order
	Unusable   []string // declared servers that cannot be requested, ≤ apiMaxListed
	Implicit   string   // the base when none is declared ("/" resolved, or the 2.0 basePath)
	Candidates int      // GET operations whose documented 4xx a request can provoke
	Ops        []apiErrorOp
}

type apiErrorOp struct {
	Path   string
	Expect string
	Codes  []string
	Types  map[string][]string
}

var apiTemplateVar = regexp.MustCompile(`\{[^{}]*\}`)

// apiPlan reads servers and provokable GET errors from a decoded OpenAPI
// (3.x) or Swagger (2.0) document. doc is the description's URL, against
// which relative servers resolve; it may be nil.
func apiPlan(tree any, doc *url.URL) *apiDesc {
	d := &apiDesc{}
	root, _ := tree.(map[string]any)
	if root == nil {
		return d
	}
	if doc == nil {
		doc = &url.URL{}
	}
	swagger2 := strings.HasPrefix(apiStr(root["swagger"]), "2")
	seen := map[string]bool{}
	addServer := func(raw, resolved string) {
		if resolved == "" {
			if len(d.Unusable) < apiMaxListed {
				d.Unusable = append(d.Unusable, apiClip(raw))
			}
			return
		}
		if !seen[resolved] {
			seen[resolved] = true
			d.Servers = append(d.Servers, resolved)
		}
	}
	if swagger2 {
		basePath := apiStr(root["basePath"])
		if basePath != "" && !strings.HasPrefix(basePath, "/") {
			basePath = "/" + basePath
		}
		scheme := doc.Scheme
		if schemes, _ := root["schemes"].([]any); len(schemes) > 0 {
			scheme = apiStr(schemes[0])
			for _, s := range schemes {
				if apiStr(s) == "https" {
					scheme = "https"
				}
			}
		}
		if host := apiStr(root["host"]); host != "" {
			d.Declared = 1
			addServer(host, apiAbsolute(scheme+"://"+host+basePath, nil))
		}
		d.Implicit = apiAbsolute(scheme+"://"+doc.Host+basePath, nil)
	} else {
		servers, _ := root["servers"].([]any)
		d.Declared = len(servers)
		for _, s := range servers {
			so, _ := s.(map[string]any)
			raw := apiStr(so["url"])
			addServer(raw, apiAbsolute(apiSubstitute(raw, apiObj(so["variables"])), doc))
		}
		d.Implicit = apiAbsolute("/", doc)
	}
	d.Ops, d.Candidates = apiErrorOps(root, swagger2)
	return d
}

// apiSubstitute fills server variables with their defaults; a variable
// without one is left in place (and makes the URL unusable).
func apiSubstitute(raw string, vars map[string]any) string {
	return apiTemplateVar.ReplaceAllStringFunc(raw, func(m string) string {
		if def := apiStr(apiObj(vars[m[1:len(m)-1]])["default"]); def != "" {
			return def
		}
		return m
	})
}

// apiAbsolute resolves raw against base and keeps it only as an absolute
// http(s) URL with a host and no template left.
func apiAbsolute(raw string, base *url.URL) string {
	if raw == "" || strings.ContainsAny(raw, "{} \t\r\n") {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return ""
	}
	u.Fragment, u.RawQuery = "", ""
	return u.String()
}

// apiErrorOps lists, in path order, the GET operations whose documented 4xx
// a request can provoke without credentials or data: a secured operation
// documenting 401/403, or an open one with path parameters documenting a
// 404 (or 400, 410, 422). Other documented errors (429, 409…) cannot be
// provoked by a read and are left alone.
func apiErrorOps(root map[string]any, swagger2 bool) ([]apiErrorOp, int) {
	paths := apiObj(root["paths"])
	keys := make([]string, 0, len(paths))
	for k := range paths {
		if strings.HasPrefix(k, "/") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var ops []apiErrorOp
	n := 0
	for _, p := range keys {
		item := apiResolve(root, paths[p])
		get := apiResolve(root, item["get"])
		if get == nil {
			continue
		}
		codes, types := apiDocumented4xx(root, get, swagger2)
		if len(codes) == 0 {
			continue
		}
		has := func(want ...string) bool {
			for _, c := range codes {
				for _, w := range want {
					if strings.EqualFold(c, w) {
						return true
					}
				}
			}
			return false
		}
		expect := ""
		switch {
		case apiSecured(root, get):
			if has("401", "403", "4XX") {
				expect = APIExpectNoCredentials
			}
		case strings.Contains(p, "{") && has("404", "400", "410", "422", "4XX"):
			expect = APIExpectMissing
		}
		if expect == "" {
			continue
		}
		n++
		if len(ops) < apiMaxCandidates {
			ops = append(ops, apiErrorOp{Path: p, Expect: expect, Codes: codes, Types: types})
		}
	}
	return ops, n
}

// apiDocumented4xx returns an operation's documented 4xx codes and the
// media types of its 4xx and default responses.
func apiDocumented4xx(root, op map[string]any, swagger2 bool) ([]string, map[string][]string) {
	responses := apiObj(op["responses"])
	var codes []string
	types := map[string][]string{}
	for code, r := range responses {
		is4xx := len(code) == 3 && code[0] == '4' && (strings.EqualFold(code[1:], "XX") || apiDigits(code[1:]))
		if !is4xx && code != "default" {
			continue
		}
		if is4xx {
			code = strings.ToUpper(code)
			codes = append(codes, code)
		}
		resp := apiResolve(root, r)
		var mts []string
		if swagger2 {
			if resp["schema"] != nil {
				mts = apiMediaTypes(op["produces"])
				if len(mts) == 0 {
					mts = apiMediaTypes(root["produces"])
				}
			}
		} else {
			for mt := range apiObj(resp["content"]) {
				mts = append(mts, apiMediaType(mt))
			}
		}
		sort.Strings(mts)
		if len(mts) > apiMaxListed {
			mts = mts[:apiMaxListed]
		}
		types[code] = mts
	}
	sort.Strings(codes)
	return codes, types
}

// apiSecured reports an effective security requirement that anonymous
// callers cannot meet: a non-empty list without an empty alternative.
func apiSecured(root, op map[string]any) bool {
	sec, ok := op["security"]
	if !ok {
		sec = root["security"]
	}
	reqs, _ := sec.([]any)
	if len(reqs) == 0 {
		return false
	}
	for _, r := range reqs {
		if m, ok := r.(map[string]any); ok && len(m) == 0 {
			return false
		}
	}
	return true
}

// apiChoose picks up to n operations, one of each expectation first so a
// description with both kinds has both tried, then the rest in path order.
func apiChoose(ops []apiErrorOp, n int) []apiErrorOp {
	var out []apiErrorOp
	taken := map[int]bool{}
	kinds := map[string]bool{}
	for i, op := range ops {
		if len(out) < n && !kinds[op.Expect] {
			kinds[op.Expect], taken[i] = true, true
			out = append(out, op)
		}
	}
	for i, op := range ops {
		if len(out) < n && !taken[i] {
			out = append(out, op)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// apiFill replaces every path template with APINonexistent. Nested braces
// ({{id}}) leave a template after one pass; each pass removes two braces, so
// the loop ends.
func apiFill(path string) string {
	for apiTemplateVar.MatchString(path) {
		path = apiTemplateVar.ReplaceAllString(path, APINonexistent)
	}
	return path
}

// apiResolve follows local $refs (#/…) to an object, nil when it is not one.
func apiResolve(root map[string]any, v any) map[string]any {
	for hop := 0; hop < apiMaxRefHops; hop++ {
		m, _ := v.(map[string]any)
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		if !strings.HasPrefix(ref, "#/") {
			return nil
		}
		var cur any = root
		for _, tok := range strings.Split(ref[2:], "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			if t, err := url.PathUnescape(tok); err == nil {
				tok = t
			}
			cur = apiObj(cur)[tok]
		}
		v = cur
	}
	return nil
}

func apiMediaTypes(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, e := range list {
		if s := apiStr(e); s != "" {
			out = append(out, apiMediaType(s))
		}
		if len(out) >= apiMaxListed {
			break
		}
	}
	return out
}

// apiMediaType lower-cases a media type and drops its parameters.
func apiMediaType(s string) string {
	s, _, _ = strings.Cut(s, ";")
	return apiClip(strings.ToLower(strings.TrimSpace(s)))
}

func apiObj(v any) map[string]any { m, _ := v.(map[string]any); return m }

func apiStr(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int:
		return strconv.Itoa(x)
	}
	return ""
}

func apiDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// apiClip bounds a string the site wrote before it reaches a report.
func apiClip(s string) string {
	if len(s) > 200 {
		return strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}
