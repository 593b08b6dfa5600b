package edgetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/agentready/agentready/origin"
)

// Contract validates (request, response) pairs against the service's own
// /openapi.json with kin-openapi's response validation: the status must be
// documented for the operation, the Content-Type listed for that status, the
// body valid against its schema, and declared headers well-formed. Responses
// of paths the document does not describe (site pages) are not judged, except
// under /api/, where an unknown path must answer the Error envelope.
type Contract struct {
	doc    *openapi3.T
	router routers.Router

	mu   sync.Mutex
	seen map[string]int // "GET /api/scan 200" → responses validated
}

var (
	contractOnce sync.Once
	contract     *Contract
	contractErr  error
)

// LoadContract returns the contract of the embedded /openapi.json (parsed once
// per test binary).
func LoadContract(tb testing.TB) *Contract {
	tb.Helper()
	contractOnce.Do(func() {
		for _, ct := range []string{"text/event-stream", "image/svg+xml", "text/markdown"} {
			if openapi3filter.RegisteredBodyDecoder(ct) == nil {
				openapi3filter.RegisterBodyDecoder(ct, openapi3filter.PlainBodyDecoder)
			}
		}
		doc, err := openapi3.NewLoader().LoadFromData(origin.OpenAPIDocument)
		if err != nil {
			contractErr = err
			return
		}
		// Routes are matched on the path alone: tests run on loopback ports, not
		// on the servers the document names.
		doc.Servers = nil
		r, err := legacy.NewRouter(doc)
		if err != nil {
			contractErr = err
			return
		}
		contract = &Contract{doc: doc, router: r, seen: map[string]int{}}
	})
	if contractErr != nil {
		tb.Fatalf("loading /openapi.json for the contract: %v", contractErr)
	}
	return contract
}

// Client is an HTTP client whose every response is checked against the
// contract; violations fail tb. Bodies are read in full (bounded by the
// server), validated, and handed on unchanged.
func (c *Contract) Client(tb testing.TB) *http.Client {
	return &http.Client{Transport: &contractTransport{c: c, tb: tb, next: http.DefaultTransport}}
}

// Wrap is like Client for a round tripper of the caller's (one that adds a
// header, say).
func (c *Contract) Wrap(tb testing.TB, next http.RoundTripper) http.RoundTripper {
	return &contractTransport{c: c, tb: tb, next: next}
}

type contractTransport struct {
	c    *Contract
	tb   testing.TB
	next http.RoundTripper
}

func (t *contractTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	t.c.Check(t.tb, req, resp, body)
	return resp, nil
}

// Check validates one response; a violation is a test error naming the
// request line, the status and what the document says instead.
func (c *Contract) Check(tb testing.TB, req *http.Request, resp *http.Response, body []byte) {
	tb.Helper()
	if err := c.validate(req, resp, body); err != nil {
		msg := err.Error()
		if len(msg) > 600 {
			msg = msg[:600] + "…"
		}
		tb.Errorf("contract: %s %s → %d %q is not what /openapi.json documents: %s\nbody: %.300s",
			req.Method, req.URL.Path, resp.StatusCode, resp.Header.Get("Content-Type"), msg, body)
	}
}

func (c *Contract) validate(req *http.Request, resp *http.Response, body []byte) error {
	probe := req.Clone(context.Background())
	probe.Body = http.NoBody
	if probe.Method == http.MethodHead {
		probe.Method = http.MethodGet // the GET operation describes HEAD's status and headers
	}
	route, params, err := c.router.FindRoute(probe)
	if err != nil {
		var re *routers.RouteError
		if !asRouteError(err, &re) {
			return err
		}
		if re.Reason == routers.ErrMethodNotAllowed.Error() {
			route = c.operationWith(probe.URL.Path, resp.StatusCode)
			if route == nil {
				return fmt.Errorf("%s is not documented on %s, and no operation there documents the %d it answered", req.Method, req.URL.Path, resp.StatusCode)
			}
		} else if strings.HasPrefix(req.URL.Path, "/api/") {
			c.count(req.Method, "/api/* (unknown)", resp.StatusCode)
			return c.unknownAPIPath(resp, body)
		} else {
			return nil // a site page, not part of the API description
		}
	}
	c.count(req.Method, route.Path, resp.StatusCode)
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request:    probe,
			PathParams: params,
			Route:      route,
			Options:    &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		},
		Status: resp.StatusCode,
		Header: resp.Header,
		Body:   io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			MultiError:            true,
			ExcludeResponseBody:   req.Method == http.MethodHead,
		},
	}
	if resp.StatusCode == http.StatusNotModified {
		return c.documented(route, resp.StatusCode)
	}
	return openapi3filter.ValidateResponse(context.Background(), in)
}

func asRouteError(err error, re **routers.RouteError) bool {
	r, ok := err.(*routers.RouteError)
	if ok {
		*re = r
	}
	return ok
}

// documented checks what ValidateResponse skips (304): the status is listed.
func (c *Contract) documented(route *routers.Route, status int) error {
	if route.Operation.Responses.Status(status) == nil {
		return fmt.Errorf("status %d is not documented", status)
	}
	return nil
}

// operationWith finds an operation on path that documents status (a 405
// answered to a method the path does not have is described on the path's
// operations).
func (c *Contract) operationWith(path string, status int) *routers.Route {
	item := c.doc.Paths.Find(path)
	if item == nil {
		return nil
	}
	ops := item.Operations()
	methods := make([]string, 0, len(ops))
	for m := range ops {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	for _, m := range methods {
		if ops[m].Responses.Status(status) != nil {
			return &routers.Route{Spec: c.doc, Path: path, PathItem: item, Method: m, Operation: ops[m]}
		}
	}
	return nil
}

// unknownAPIPath: a path under /api/ the document does not list answers 404
// with the Error envelope.
func (c *Contract) unknownAPIPath(resp *http.Response, body []byte) error {
	if resp.StatusCode != http.StatusNotFound {
		return fmt.Errorf("an undocumented API path answered %d; document it or answer 404", resp.StatusCode)
	}
	ref := c.doc.Components.Schemas["Error"]
	if ref == nil {
		return fmt.Errorf("components.schemas.Error is missing")
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return fmt.Errorf("the 404 of an unknown API path is not JSON")
	}
	return ref.Value.VisitJSON(v, openapi3.EnableJSONSchema2020(), openapi3.VisitAsResponse())
}

func (c *Contract) count(method, path string, status int) {
	c.mu.Lock()
	c.seen[fmt.Sprintf("%s %s %d", method, path, status)]++
	c.mu.Unlock()
}

// Seen lists the "METHOD path status" triples validated so far, sorted.
func (c *Contract) Seen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.seen))
	for k := range c.seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// RequireSeen fails tb unless each "METHOD path status" was validated: proof
// that the table's responses really went through the contract.
func (c *Contract) RequireSeen(tb testing.TB, triples ...string) {
	tb.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range triples {
		if c.seen[k] == 0 {
			tb.Errorf("the contract never validated %s (validated: %d kinds of response)", k, len(c.seen))
		}
	}
}
