package mcpcard

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
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

// Parse reads a card; base resolves relative endpoints.
func Parse(body []byte, base *url.URL) (*Card, error) {
	var raw struct {
		Name       string `json:"name"`
		ServerInfo struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
		Remotes []struct {
			Type string `json:"type"`
			URL  string `json:"url"`
		} `json:"remotes"`
		Transport struct {
			Type     string `json:"type"`
			Endpoint string `json:"endpoint"`
			URL      string `json:"url"`
		} `json:"transport"`
		Endpoint     string          `json:"endpoint"`
		Tools        json.RawMessage `json:"tools"`
		Capabilities struct {
			Tools json.RawMessage `json:"tools"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	c := &Card{Shape: "unknown", Name: raw.Name}
	if c.Name == "" {
		c.Name = raw.ServerInfo.Name
	}
	if c.Name == "" {
		c.Findings = append(c.Findings, "no `name` (or `serverInfo.name`)")
	}
	add := func(u string) {
		if r := resolve(u, base); r != "" {
			c.Endpoints = append(c.Endpoints, r)
		}
	}
	if len(raw.Remotes) > 0 {
		c.Shape = "server-card"
		for i, r := range raw.Remotes {
			t := strings.ToLower(r.Type)
			switch {
			case strings.Contains(r.URL, "{"):
				c.Findings = append(c.Findings, fmt.Sprintf("remotes[%d].url %q is a template; a card served by a site should name its concrete endpoint", i, r.URL))
			case t == "streamable-http" || t == "http" || t == "":
				add(r.URL)
			default:
				c.Findings = append(c.Findings, fmt.Sprintf("remotes[%d] uses transport %q, not streamable-http", i, r.Type))
			}
		}
	} else if ep := firstNonEmpty(raw.Transport.Endpoint, raw.Transport.URL, raw.Endpoint); ep != "" {
		c.Shape = "legacy"
		if t := strings.ToLower(raw.Transport.Type); t != "" && t != "streamable-http" && t != "http" {
			c.Findings = append(c.Findings, fmt.Sprintf("transport type %q is not streamable-http", raw.Transport.Type))
		} else {
			add(ep)
		}
	}
	if len(c.Endpoints) == 0 {
		c.Findings = append(c.Findings, "no Streamable HTTP endpoint (`remotes[].url` or `transport.endpoint`)")
	}
	for _, src := range []json.RawMessage{raw.Tools, raw.Capabilities.Tools} {
		var tools []Tool
		if len(src) > 0 && json.Unmarshal(src, &tools) == nil && len(tools) > 0 {
			c.Tools = tools
			break
		}
	}
	return c, nil
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

var toolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// Grade says whether a tool is well described, and if not, why.
func Grade(t Tool) (ok bool, problems []string) {
	if !toolName.MatchString(t.Name) {
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

// Reply is a JSON-RPC response.
type Reply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// ErrNoReply means the body held no JSON-RPC response.
var ErrNoReply = errors.New("no JSON-RPC response in the body")

// ReadReply reads a JSON-RPC response from a JSON body or the first SSE event that holds one.
func ReadReply(contentType string, body []byte) (*Reply, error) {
	try := func(b []byte) (*Reply, bool) {
		var r Reply
		var probe map[string]json.RawMessage
		if json.Unmarshal(b, &probe) != nil {
			return nil, false
		}
		if _, ok := probe["jsonrpc"]; !ok {
			return nil, false
		}
		if json.Unmarshal(b, &r) != nil || (r.Result == nil && r.Error == nil) {
			return nil, false
		}
		return &r, true
	}
	if strings.Contains(contentType, "event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		var data bytes.Buffer
		flush := func() (*Reply, bool) {
			defer data.Reset()
			if data.Len() == 0 {
				return nil, false
			}
			return try(data.Bytes())
		}
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				if r, ok := flush(); ok {
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
		if r, ok := flush(); ok {
			return r, nil
		}
		return nil, ErrNoReply
	}
	if r, ok := try(bytes.TrimSpace(body)); ok {
		return r, nil
	}
	return nil, ErrNoReply
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
