package checks

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/agentready/agentready/engine/clip"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/report"
)

var _ = deepProbe(&DeepProbe{
	ID:   "mcp.live",
	Name: "Live MCP server",
	Doc: "Connects to the MCP endpoints the server card declares (at most two, same site only) with the official Go SDK client, " +
		"modern stateless 2026-07-28 first and the legacy initialize handshake second; lists tools, resources and prompts " +
		"(at most 5 pages or 200 items each) and checks every tool's inputSchema. No tool is called. " +
		"An endpoint that answers 401 with a Bearer challenge gets the deep scan's one OAuth token (the one oauth.challenge uses), when its protected-resource metadata lists the authorization server that issued it. " +
		"Pass: it connects, every list answers and every schema is valid; partial: it connects with problems; " +
		"fail: no declared endpoint completes a handshake; na: no endpoint is declared.",
	Requires: []gather.AnyKey{gather.MCPLive},
	Run:      mcpLiveProbe,
})

const (
	// mcpMaxSchemaProblems is how many schema problems a report lists.
	mcpMaxSchemaProblems = 20
	// mcpMaxQuoted caps, in characters, a name the site chose (a tool, a
	// property, a type) that a message quotes.
	mcpMaxQuoted = 60
)

func mcpLiveProbe(in gather.Source) report.DeepProbe {
	doc := gather.Get(in, gather.MCPLive)
	details := map[string]any{}
	var skipped string
	if len(doc.CrossSite) > 0 {
		details["skippedCrossSite"] = doc.CrossSite
		skipped = fmt.Sprintf(" Skipped %s on another site (%s): the deep scan connects only to the scanned site's own endpoints.",
			plural(len(doc.CrossSite), "declared endpoint", "declared endpoints"), strings.Join(doc.CrossSite, ", "))
	}
	if doc.NotTried > 0 {
		details["notTried"] = doc.NotTried
		skipped += fmt.Sprintf(" %s beyond the first %d were not tried.", plural(doc.NotTried, "further endpoint", "further endpoints"), gather.MaxMCPEndpoints)
	}
	if len(doc.Endpoints) == 0 {
		var msg string
		switch {
		case doc.CardURL == "":
			msg = "No MCP endpoint is declared: no MCP server card was found (" + strings.Join(gather.MCPPaths, ", ") + " or a <link rel=\"mcp\">), so there is nothing to connect to."
		case doc.CardErr != "":
			msg = fmt.Sprintf("The MCP server card at %s could not be read (%s), so it declares no endpoint to connect to.", doc.CardURL, doc.CardErr)
		case len(doc.CrossSite) > 0:
			msg = fmt.Sprintf("The MCP server card at %s declares no endpoint on this site.", doc.CardURL)
		default:
			msg = fmt.Sprintf("The MCP server card at %s names no Streamable HTTP endpoint (remotes[].url), so there is nothing to connect to.", doc.CardURL)
		}
		if doc.CardURL != "" {
			details["card"] = doc.CardURL
		}
		return report.DeepProbe{Status: report.NA, Message: msg + skipped, Details: details}
	}
	details["card"] = doc.CardURL

	var (
		sentences []string
		problems  []string // schema problems over every endpoint, first mcpMaxSchemaProblems
		statuses  []report.Status
		fixes     = map[string]bool{}
		eps       []map[string]any
	)
	for _, ep := range doc.Endpoints {
		st, sentence, epDetails := mcpJudgeEndpoint(ep, &problems, fixes)
		statuses = append(statuses, st)
		sentences = append(sentences, sentence)
		eps = append(eps, epDetails)
	}
	details["endpoints"] = eps
	if len(problems) > 0 {
		details["schemaProblems"] = problems
	}
	status := report.Pass
	switch {
	case mcpAllStatus(statuses, report.Fail):
		status = report.Fail
	case !mcpAllStatus(statuses, report.Pass):
		status = report.Partial
	}
	msg := strings.Join(sentences, " ")
	for _, f := range []string{mcpFixConnect, mcpFixAuth, mcpFixLists, mcpFixSchemas, mcpFixDropped, mcpFixCapability} {
		if fixes[f] {
			msg += " " + f
		}
	}
	return report.DeepProbe{Status: status, Message: msg + skipped, Details: details}
}

