package checks

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/parse/openapi"
)

const noSpec = "No OpenAPI document was found, so there is no API description to grade."

func init() {
	register(Definition{ID: "2.1", Level: 2, Name: "API Read Operations", Effort: Medium, LooksFor: "The parsed OpenAPI document.",
		Rule: "pass: at least one GET (or OpenAPI 3.2 QUERY) operation. fail: none. na: no OpenAPI document.",
		Fix:  "Describe the read operations (GET) agents can call."}, needs(gather.Spec), readOps)
	register(Definition{ID: "2.2", Level: 2, Name: "API Write Operations", Effort: Large, LooksFor: "The parsed OpenAPI document.",
		Rule: "pass: at least one POST, PUT, PATCH or DELETE operation. fail: none. na: no OpenAPI document.",
		Fix:  "Expose write operations (POST/PUT/PATCH/DELETE) so agents can act, not only read."}, needs(gather.Spec), writeOps)
	register(Definition{ID: "2.3", Level: 2, Name: "API Primary Action", Effort: Large, LooksFor: "Operation paths (last segment, or a `:verb` suffix) and operationIds.",
		Rule: "pass: at least one action-shaped operation (a non-CRUD verb such as send, checkout, scan, approve, cancel, refund, convert). partial: only CRUD writes. fail: a read-only API. na: no OpenAPI document.",
		Fix:  "Expose the action your product exists for as an intent endpoint, e.g. `POST /orders/{id}/cancel` or `POST /messages/send`, not only CRUD."}, needs(gather.Spec), primaryAction)
	register(Definition{ID: "2.4", Level: 2, Name: "API Key Authentication", Effort: Large, LooksFor: "components.securitySchemes (securityDefinitions in Swagger 2.0).",
		Rule: "pass: a non-interactive credential (apiKey, http bearer/basic, mutualTLS, or an OAuth2 clientCredentials flow). partial: only interactive OAuth2/OpenID Connect flows. fail: write operations with no security scheme at all. na: a public read-only API without security, or no OpenAPI document.",
		Fix:  "Offer a credential an agent can use without a browser: an API key header or OAuth2 client credentials, declared in securitySchemes."}, needs(gather.Spec), apiKeyAuth)
	register(Definition{ID: "2.5", Level: 2, Name: "Scoped API Keys", Effort: Large, LooksFor: "OAuth2 flow scopes and scopes named in security requirements.",
		Rule: "pass: OAuth2 flows declare scopes, or operations require named scopes. fail: security schemes exist but nothing is scoped. na: no security schemes, or no OpenAPI document.",
		Fix:  "Declare scopes (e.g. `orders:read`, `orders:write`) and require them per operation so agents can be given least privilege."}, needs(gather.Spec), scopedKeys)
	register(Definition{ID: "2.6", Level: 2, Name: "OpenID Configuration", Effort: Medium, LooksFor: "/.well-known/openid-configuration and /.well-known/oauth-authorization-server (RFC 8414).",
		Rule: "pass: a document whose issuer matches the origin and that has a token_endpoint. partial: present but invalid (issuer mismatch, missing fields, not JSON). fail: the OpenAPI document declares OAuth2/OpenID Connect but no discovery document exists. na: neither document and no OAuth in the OpenAPI document.",
		Fix:  "Publish /.well-known/oauth-authorization-server with `issuer` equal to your origin and `token_endpoint`."}, needs(gather.OpenIDConfig, gather.OAuthServer, gather.Spec), openIDConfig)
	register(Definition{ID: "2.7", Level: 2, Name: "Structured Error Responses", Effort: Large, LooksFor: "One request for a random nonexistent path under the API base (the OpenAPI server URL, else /api/) with Accept: application/json.",
		Rule: "pass: 4xx with a JSON body (application/json, application/problem+json) carrying error, code, message, title or detail. partial: a JSON error with status 200 or 5xx, or JSON without recognisable fields. fail: HTML or plain text although JSON was asked for, on a site with an API (OpenAPI document or catalog). na: no API and the answer is not JSON.",
		Fix:  "Answer API errors with a 4xx status and `application/problem+json` (RFC 9457): `{\"type\":…, \"title\":…, \"status\":404, \"detail\":…}`."}, needs(gather.ErrorProbe, gather.Spec, gather.Catalog), structuredErrors)
	register(Definition{ID: "2.8", Level: 2, Name: "Async Operations", Effort: Large, LooksFor: "202 responses, callbacks and webhooks in the OpenAPI document.",
		Rule: "pass: a 202 response with a status or Location link, callbacks, or top-level webhooks. partial: 202 responses with no way to learn the outcome. na: nothing long-running is declared, or no OpenAPI document.",
		Fix:  "For long-running work, answer 202 with a `Location` header to a status resource, or declare `callbacks`/`webhooks`."}, needs(gather.Spec), asyncOps)
	register(Definition{ID: "2.9", Level: 2, Name: "Idempotency Support", Effort: Large, LooksFor: "Header parameters of POST and PATCH operations.",
		Rule: "pass: an Idempotency-Key header parameter on at least one POST/PATCH. fail: POST/PATCH operations exist and none accepts it. na: no POST/PATCH, or no OpenAPI document.",
		Fix:  "Accept an `Idempotency-Key` header on POST/PATCH so agents can retry safely, and declare it in the OpenAPI document."}, needs(gather.Spec), idempotency)
	register(Definition{ID: "2.10", Level: 2, Name: "OAuth Protected Resource", Effort: Medium, LooksFor: "/.well-known/oauth-protected-resource (RFC 9728).",
		Rule: "pass: `resource` names this origin (or a path on it) and `authorization_servers` is a non-empty array. partial: present with missing or wrong members. fail: absent while the API uses bearer or OAuth2 authentication. na: absent and no such authentication.",
		Fix:  "Publish /.well-known/oauth-protected-resource: `{\"resource\":\"https://your.site\",\"authorization_servers\":[\"https://your.site\"],\"bearer_methods_supported\":[\"header\"]}`."}, needs(gather.ProtectedResource, gather.Spec), protectedResource)
	register(Definition{ID: "2.11", Level: 2, Name: "x402 Payments", Effort: Large, LooksFor: "Every 402 response seen during the scan, 402 responses declared in the OpenAPI document, and /.well-known/x402.",
		Rule: "pass: a 402 (or /.well-known/x402) carrying valid x402 requirements: a v2 PAYMENT-REQUIRED header, or a v1 body with x402Version and accepts[] entries with scheme, network, amount, asset, payTo. partial: a 402 without a valid x402 structure, or an OpenAPI document that declares 402 without it. na: no 402 anywhere.",
		Fix:  "When payment is required, answer 402 with x402 requirements: a base64 `PAYMENT-REQUIRED` header (v2) and a v1 JSON body with `x402Version` and `accepts[]`."}, needs(gather.Payments, gather.X402, gather.Spec), x402)
}

