package mcpcard

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/agentready/agentready/engine/internal/jsonerr"
)

// Tool is a tool definition as a card or tools/list gives it.
type Tool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"inputSchema"`
}

// Card is a parsed server card.
type Card struct {
	Shape     string   `json:"shape"` // "server-card" (SEP-2127), "legacy" (transport.endpoint), "unknown"
	Name      string   `json:"name,omitempty"`
	Endpoints []string `json:"endpoints,omitempty"` // resolved streamable-HTTP endpoints
	Tools     []Tool   `json:"-"`
	Findings  []string `json:"findings,omitempty"`
}

// Valid reports a card that names itself and a Streamable HTTP endpoint.
func (c *Card) Valid() bool { return c.Name != "" && len(c.Endpoints) > 0 }

// Parse reads a card; base resolves relative endpoints. Published cards come
// in several generations (SEP-2127 server cards, registry server.json, the
// legacy transport.endpoint shape, flat discovery documents, mcpServers maps),
// so each member is read on its own and tolerated when its type is not the one
// a rule needs: an unexpected member becomes a note in Findings, never a
// rejection. Only a body that is not a JSON object is an error, and its text
// is a plain sentence (jsonerr), never encoding/json's.
func Parse(body []byte, base *url.URL) (*Card, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, errors.New("not a JSON object: " + jsonerr.Describe(body, err))
	}
	c := &Card{Shape: "unknown"}
	c.Name = stringMember(raw, "name")
	if c.Name == "" {
		var info map[string]json.RawMessage
		if json.Unmarshal(raw["serverInfo"], &info) == nil {
			c.Name = stringMember(info, "name")
		}
	}
	if c.Name == "" {
		c.Findings = append(c.Findings, "no `name` (or `serverInfo.name`)")
	}
	add := func(u string) {
		if r := resolve(u, base); r != "" {
			c.Endpoints = append(c.Endpoints, r)
		}
	}
	var remotes []map[string]json.RawMessage
	json.Unmarshal(raw["remotes"], &remotes)
	transport := readTransport(raw["transport"])
	switch {
	case len(remotes) > 0:
		c.Shape = "server-card"
		for i, r := range remotes {
			typ, u := stringMember(r, "type"), stringMember(r, "url")
			t := strings.ToLower(typ)
			switch {
			case strings.Contains(u, "{"):
				c.Findings = append(c.Findings, fmt.Sprintf("remotes[%d].url %q is a template; a card served by a site should name its concrete endpoint", i, u))
			case t == "streamable-http" || t == "http" || t == "":
				add(u)
			default:
				c.Findings = append(c.Findings, fmt.Sprintf("remotes[%d] uses transport %q, not streamable-http", i, typ))
			}
		}
	case firstNonEmpty(transport.Endpoint, transport.URL, stringMember(raw, "endpoint"), stringMember(raw, "url")) != "":
		c.Shape = "legacy"
		ep := firstNonEmpty(transport.Endpoint, transport.URL, stringMember(raw, "endpoint"), stringMember(raw, "url"))
		if !streamable(transport.Type) {
			c.Findings = append(c.Findings, fmt.Sprintf("transport type %q is not streamable-http", transport.Type))
		} else {
			add(ep)
		}
	case len(raw["mcpServers"]) > 0:
		c.Shape = "servers-map"
		var servers map[string]map[string]json.RawMessage
		if json.Unmarshal(raw["mcpServers"], &servers) != nil {
			c.Findings = append(c.Findings, "`mcpServers` is not an object of servers; ignored")
		}
		for _, key := range sortedKeys(servers) {
			srv := servers[key]
			t := readTransport(srv["transport"])
			u := firstNonEmpty(stringMember(srv, "url"), t.URL, t.Endpoint)
			if u == "" {
				continue // a package run locally (stdio) has no endpoint to reach
			}
			if !streamable(t.Type) {
				c.Findings = append(c.Findings, fmt.Sprintf("mcpServers.%s uses transport %q, not streamable-http", key, t.Type))
				continue
			}
			add(u)
		}
	}
	if len(c.Endpoints) == 0 {
		c.Findings = append(c.Findings, "no Streamable HTTP endpoint (`remotes[].url` or `transport.endpoint`)")
	}
	var caps map[string]json.RawMessage
	if v, ok := raw["capabilities"]; ok && json.Unmarshal(v, &caps) != nil {
		c.Findings = append(c.Findings, "`capabilities` is not an object (a list of names, say); read as a note only")
	}
	for _, src := range []struct {
		member string
		body   json.RawMessage
	}{{"tools", raw["tools"]}, {"capabilities.tools", caps["tools"]}} {
		if src.member == "capabilities.tools" && !bytes.HasPrefix(bytes.TrimSpace(src.body), []byte("[")) {
			continue // the MCP capability object ({listChanged}, {supported}), not a list
		}
		tools, note := readTools(src.body)
		if note != "" {
			c.Findings = append(c.Findings, "`"+src.member+"` "+note)
		}
		if len(tools) > 0 {
			c.Tools = tools
			break
		}
	}
	return c, nil
}

// transportMember is `transport` as an object ({type, endpoint|url}) or,
// in flat documents, a plain string naming the type.
type transportMember struct {
	Type     string `json:"type"`
	Endpoint string `json:"endpoint"`
	URL      string `json:"url"`
}

func readTransport(b json.RawMessage) transportMember {
	var t transportMember
	if json.Unmarshal(b, &t) != nil {
		json.Unmarshal(b, &t.Type)
	}
	return t
}

func streamable(typ string) bool {
	switch strings.ToLower(typ) {
	case "", "streamable-http", "streamable_http", "streamablehttp", "http", "https":
		return true
	}
	return false
}

// readTools reads a tool list. Entries that are objects become tools (an
// entry without inputSchema is kept: Grade says what it lacks); entries that
// are plain strings are names only ("dynamic" means the server lists them at
// run time). Anything else is noted and skipped.
func readTools(b json.RawMessage) ([]Tool, string) {
	if len(b) == 0 || string(b) == "null" {
		return nil, ""
	}
	var items []json.RawMessage
	if json.Unmarshal(b, &items) != nil {
		return nil, "is not a list of tools; ignored"
	}
	var tools []Tool
	var names, skipped int
	for _, it := range items {
		var obj map[string]json.RawMessage
		var name string
		switch {
		case json.Unmarshal(it, &obj) == nil:
			t := Tool{Name: stringMember(obj, "name"), Description: stringMember(obj, "description")}
			json.Unmarshal(obj["inputSchema"], &t.InputSchema)
			tools = append(tools, t)
		case json.Unmarshal(it, &name) == nil:
			if name != "" && name != "dynamic" && name != "*" {
				tools = append(tools, Tool{Name: name})
			}
			names++
		default:
			skipped++
		}
	}
	switch {
	case skipped > 0:
		return tools, fmt.Sprintf("has %d entries that are neither tool objects nor names; skipped", skipped)
	case names > 0:
		return tools, "lists tools by name only, without descriptions or input schemas"
	}
	return tools, ""
}

// stringMember is m[key] when it is a JSON string, else "".
func stringMember(m map[string]json.RawMessage, key string) string {
	var s string
	if json.Unmarshal(m[key], &s) != nil {
		return ""
	}
	return strings.TrimSpace(s)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func resolve(ref string, base *url.URL) string {
	u, err := url.Parse(strings.TrimSpace(ref))
	if err != nil || ref == "" {
		return ""
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return ""
	}
	return u.String()
}

// Grade says whether a tool is well described, and if not, why.
func Grade(t Tool) (ok bool, problems []string) {
	if !ValidToolName("mcp", t.Name) {
		problems = append(problems, "name must be 1–128 characters of A–Z, a–z, 0–9, _ . -")
	}
	d := strings.TrimSpace(t.Description)
	if len(d) < 20 {
		problems = append(problems, "description shorter than 20 characters")
	} else if !saysMore(d, t.Name) {
		problems = append(problems, "description only repeats the name")
	}
	if t.InputSchema == nil {
		problems = append(problems, "no inputSchema")
	} else {
		if typ, _ := t.InputSchema["type"].(string); typ != "object" {
			problems = append(problems, "inputSchema is not an object schema")
		}
		props, _ := t.InputSchema["properties"].(map[string]any)
		for name, p := range props {
			pm, _ := p.(map[string]any)
			_, typed := pm["type"]
			for _, k := range []string{"$ref", "anyOf", "oneOf", "enum", "const", "allOf"} {
				if _, ok := pm[k]; ok {
					typed = true
				}
			}
			desc, _ := pm["description"].(string)
			if !typed || strings.TrimSpace(desc) == "" {
				problems = append(problems, fmt.Sprintf("property %q lacks a type or a description", name))
			}
		}
	}
	return len(problems) == 0, problems
}

var wordRe = regexp.MustCompile(`[a-z0-9]+`)

func saysMore(desc, name string) bool {
	nameWords := map[string]bool{}
	for _, w := range wordRe.FindAllString(strings.ToLower(name), -1) {
		nameWords[w] = true
	}
	extra := 0
	for _, w := range wordRe.FindAllString(strings.ToLower(desc), -1) {
		if !nameWords[w] {
			extra++
		}
	}
	return extra >= 2
}

// Protocol versions the probe speaks.
const (
	ModernVersion = "2026-07-28"
	LegacyVersion = "2025-06-18"
)

// DiscoverRequest is a 2026-07-28 server/discover call with its required headers.
func DiscoverRequest() (body []byte, headers map[string]string) {
	return rpc(1, "server/discover", map[string]any{"_meta": meta()}), map[string]string{
		"Content-Type":         "application/json",
		"MCP-Protocol-Version": ModernVersion,
		"Mcp-Method":           "server/discover",
	}
}

// ModernToolsListRequest is a stateless 2026-07-28 tools/list call.
func ModernToolsListRequest() (body []byte, headers map[string]string) {
	return rpc(2, "tools/list", map[string]any{"_meta": meta()}), map[string]string{
		"Content-Type":         "application/json",
		"MCP-Protocol-Version": ModernVersion,
		"Mcp-Method":           "tools/list",
	}
}

// InitializeRequest is a legacy initialize call.
func InitializeRequest() (body []byte, headers map[string]string) {
	return rpc(1, "initialize", map[string]any{
			"protocolVersion": LegacyVersion,
			"capabilities":    map[string]any{},
			"clientInfo":      map[string]any{"name": "agentready", "version": "1.0"},
		}), map[string]string{
			"Content-Type": "application/json",
		}
}

// LegacyToolsListRequest is a tools/list call after a legacy initialize.
func LegacyToolsListRequest(sessionID string) (body []byte, headers map[string]string) {
	h := map[string]string{"Content-Type": "application/json", "MCP-Protocol-Version": LegacyVersion}
	if sessionID != "" {
		h["Mcp-Session-Id"] = sessionID
	}
	return rpc(2, "tools/list", map[string]any{}), h
}

// MaxSessionID bounds the Mcp-Session-Id a client sends back.
const MaxSessionID = 1024

// SessionID is the Mcp-Session-Id an initialize answer assigned, "" when
// there is none or it is not one a client may send back: the transport spec
// allows only visible ASCII, and a site's header is not echoed unbounded.
func SessionID(h http.Header) string {
	id := h.Get("Mcp-Session-Id")
	if len(id) > MaxSessionID {
		return ""
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return ""
		}
	}
	return id
}

// EndSessionHeaders are the headers of the DELETE that ends a legacy
// session: the transport spec asks a client that no longer needs a session
// to send it, with the session's id and the protocol version in use.
func EndSessionHeaders(sessionID string) map[string]string {
	return map[string]string{"Mcp-Session-Id": sessionID, "MCP-Protocol-Version": LegacyVersion}
}

// Accept is what a Streamable HTTP client must accept.
const Accept = "application/json, text/event-stream"

func meta() map[string]any {
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    ModernVersion,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "agentready", "version": "1.0"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
}

func rpc(id int, method string, params any) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return b
}

// Reply is a JSON-RPC 2.0 response, as ReadReply found it: exactly one of
// Result and Error is set.
type Reply struct {
	// ID is the request id as the server wrote it (a number, a string, or
	// null when it could not read the request's).
	ID     json.RawMessage
	Result json.RawMessage // the result's JSON, possibly the literal null
	Error  *RPCError
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int
	Message string // as the server wrote it: clip it before it reaches a report
}

// Answers reports a reply to the request with numeric id: its id, or a null
// id on an error (the server could not read the request's id).
func (r *Reply) Answers(id int) bool {
	if r == nil {
		return false
	}
	got := string(bytes.TrimSpace(r.ID))
	return got == strconv.Itoa(id) || (r.Error != nil && got == "null")
}

// ErrNoReply means the body held no JSON-RPC response.
var ErrNoReply = errors.New("no JSON-RPC 2.0 response in the body")

// ReadReply reads a JSON-RPC 2.0 response from a JSON body, or from the
// first event of an event stream that holds one (events before it may be
// the server's notifications or requests). It is the one reader of JSON-RPC
// replies, for MCP and A2A alike, and it holds a reply to the letter of
// JSON-RPC 2.0: an object with "jsonrpc": "2.0" and an id, and exactly one
// of a result and an error whose code is an integer. Anything else is
// ErrNoReply.
func ReadReply(contentType string, body []byte) (*Reply, error) {
	if strings.Contains(contentType, "event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 0, 64<<10), max(len(body)+1, 64<<10))
		var data bytes.Buffer
		flush := func() *Reply {
			defer data.Reset()
			if data.Len() == 0 {
				return nil
			}
			return readReply(data.Bytes())
		}
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				if r := flush(); r != nil {
					return r, nil
				}
				continue
			}
			if v, ok := strings.CutPrefix(line, "data:"); ok {
				if data.Len() > 0 {
					data.WriteByte('\n')
				}
				data.WriteString(strings.TrimPrefix(v, " "))
			}
		}
		if r := flush(); r != nil {
			return r, nil
		}
		return nil, ErrNoReply
	}
	if r := readReply(bytes.TrimSpace(body)); r != nil {
		return r, nil
	}
	return nil, ErrNoReply
}

// readReply reads one JSON-RPC 2.0 response; nil when b is not one.
func readReply(b []byte) *Reply {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	var version string
	if json.Unmarshal(m["jsonrpc"], &version) != nil || version != "2.0" {
		return nil
	}
	id, hasID := m["id"]
	result, hasResult := m["result"]
	rawErr, hasErr := m["error"]
	if !hasID || hasResult == hasErr {
		return nil
	}
	r := &Reply{ID: id, Result: result}
	if hasErr {
		var e struct {
			Code    json.RawMessage `json:"code"`
			Message string          `json:"message"`
		}
		if json.Unmarshal(rawErr, &e) != nil {
			return nil
		}
		code, err := strconv.Atoi(string(bytes.TrimSpace(e.Code)))
		if err != nil {
			return nil
		}
		r.Error = &RPCError{Code: code, Message: e.Message}
	}
	return r
}

// Tools extracts the tool list of a tools/list result.
func Tools(result json.RawMessage) ([]Tool, error) {
	var r struct {
		Tools []Tool `json:"tools"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return nil, err
	}
	return r.Tools, nil
}