const (
	mcpFixConnect    = "The endpoint must answer a POSTed JSON-RPC request with a JSON-RPC response (application/json or text/event-stream): server/discover for the stateless 2026-07-28 protocol, or initialize for earlier versions."
	mcpFixAuth       = "An endpoint that asks for a token must let agents get one: answer 401 with `WWW-Authenticate: Bearer resource_metadata=\"…\"` naming protected-resource metadata (RFC 9728) that lists your authorization server, and advertise in its metadata a grant agents can use (client_credentials with token_endpoint_auth_methods_supported \"none\" needs no registration)."
	mcpFixLists      = "Answer every list the capabilities declare (tools/list, resources/list, prompts/list), with a nextCursor only when another page follows."
	mcpFixSchemas    = "Give every tool an inputSchema that is a JSON Schema object with \"type\": \"object\", properties that are themselves schemas, and required names that are among its properties."
	mcpFixDropped    = "Remove null tool entries and put x-mcp-header annotations only on string, integer or boolean properties, each header name once."
	mcpFixCapability = "Declare the tools capability in the handshake's result, so clients that follow the capabilities ask for the tools."
)

func mcpAllStatus(ss []report.Status, want report.Status) bool {
	for _, s := range ss {
		if s != want {
			return false
		}
	}
	return true
}

// mcpJudgeEndpoint is one endpoint's verdict, sentence and details; its
// schema problems are added to problems (up to mcpMaxSchemaProblems).
func mcpJudgeEndpoint(ep gather.MCPLiveEndpoint, problems *[]string, fixes map[string]bool) (report.Status, string, map[string]any) {
	d := map[string]any{"url": ep.URL, "handshakeMs": ep.HandshakeMS}
	calls := make([]map[string]any, 0, min(len(ep.Calls), 20))
	for _, c := range ep.Calls[:min(len(ep.Calls), 20)] {
		calls = append(calls, map[string]any{"method": c.Method, "status": c.HTTPStatus, "ms": c.MS, "outcome": c.Outcome})
	}
	d["calls"] = calls
	if ep.ModernFailure != "" {
		d["modernFailure"] = ep.ModernFailure
	}
	if ep.AuthIssuer != "" {
		d["authorizedBy"] = ep.AuthIssuer
	}
	if ep.Failure != "" {
		d["failure"] = ep.Failure
		if ep.AuthIssuer != "" {
			return report.Fail, fmt.Sprintf("The MCP endpoint %s could not be used: %s. It asked for a token (401 with a Bearer challenge) and was sent the deep scan's, from the authorization server %s its protected-resource metadata lists; accept the tokens that server issues (check their audience and scope).", ep.URL, ep.Failure, ep.AuthIssuer), d
		}
		if ep.AuthNote != "" {
			d["authNote"] = ep.AuthNote
			fixes[mcpFixAuth] = true
			return report.Fail, fmt.Sprintf("The MCP endpoint %s could not be used: %s. It asks for credentials (HTTP 401), and %s.", ep.URL, ep.Failure, ep.AuthNote), d
		}
		fixes[mcpFixConnect] = true
		return report.Fail, fmt.Sprintf("The MCP endpoint %s could not be used: %s.", ep.URL, ep.Failure), d
	}
	d["era"], d["protocolVersion"] = ep.Era, ep.ProtocolVersion
	if ep.Server != "" {
		d["server"] = ep.Server
	}
	var sentence string
	if ep.Era == "modern" {
		sentence = fmt.Sprintf("The MCP endpoint %s answers the modern stateless protocol (%s): server/discover completed in %d ms.", ep.URL, ep.ProtocolVersion, ep.HandshakeMS)
	} else {
		sentence = fmt.Sprintf("The MCP endpoint %s answers only the legacy initialize handshake (%s, %d ms)", ep.URL, ep.ProtocolVersion, ep.HandshakeMS)
		if ep.ModernFailure != "" {
			sentence += "; " + ep.ModernFailure
		}
		sentence += "."
	}

	if ep.AuthIssuer != "" {
		sentence += fmt.Sprintf(" It asked for a token (401 with a Bearer challenge) and accepted the deep scan's, from the authorization server %s its protected-resource metadata lists.", ep.AuthIssuer)
	}
	var listed, issues []string
	lists := map[string]any{}
	for _, l := range ep.Lists {
		if !l.Tried {
			continue
		}
		ld := map[string]any{"pages": l.Pages, "items": l.Items, "ms": l.MS, "declared": l.Offered}
		if l.Capped {
			ld["capped"] = true
		}
		if l.Failure != "" {
			ld["error"] = l.Failure
			issues = append(issues, l.Failure)
			fixes[mcpFixLists] = true
		} else {
			s := plural(l.Items, strings.TrimSuffix(l.Kind, "s"), l.Kind)
			if l.Capped {
				s += fmt.Sprintf(" (the first %d pages; more follow)", l.Pages)
			}
			listed = append(listed, s)
		}
		lists[l.Kind] = ld
	}
	d["lists"] = lists
	switch {
	case len(listed) > 0:
		sentence += " It lists " + joinAnd(listed) + "."
	case !mcpFailedList(ep.Lists):
		sentence += " It offers no tools, resources or prompts."
	}

	invalid := 0
	for _, t := range ep.Tools {
		ps := mcpToolSchemaProblems(t.InputSchema)
		if len(ps) == 0 {
			continue
		}
		invalid++
		for _, p := range ps {
			if len(*problems) < mcpMaxSchemaProblems {
				*problems = append(*problems, fmt.Sprintf("tool %s: %s", clip.Quote(t.Name, mcpMaxQuoted), p))
			}
		}
	}
	d["toolsInvalid"] = invalid
	if invalid > 0 {
		first := mcpToolSchemaProblems(mcpFirstInvalid(ep.Tools).InputSchema)[0]
		issues = append(issues, fmt.Sprintf("%d of %d tools have an invalid inputSchema (first: tool %s: %s)", invalid, len(ep.Tools), clip.Quote(mcpFirstInvalid(ep.Tools).Name, mcpMaxQuoted), first))
		fixes[mcpFixSchemas] = true
	} else if len(ep.Tools) > 0 {
		sentence += " Every tool's inputSchema is valid."
	}
	if ep.ToolsDropped > 0 {
		d["toolsDropped"] = ep.ToolsDropped
		issues = append(issues, fmt.Sprintf("%s in its tools/list answers the official Go SDK client drops as invalid, so agents built on it never see them", plural(ep.ToolsDropped, "tool", "tools")))
		fixes[mcpFixDropped] = true
	}
	if ep.ToolsUndeclared {
		d["toolsUndeclared"] = true
		issues = append(issues, "it answers tools/list without declaring the tools capability")
		fixes[mcpFixCapability] = true
	}
	if len(issues) > 0 {
		return report.Partial, sentence + " Problems: " + strings.Join(issues, "; ") + ".", d
	}
	return report.Pass, sentence, d
}