func readOps(in gather.Source) Outcome {
	spec := gather.Get(in, gather.Spec)
	if spec.Spec == nil {
		return na(noSpec)
	}
	n := 0
	for _, o := range spec.Spec.Operations {
		if o.IsRead() {
			n++
		}
	}
	if n > 0 {
		return pass(fmt.Sprintf("The API declares %s.", plural(n, "read operation", "read operations")), map[string]int{"read": n}, at(spec.Resp))
	}
	return fail("The API declares no GET operations.", "", nil)
}

func writeOps(in gather.Source) Outcome {
	spec := gather.Get(in, gather.Spec)
	if spec.Spec == nil {
		return na(noSpec)
	}
	by := map[string]int{}
	for _, o := range spec.Spec.Operations {
		if o.IsWrite() {
			by[o.Method]++
		}
	}
	if len(by) > 0 {
		return pass(fmt.Sprintf("The API declares write operations (%s).", joinCounts(by)), by, at(spec.Resp))
	}
	return fail("The API is read-only: no POST, PUT, PATCH or DELETE operations.", "", nil)
}

func joinCounts(m map[string]int) string {
	var parts []string
	for _, k := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", m[k], k))
		}
	}
	return strings.Join(parts, ", ")
}

var actionVerbs = map[string]bool{}

