package repo

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Hit is one piece of evidence.
type Hit struct {
	File string `json:"file"`
	Line int    `json:"line"`
	What string `json:"what"`
}

func (h Hit) At() string { return fmt.Sprintf("%s:%d", h.File, h.Line) }

// Route is a registered HTTP route.
type Route struct {
	Hit
	Method, Path string
}

// ToolDef is one tool definition found in code or data.
type ToolDef struct {
	Hit
	Ecosystem string // mcp, openai, anthropic, gemini, langchain
	Name      string
	Problem   string // empty when valid
}

// evidence is what one walk found, merged from every file.
type evidence struct {
	mu             sync.Mutex
	routes         []Route
	sessionHeaders []Hit
	scopeIssue     []Hit
	scopeEnforce   []Hit
	auditLogs      []Hit
	sandboxReads   []Hit
	sandboxConfigs []Hit
	consequence    []Hit
	tools          []ToolDef
	signed         []Hit // outbound delivery signed with an HMAC signature header
	timestamped    []Hit // … that also sends a timestamp
	unsigned       []Hit // outbound event delivery without a signature
	agentsMD       *agentsDoc
	vendorFiles    []Hit
}

const maxHits = 200

func (e *evidence) add(list *[]Hit, h Hit) {
	e.mu.Lock()
	if len(*list) < maxHits {
		*list = append(*list, h)
	}
	e.mu.Unlock()
}

func (e *evidence) addRoute(r Route) {
	e.mu.Lock()
	if len(e.routes) < 5000 {
		e.routes = append(e.routes, r)
	}
	e.mu.Unlock()
}

func (e *evidence) addTool(t ToolDef) {
	e.mu.Lock()
	if len(e.tools) < 1000 {
		e.tools = append(e.tools, t)
	}
	e.mu.Unlock()
}

// Names that mark evidence, shared by every language.
var (
	sessionHeaderNames = map[string]bool{"mcp-session-id": true, "x-agent-session": true, "x-agent-session-id": true, "x-session-id": true,
		"x-conversation-id": true, "x-thread-id": true, "conversation-id": true, "thread-id": true, "x-agent-conversation": true}
	identityKeys = map[string]bool{"agent_id": true, "agentid": true, "agent": true, "client_id": true, "clientid": true, "actor": true, "actor_id": true,
		"actorid": true, "caller": true, "principal": true, "subject": true, "actor_type": true, "agent_type": true}
	actionKeys   = map[string]bool{"action": true, "event": true, "op": true, "operation": true, "method": true, "route": true, "tool": true}
	sandboxName  = regexp.MustCompile(`(?i)(sandbox|test_?mode|dry_?run|dry-run|staging_url|test-mode)`)
	scopeFunc    = regexp.MustCompile(`(?i)^(require|check|has|enforce|verify|must|ensure)_?scopes?$`)
	signatureKey = regexp.MustCompile(`(?i)signature`)
	timestampKey = regexp.MustCompile(`(?i)timestamp`)
	toolName     = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
)

func normKey(s string) string { return strings.ToLower(strings.Trim(s, `"'`+"`")) }
