package checks

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/parse/openapi"
)

func init() {
	register(Definition{ID: "3.1", Level: 3, Name: "Sparse Fields", Effort: Large, LooksFor: "Query parameter names of list operations (GETs returning an array or a collection object).",
		Rule: "pass: a fields, select, fieldset or fields[…] parameter on a list operation. fail: list operations exist without one. na: no list operations, or no OpenAPI document.",
		Fix:  "Let agents ask for only the fields they need: `GET /items?fields=id,name`."}, needs(gather.Spec), sparseFields)
	register(Definition{ID: "3.2", Level: 3, Name: "Cursor Pagination", Effort: Large, LooksFor: "Parameter names and response fields of list operations.",
		Rule: "pass: cursor parameters (cursor, page_token/pageToken, next_token, after, starting_after) or response fields (next_cursor, nextPageToken). partial: only offset/limit or page numbers. fail: list operations without any pagination. na: no list operations, or no OpenAPI document.",
		Fix:  "Paginate lists with an opaque cursor: `GET /items?cursor=…` returning `next_cursor`."}, needs(gather.Spec), cursorPagination)
	register(Definition{ID: "3.3", Level: 3, Name: "Search & Filtering", Effort: Large, LooksFor: "Parameter names of list operations, and search operations.",
		Rule: "pass: q, query, search, filter or filter[…] parameters on a list operation, or a search operation. fail: list operations without. na: no list operations, or no OpenAPI document.",
		Fix:  "Let agents narrow results server-side: `GET /items?q=…&filter[status]=open`."}, needs(gather.Spec), searchFiltering)
	register(Definition{ID: "3.4", Level: 3, Name: "Bulk Operations", Effort: Large, LooksFor: "Paths with a bulk or batch segment, and write operations whose request body is an array.",
		Rule: "pass: a bulk/batch path or a write operation taking an array of items. fail: write operations exist, none bulk. na: no write operations, or no OpenAPI document.",
		Fix:  "Offer `POST /items/batch` taking an array, so agents make one call instead of hundreds."}, needs(gather.Spec), bulkOps)
	register(Definition{ID: "3.5", Level: 3, Name: "Rate Limit Headers", Effort: Large, LooksFor: "Headers of the responses already fetched, API responses first, the homepage too.",
		Rule: "pass: a complete family on some response: X-RateLimit-Limit + -Remaining + -Reset, or RateLimit-Limit + -Remaining + -Reset, or RateLimit + RateLimit-Policy. partial: an incomplete family, or Retry-After alone. fail: none, on a site with an API. na: no API (no OpenAPI document, catalog or JSON answers) and no rate-limit header anywhere.",
		Fix:  "Tell agents their budget on every API response: `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (or the X-RateLimit-* trio)."}, needs(gather.Responses, gather.Home, gather.ErrorProbe, gather.Spec, gather.Catalog), rateLimitHeaders)
	register(Definition{ID: "3.6", Level: 3, Name: "Caching Headers", Effort: Medium, LooksFor: "The homepage response, plus one conditional re-request (If-None-Match / If-Modified-Since).",
		Rule: "pass: a validator (ETag or Last-Modified) and Cache-Control, and the conditional request gets 304. partial: some of these. fail: none.",
		Fix:  "Send `Cache-Control` and an `ETag` on pages, and answer `If-None-Match` with 304 Not Modified."}, needs(gather.Home, gather.Revalidated), cachingHeaders)
	register(Definition{ID: "3.7", Level: 3, Name: "MCP Tool Quality", Effort: Medium, LooksFor: "Tools from the MCP server card, or a live tools/list on the endpoint found in 1.12.",
		Rule: "A tool is well described when its name follows MCP naming rules, its description has at least 20 characters and says more than the name, and its inputSchema is an object schema whose properties carry types and descriptions. pass: ≥ 80% well described. partial: ≥ 40%. fail: below, or an MCP server that lists no tools. na: no MCP server.",
		Fix:  "Give every MCP tool a description that says when to use it, and an inputSchema whose properties all have a type and a description."}, needs(gather.MCPCard), mcpToolQuality)
}

// listOps are GET operations returning an array or a collection object.
func listOps(s *openapi.Spec) []openapi.Operation {
	var out []openapi.Operation
	for _, o := range s.Operations {
		if o.IsRead() && o.ListResponse {
			out = append(out, o)
		}
	}
	return out
}

func lowerName(n string) string { return strings.ToLower(n) }