func init() {
	for _, v := range strings.Fields(`send checkout scan approve cancel refund convert pay charge capture publish unpublish submit execute run
		trigger process generate analyze analyse validate verify import export sync archive unarchive restore book reserve purchase order
		subscribe unsubscribe translate summarize summarise transcribe deploy invite assign unassign merge close reopen resend retry reset confirm
		reject decline accept transfer schedule reschedule render compile build start stop pause resume activate deactivate enable disable
		lock unlock share notify upload rotate revoke redeem checkin login logout void settle dispatch ship fulfill fulfil rate review classify
		extract predict complete embed estimate quote calculate sign clone fork duplicate move rename upgrade downgrade renew refresh approve`) {
		actionVerbs[v] = true
	}
}

var camel = regexp.MustCompile(`[A-Z]?[a-z]+|[A-Z]+(?:[A-Z][a-z]|$)|[0-9]+`)

func words(s string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == ' ' || r == ':' }) {
		for _, w := range camel.FindAllString(part, -1) {
			out = append(out, strings.ToLower(w))
		}
	}
	return out
}

// ActionVerb returns the action verb a route path is shaped around (its last
// non-parameter segment, or a `:verb` suffix), or "" for CRUD-shaped paths.
func ActionVerb(path string) string {
	return actionOf(openapi.Operation{Path: path})
}

// actionOf returns the action verb an operation is shaped around, if any.
func actionOf(o openapi.Operation) string {
	segs := strings.Split(strings.Trim(o.Path, "/"), "/")
	last := ""
	for i := len(segs) - 1; i >= 0; i-- {
		if !strings.HasPrefix(segs[i], "{") && !strings.HasPrefix(segs[i], ":") && !strings.HasPrefix(segs[i], "<") {
			last = segs[i]
			break
		}
	}
	if _, verb, ok := strings.Cut(last, ":"); ok {
		last = verb
	}
	if ws := words(last); len(ws) > 0 && actionVerbs[ws[0]] {
		return ws[0]
	}
	if ws := words(o.OperationID); len(ws) > 0 && actionVerbs[ws[0]] {
		return ws[0]
	}
	return ""
}

func primaryAction(in gather.Source) Outcome {
	spec := gather.Get(in, gather.Spec)
	if spec.Spec == nil {
		return na(noSpec)
	}
	// Actions that write come first, in the message and the details: a
	// read whose path starts with a word that can be a verb ("GET
	// /admin/rate-limit") is a poor example of an action.
	var actions, readActions []string
	writes := 0
	for _, o := range spec.Spec.Operations {
		switch {
		case actionOf(o) == "":
		case o.IsWrite():
			actions = append(actions, o.Method+" "+o.Path)
		default:
			readActions = append(readActions, o.Method+" "+o.Path)
		}
		if o.IsWrite() {
			writes++
		}
	}
	actions = first(append(actions, readActions...), 10)
	switch {
	case len(actions) > 0:
		return pass(fmt.Sprintf("The API exposes action-shaped operations such as %s.", actions[0]), map[string]any{"actions": actions}, at(spec.Resp))
	case writes > 0:
		return partial("The API offers only CRUD writes; no operation is named for the action it performs.", "", map[string]int{"writes": writes}, at(spec.Resp))
	}
	return fail("The API is read-only, so agents cannot perform its primary action.", "", nil)
}

var errorFields = []string{"error", "code", "message", "title", "detail", "errors", "error_description"}