func mcpFailedList(ls []gather.MCPList) bool {
	for _, l := range ls {
		if l.Failure != "" {
			return true
		}
	}
	return false
}

func mcpFirstInvalid(tools []gather.MCPLiveTool) gather.MCPLiveTool {
	for _, t := range tools {
		if len(mcpToolSchemaProblems(t.InputSchema)) > 0 {
			return t
		}
	}
	return gather.MCPLiveTool{}
}

// Bounds of the schema walk: a hostile schema costs at most this much.
const (
	mcpMaxSchemaDepth  = 16
	mcpMaxSchemaNodes  = 2000
	mcpMaxToolProblems = 10 // problems kept per tool
)

var mcpSchemaTypes = map[string]bool{"object": true, "array": true, "string": true, "number": true, "integer": true, "boolean": true, "null": true}

// mcpToolSchemaProblems checks a tool's inputSchema as MCP requires it: a JSON
// Schema object whose type is "object", whose properties are schemas (with
// known types), and whose required names are among its properties, at every
// level the walk reaches (depth and size are capped). schema is decoded JSON
// (map[string]any, []any, string, float64, bool or nil). It returns plain
// sentences, at most mcpMaxToolProblems, and none for a valid schema.
func mcpToolSchemaProblems(schema any) []string {
	w := &mcpSchemaWalker{}
	switch s := schema.(type) {
	case nil:
		return []string{"it has no inputSchema"}
	case map[string]any:
		switch t := s["type"].(type) {
		case nil:
			w.add(`inputSchema has no "type": "object"`)
		case string:
			if t != "object" {
				w.add(fmt.Sprintf(`inputSchema has type %s, not "object"`, clip.Quote(t, mcpMaxQuoted)))
			}
		default:
			w.add(`inputSchema's type is not the string "object"`)
		}
		w.walk(s, "", 0)
	default:
		return []string{fmt.Sprintf("inputSchema is %s, not a JSON Schema object", mcpKind(schema))}
	}
	return w.problems
}

type mcpSchemaWalker struct {
	problems []string
	nodes    int
	capped   bool
}

func (w *mcpSchemaWalker) add(p string) {
	if len(w.problems) < mcpMaxToolProblems {
		w.problems = append(w.problems, p)
	}
}

// mcpWhere names a position in the schema for a message.
func mcpWhere(path string) string {
	if path == "" {
		return "inputSchema"
	}
	return "property " + clip.Quote(path, mcpMaxQuoted)
}

