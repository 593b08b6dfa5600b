package gather

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/agentready/agentready/engine/clip"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/parse/openapi"
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
	// apiMaxReason caps, in characters, why a description does not load.
	apiMaxReason = 200
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
	SpecURL string
	// Unloadable says why the description found does not load ("" when it
	// loaded); nothing else is set then.
	Unloadable string
	Declared   int            // servers the description declares
	Tried      []APIServerTry // same-site servers, at most APIMaxServers
	CrossSite  []string       // declared on another registrable domain: not contacted
	Unusable   []string       // declared but not requestable (template without default, not http(s))
	Beyond     int            // same-site servers past APIMaxServers, not tried
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
	// Unloadable says why the description found does not load ("" when it
	// loaded); nothing else is set then.
	Unloadable string
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
)

var _ = deepGatherer(Define(APIServers, "GET and a CORS preflight (OPTIONS) of up to three same-site servers the OpenAPI description declares.", []AnyKey{Spec},
	func(c *Ctx) (*APIServersDoc, error) {
		d := apiPlan(Get(c, Spec))
		if d == nil {
			return nil, nil
		}
		if d.Unloadable != "" {
			return &APIServersDoc{SpecURL: d.SpecURL, Unloadable: d.Unloadable}, nil
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

var _ = deepGatherer(Define(APIErrors, "GET up to five operations of the OpenAPI description in a way that should produce a 4xx they document (a path parameter naming nothing, a secured operation without credentials).", []AnyKey{Spec},
	func(c *Ctx) (*APIErrorsDoc, error) {
		d := apiPlan(Get(c, Spec))
		if d == nil {
			return nil, nil
		}
		if d.Unloadable != "" {
			return &APIErrorsDoc{SpecURL: d.SpecURL, Unloadable: d.Unloadable}, nil
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

// apiDesc is what the deep API probes take from the OpenAPI description,
// as engine/parse/openapi read it (the one reader of descriptions: its servers,
// security and documented errors).
type apiDesc struct {
	SpecURL    string
	Unloadable string   // why the description found does not load; nothing below is set then
	Declared   int      // servers the description declares (Swagger 2.0: a host)
	Servers    []string // declared servers that can be requested, resolved, deduplicated, in order
	Unusable   []string // declared servers that cannot be requested, ≤ openapi.MaxListed
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

// apiPlan is what the probes try of the description the free scan loaded;
// nil when none was found, only Unloadable when the one found does not load.
func apiPlan(doc *OpenAPIDoc) *apiDesc {
	if doc != nil && doc.Spec == nil && doc.Err != nil && doc.Resp != nil {
		return &apiDesc{SpecURL: doc.Resp.FinalURL, Unloadable: clip.To(doc.Err.Error(), apiMaxReason)}
	}
	if doc == nil || doc.Spec == nil || doc.Resp == nil {
		return nil
	}
	sv := doc.Spec.Servers
	d := &apiDesc{SpecURL: doc.Resp.FinalURL, Declared: sv.Declared, Servers: sv.URLs, Unusable: sv.Unusable, Implicit: sv.Implicit}
	d.Ops, d.Candidates = apiErrorOps(doc.Spec)
	return d
}

// apiErrorOps lists, in path order, the GET operations whose documented 4xx
// a request can provoke without credentials or data: a secured operation
// documenting 401/403, or an open one (its security optional or none) with
// path parameters documenting a 404 (or 400, 410, 422). Other documented
// errors (429, 409…) cannot be provoked by a read and are left alone.
func apiErrorOps(spec *openapi.Spec) ([]apiErrorOp, int) {
	var ops []apiErrorOp
	n := 0
	for _, op := range spec.Operations {
		if op.Method != http.MethodGet || !strings.HasPrefix(op.Path, "/") {
			continue
		}
		codes := op.Documented4xx()
		has := func(want ...string) bool {
			for _, c := range codes {
				if slices.Contains(want, c) {
					return true
				}
			}
			return false
		}
		expect := ""
		switch {
		case op.Secured:
			if has("401", "403", "4XX") {
				expect = APIExpectNoCredentials
			}
		case strings.Contains(op.Path, "{") && has("404", "400", "410", "422", "4XX"):
			expect = APIExpectMissing
		}
		if expect == "" {
			continue
		}
		n++
		if len(ops) < apiMaxCandidates {
			ops = append(ops, apiErrorOp{Path: op.Path, Expect: expect, Codes: codes, Types: op.ErrorTypes})
		}
	}
	return ops, n
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

func apiDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}