func structuredErrors(in gather.Source) Outcome {
	probe := gather.Get(in, gather.ErrorProbe)
	r := probe.Resp
	hasAPI := hasAPI(in)
	if r == nil || r.Err != nil {
		if hasAPI {
			return fail("The API base did not answer a request for a nonexistent path ("+absence(r)+").", "", nil)
		}
		return na("The site has no API and the error probe got no answer.")
	}
	ct := r.ContentType()
	det := map[string]any{"url": r.RequestURL, "status": r.Status, "contentType": ct}
	obj := probe.Object
	if !probe.JSON {
		if hasAPI {
			return fail(fmt.Sprintf("Asked for JSON, a missing API path answered %d with %s.", r.Status, orUnknown(ct)), "", det)
		}
		return na("The site has no API (no OpenAPI document or catalog), and its error pages are not JSON.")
	}
	var keys []string
	for _, f := range errorFields {
		for k := range obj {
			if strings.EqualFold(k, f) {
				keys = append(keys, k)
			}
		}
	}
	det["fields"] = keys
	switch {
	case r.Status >= 400 && r.Status < 500 && len(keys) > 0:
		return pass(fmt.Sprintf("Missing API paths answer %d with a structured JSON error (%s).", r.Status, strings.Join(keys, ", ")), det, at(r))
	case len(keys) == 0:
		return partial(fmt.Sprintf("Missing API paths answer %d with JSON, but without error/code/message/title/detail fields.", r.Status), "", det, at(r))
	}
	return partial(fmt.Sprintf("A structured JSON error came back with status %d instead of a 4xx.", r.Status), "Send the JSON error with the matching 4xx status code.", det, at(r))
}

func orUnknown(s string) string {
	if s == "" {
		return "no Content-Type"
	}
	return s
}

func asyncOps(in gather.Source) Outcome {
	spec := gather.Get(in, gather.Spec)
	s := spec.Spec
	if s == nil {
		return na(noSpec)
	}
	var linked, bare []string
	for _, o := range s.Operations {
		if o.Callbacks {
			linked = append(linked, o.Method+" "+o.Path+" (callbacks)")
		}
		for _, c := range o.Responses {
			if c == "202" {
				if o.AsyncLink {
					linked = append(linked, o.Method+" "+o.Path+" (202 with status link)")
				} else {
					bare = append(bare, o.Method+" "+o.Path)
				}
			}
		}
	}
	if s.Webhooks {
		linked = append(linked, "top-level webhooks")
	}
	switch {
	case len(linked) > 0:
		return pass("Long-running work reports its outcome: "+strings.Join(first(linked, 3), ", ")+".", map[string]any{"async": first(linked, 10)}, at(spec.Resp))
	case len(bare) > 0:
		return partial("Operations answer 202 but give no way to learn the outcome: "+strings.Join(first(bare, 3), ", ")+".", "Add a `Location` header (or status link) to 202 responses, or declare callbacks/webhooks.", map[string]any{"bare202": first(bare, 10)}, at(spec.Resp))
	}
	return na("The API declares no long-running operations (no 202, callbacks or webhooks).")
}

func idempotency(in gather.Source) Outcome {
	spec := gather.Get(in, gather.Spec)
	s := spec.Spec
	if s == nil {
		return na(noSpec)
	}
	var with, without []string
	for _, o := range s.Operations {
		if o.Method != "POST" && o.Method != "PATCH" {
			continue
		}
		ok := false
		for _, p := range o.Params {
			if p.In == "header" && strings.EqualFold(p.Name, "Idempotency-Key") {
				ok = true
			}
		}
		if ok {
			with = append(with, o.Method+" "+o.Path)
		} else {
			without = append(without, o.Method+" "+o.Path)
		}
	}
	det := map[string]any{"with": first(with, 10), "without": first(without, 10)}
	switch {
	case len(with) > 0:
		return pass(fmt.Sprintf("%d of %d POST/PATCH operations accept an Idempotency-Key header.", len(with), len(with)+len(without)), det, at(spec.Resp))
	case len(without) > 0:
		return fail(fmt.Sprintf("No POST or PATCH operation accepts an Idempotency-Key header (%d checked).", len(without)), "", det)
	}
	return na("The API has no POST or PATCH operations.")
}