func mcpChild(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// sub checks a value that must be a schema (an object or a boolean).
func (w *mcpSchemaWalker) sub(v any, path, role string, depth int) {
	switch s := v.(type) {
	case bool:
	case map[string]any:
		w.walk(s, path, depth)
	default:
		w.add(fmt.Sprintf("%s is %s, not a schema", role, mcpKind(v)))
	}
}

func (w *mcpSchemaWalker) walk(s map[string]any, path string, depth int) {
	w.nodes++
	if w.nodes > mcpMaxSchemaNodes || depth > mcpMaxSchemaDepth {
		if !w.capped {
			w.capped = true
			w.add(fmt.Sprintf("the schema is too large or too deep to check whole (over %d subschemas or %d levels)", mcpMaxSchemaNodes, mcpMaxSchemaDepth))
		}
		return
	}
	at := mcpWhere(path)
	typ := s["type"]
	if depth == 0 {
		typ = nil // the root's type must be "object": mcpToolSchemaProblems said so already
	}
	switch t := typ.(type) {
	case nil:
	case string:
		if !mcpSchemaTypes[t] {
			w.add(fmt.Sprintf("%s has type %s, which is not a JSON Schema type", at, clip.Quote(t, mcpMaxQuoted)))
		}
	case []any:
		if len(t) == 0 {
			w.add(at + " has an empty type list")
		}
		for _, x := range t {
			if name, ok := x.(string); !ok || !mcpSchemaTypes[name] {
				w.add(fmt.Sprintf("%s lists %s as a type, which is not a JSON Schema type", at, mcpValue(x)))
				break
			}
		}
	default:
		w.add(fmt.Sprintf("%s has a type that is %s, not a type name", at, mcpKind(t)))
	}
	var props map[string]any
	if raw, ok := s["properties"]; ok {
		p, isObj := raw.(map[string]any)
		if !isObj {
			w.add(fmt.Sprintf("%s has properties that are %s, not an object of schemas", at, mcpKind(raw)))
		}
		props = p
		for _, name := range mcpSchemaKeys(props) {
			w.sub(props[name], mcpChild(path, name), mcpWhere(mcpChild(path, name)), depth+1)
		}
	}
	if raw, ok := s["required"]; ok {
		list, isList := raw.([]any)
		if !isList {
			w.add(fmt.Sprintf("%s has required that is %s, not a list of property names", at, mcpKind(raw)))
		}
		for _, x := range list {
			name, ok := x.(string)
			switch {
			case !ok:
				w.add(fmt.Sprintf("%s lists %s in required, not a property name", at, mcpValue(x)))
			default:
				if _, present := props[name]; !present {
					w.add(fmt.Sprintf("%s requires %s, which is not among its properties", at, clip.Quote(name, mcpMaxQuoted)))
				}
			}
		}
	}
	if raw, ok := s["items"]; ok {
		if tuple, isList := raw.([]any); isList {
			for i, x := range tuple {
				w.sub(x, path+"["+strconv.Itoa(i)+"]", fmt.Sprintf("%s's items[%d]", at, i), depth+1)
			}
		} else {
			w.sub(raw, path+"[]", at+"'s items", depth+1)
		}
	}
	if raw, ok := s["additionalProperties"]; ok {
		w.sub(raw, path+"{}", at+"'s additionalProperties", depth+1)
	}
	if raw, ok := s["not"]; ok {
		w.sub(raw, path, at+"'s not", depth+1)
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		raw, ok := s[k]
		if !ok {
			continue
		}
		list, isList := raw.([]any)
		if !isList || len(list) == 0 {
			w.add(fmt.Sprintf("%s has %s that is not a non-empty list of schemas", at, k))
			continue
		}
		for i, x := range list {
			w.sub(x, path, fmt.Sprintf("%s's %s[%d]", at, k, i), depth+1)
		}
	}
	for _, k := range []string{"$defs", "definitions"} {
		raw, ok := s[k]
		if !ok {
			continue
		}
		defs, isObj := raw.(map[string]any)
		if !isObj {
			w.add(fmt.Sprintf("%s has %s that is %s, not an object of schemas", at, k, mcpKind(raw)))
			continue
		}
		for _, name := range mcpSchemaKeys(defs) {
			w.sub(defs[name], path, fmt.Sprintf("%s's %s %s", at, k, clip.Quote(name, mcpMaxQuoted)), depth+1)
		}
	}
	if raw, ok := s["enum"]; ok {
		if _, isList := raw.([]any); !isList {
			w.add(fmt.Sprintf("%s has an enum that is %s, not a list", at, mcpKind(raw)))
		}
	}
	for _, k := range []string{"description", "title", "$ref"} {
		if raw, ok := s[k]; ok {
			if _, isStr := raw.(string); !isStr {
				w.add(fmt.Sprintf("%s has a %s that is %s, not a string", at, k, mcpKind(raw)))
			}
		}
	}
}

func mcpSchemaKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func mcpKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, int, int64, float32:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "not JSON"
}

func mcpValue(v any) string {
	if s, ok := v.(string); ok {
		return clip.Quote(s, mcpMaxQuoted)
	}
	return mcpKind(v)
}