func nameIn(set ...string) func(string) bool {
	m := map[string]bool{}
	for _, s := range set {
		m[s] = true
	}
	return func(n string) bool {
		l := lowerName(n)
		base, _, _ := strings.Cut(l, "[")
		return m[l] || (strings.Contains(l, "[") && m[base+"[]"])
	}
}

var (
	isSparse = nameIn("fields", "select", "$select", "fieldset", "fields[]", "only", "include_fields")
	isCursor = nameIn("cursor", "page_token", "pagetoken", "next_token", "nexttoken", "after", "starting_after", "startingafter", "continuation_token", "continuationtoken", "page[cursor]", "page[after]", "before", "ending_before", "next_cursor")
	isOffset = nameIn("offset", "limit", "page", "per_page", "perpage", "page_size", "pagesize", "skip", "top", "$top", "$skip", "start", "page[number]", "page[size]", "page[offset]", "page[limit]", "size", "count")
	isSearch = nameIn("q", "query", "search", "filter", "filter[]", "$filter", "$search", "keyword", "keywords", "term")
	isNextFn = nameIn("next_cursor", "nextcursor", "nextpagetoken", "next_page_token", "next_token", "nexttoken", "cursor", "end_cursor", "endcursor")
)

func specGate(spec *gather.OpenAPIDoc) (*Outcome, []openapi.Operation) {
	if spec.Spec == nil {
		o := na(noSpec)
		return &o, nil
	}
	lists := listOps(spec.Spec)
	if len(lists) == 0 {
		o := na("The API declares no list operations (GETs returning an array or collection).")
		return &o, nil
	}
	return nil, lists
}

func sparseFields(in gather.Source) Outcome {
	spec := gather.Get(in, gather.Spec)
	if o, lists := specGate(spec); o != nil {
		return *o
	} else {
		for _, op := range lists {
			if n, ok := op.HasParam(isSparse); ok {
				return pass(fmt.Sprintf("%s %s takes a %q parameter to select fields.", op.Method, op.Path, n), nil, at(spec.Resp))
			}
		}
		return fail(fmt.Sprintf("No list operation lets agents select fields (%d checked).", len(lists)), "", nil)
	}
}

func cursorPagination(in gather.Source) Outcome {
	spec := gather.Get(in, gather.Spec)
	o, lists := specGate(spec)
	if o != nil {
		return *o
	}
	var offset string
	for _, op := range lists {
		if n, ok := op.HasParam(isCursor); ok {
			return pass(fmt.Sprintf("%s %s paginates with a %q cursor.", op.Method, op.Path, n), nil, at(spec.Resp))
		}
		for _, f := range op.ResponseFields {
			if isNextFn(f) {
				return pass(fmt.Sprintf("%s %s returns a %q cursor field.", op.Method, op.Path, f), nil, at(spec.Resp))
			}
		}
		if n, ok := op.HasParam(isOffset); ok && offset == "" {
			offset = op.Method + " " + op.Path + " (" + n + ")"
		}
	}
	if offset != "" {
		return partial("Lists paginate only by offset or page number, e.g. "+offset+"; results shift when data changes.", "", nil, at(spec.Resp))
	}
	return fail(fmt.Sprintf("No list operation paginates (%d checked).", len(lists)), "", nil)
}

func searchFiltering(in gather.Source) Outcome {
	spec := gather.Get(in, gather.Spec)
	if spec.Spec != nil {
		for _, op := range spec.Spec.Operations {
			segs := words(op.Path + " " + op.OperationID)
			for _, w := range segs {
				if w == "search" && op.IsRead() || op.Method == "QUERY" {
					return pass(fmt.Sprintf("The API has a search operation: %s %s.", op.Method, op.Path), nil, at(spec.Resp))
				}
			}
		}
	}
	o, lists := specGate(spec)
	if o != nil {
		return *o
	}
	for _, op := range lists {
		if n, ok := op.HasParam(isSearch); ok {
			return pass(fmt.Sprintf("%s %s filters with a %q parameter.", op.Method, op.Path, n), nil, at(spec.Resp))
		}
	}
	return fail(fmt.Sprintf("No list operation takes a search or filter parameter (%d checked).", len(lists)), "", nil)
}

func bulkOps(in gather.Source) Outcome {
	spec := gather.Get(in, gather.Spec)
	if spec.Spec == nil {
		return na(noSpec)
	}
	writes := 0
	for _, op := range spec.Spec.Operations {
		if !op.IsWrite() {
			continue
		}
		writes++
		for _, w := range words(op.Path) {
			if w == "bulk" || w == "batch" {
				return pass(fmt.Sprintf("The API offers a bulk operation: %s %s.", op.Method, op.Path), nil, at(spec.Resp))
			}
		}
		if op.RequestIsArray {
			return pass(fmt.Sprintf("%s %s accepts an array of items.", op.Method, op.Path), nil, at(spec.Resp))
		}
	}
	if writes == 0 {
		return na("The API has no write operations.")
	}
	return fail(fmt.Sprintf("No write operation handles many items at once (%d checked).", writes), "", nil)
}

type rlFamily struct {
	name   string
	fields []string
}

var rlFamilies = []rlFamily{
	{"X-RateLimit", []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"}},
	{"RateLimit (draft-06)", []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"}},
	{"RateLimit (structured)", []string{"RateLimit", "RateLimit-Policy"}},
}

func isAPIResponse(home, probe, r *fetch.Response) bool {
	return r == probe || strings.Contains(r.ContentType(), "json") && r != home
}

func rateLimitHeaders(in gather.Source) Outcome {
	all, home, probe := gather.Get(in, gather.Responses), gather.Get(in, gather.Home).Resp, gather.Get(in, gather.ErrorProbe)
	ordered := make([]*fetch.Response, 0, len(all))
	for _, r := range all {
		if r.Err == nil && isAPIResponse(home, probe.Resp, r) {
			ordered = append(ordered, r)
		}
	}
	for _, r := range all {
		if r.Err == nil && !isAPIResponse(home, probe.Resp, r) {
			ordered = append(ordered, r)
		}
	}
	var partialAt *fetch.Response
	var partialWhat string
	for _, r := range ordered {
		for _, f := range rlFamilies {
			n := 0
			for _, h := range f.fields {
				if r.Header.Get(h) != "" {
					n++
				}
			}
			if n == len(f.fields) {
				return pass(fmt.Sprintf("Responses carry the complete %s rate-limit headers (seen on %s).", f.name, r.RequestURL), headerSubset(r.Header, f.fields), at(r))
			}
			if n > 0 && partialAt == nil {
				partialAt, partialWhat = r, "an incomplete "+f.name+" family"
			}
		}
		if partialAt == nil && r.Header.Get("Retry-After") != "" {
			partialAt, partialWhat = r, "Retry-After alone"
		}
	}
	if partialAt != nil {
		return partial("Rate limits are announced only partly: "+partialWhat+" on "+partialAt.RequestURL+".", "", nil, at(partialAt))
	}
	if hasAPI(in) || apiErrorJSON(probe) {
		return fail("No response carries rate-limit headers, although the site has an API.", "", nil)
	}
	return na("The site has no API and sends no rate-limit headers.")
}

// apiErrorJSON reports an API base that answers JSON: evidence of an API without a spec.
func apiErrorJSON(probe *gather.ErrorProbeDoc) bool {
	r := probe.Resp
	return r != nil && r.Err == nil && strings.Contains(r.ContentType(), "json")
}

func headerSubset(h http.Header, names []string) map[string]string {
	m := map[string]string{}
	for _, n := range names {
		m[n] = h.Get(n)
	}
	return m
}

func cachingHeaders(in gather.Source) Outcome {
	home, reval := gather.Get(in, gather.Home).Resp, gather.Get(in, gather.Revalidated)
	h := home.Header
	etag, lm, cc := h.Get("ETag"), h.Get("Last-Modified"), h.Get("Cache-Control")
	status := 0
	if reval != nil && reval.Err == nil {
		status = reval.Status
	}
	det := map[string]any{"etag": etag != "", "lastModified": lm != "", "cacheControl": cc, "conditionalStatus": status}
	have := 0
	if etag != "" || lm != "" {
		have++
	}
	if cc != "" {
		have++
	}
	if status == 304 {
		have++
	}
	switch have {
	case 3:
		return pass("The homepage has Cache-Control and a validator, and answers a conditional request with 304.", det, at(home))
	case 0:
		return fail("The homepage has no Cache-Control and no validator (ETag or Last-Modified).", "", det)
	}
	var miss []string
	if etag == "" && lm == "" {
		miss = append(miss, "no ETag or Last-Modified")
	}
	if cc == "" {
		miss = append(miss, "no Cache-Control")
	}
	if reval != nil && status != 304 {
		miss = append(miss, fmt.Sprintf("a conditional request got %d instead of 304", status))
	}
	return partial("Caching is incomplete: "+strings.Join(miss, "; ")+".", "", det, at(home))
}
