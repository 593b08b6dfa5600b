package repo

import (
	"fmt"
	"regexp"
	"sync"

	"github.com/agentready/agentready/engine/gather"
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

// Findings is what one walk found, merged from every file and sorted by
// place: the artifact the level-5 checks judge (key Evidence).
type Findings struct {
	mu             sync.Mutex
	Routes         []Route
	SessionHeaders []Hit // handlers reading an agent session header
	ScopeIssue     []Hit // tokens issued with scopes
	ScopeEnforce   []Hit // routes checking a scope
	AuditLogs      []Hit // structured logs carrying the acting client
	SandboxReads   []Hit // code reading a sandbox or test-mode setting
	SandboxConfigs []Hit // sandbox configuration, read or not
	Consequence    []Hit // consequence labels on actions
	Tools          []ToolDef
	Signed         []Hit // outbound delivery signed with an HMAC signature header
	Timestamped    []Hit // … that also sends a timestamp
	Unsigned       []Hit // outbound event delivery without a signature
	AgentsMD       *AgentsDoc
	VendorFiles    []Hit // vendor-specific agent instructions

	funcs map[string][]*sigFunc // Go functions by package.Name, for resolveDeliveries
}

// sigFunc is what one Go function does toward a signed delivery.
type sigFunc struct {
	key     string
	hmac    bool
	sig, ts *Hit // sets a signature / timestamp header (or builds a "t=…,v1=…" value)
	post    *Hit // posts to a callback or webhook URL
	calls   []string
}

// signDepth bounds how far a delivery's calls are followed to find its
// signing (send → Sign → mac is two steps).
const signDepth = 3

// resolveDeliveries judges each delivery found in Go code with what the
// functions it calls do: a delivery is signed when, within signDepth calls,
// a signature header is set and an HMAC computed; timestamped when a
// timestamp is sent too.
func (e *Findings) resolveDeliveries() {
	type facts struct {
		hmac    bool
		sig, ts *Hit
	}
	var reach func(key string, depth int, seen map[string]bool) facts
	reach = func(key string, depth int, seen map[string]bool) facts {
		var out facts
		if depth > signDepth || seen[key] {
			return out
		}
		seen[key] = true
		for _, fn := range e.funcs[key] {
			out.hmac = out.hmac || fn.hmac
			if out.sig == nil {
				out.sig = fn.sig
			}
			if out.ts == nil {
				out.ts = fn.ts
			}
			for _, c := range fn.calls {
				f := reach(c, depth+1, seen)
				out.hmac = out.hmac || f.hmac
				if out.sig == nil {
					out.sig = f.sig
				}
				if out.ts == nil {
					out.ts = f.ts
				}
			}
		}
		return out
	}
	for _, fns := range e.funcs {
		for _, fn := range fns {
			if fn.post == nil && !(fn.hmac && fn.sig != nil) {
				continue
			}
			f := reach(fn.key, 0, map[string]bool{})
			switch {
			case f.hmac && f.sig != nil:
				e.add(&e.Signed, *f.sig)
				if f.ts != nil {
					e.add(&e.Timestamped, *f.ts)
				}
			case fn.post != nil:
				h := *fn.post
				h.What = "delivery without a signature"
				e.add(&e.Unsigned, h)
			}
		}
	}
	e.funcs = nil
}

// Evidence is the key of a repository's Findings in a gather.Set.
var Evidence = gather.NewKey[*Findings]("repo-evidence")

const maxHits = 200

func (e *Findings) add(list *[]Hit, h Hit) {
	e.mu.Lock()
	if len(*list) < maxHits {
		*list = append(*list, h)
	}
	e.mu.Unlock()
}

func (e *Findings) addRoute(r Route) {
	e.mu.Lock()
	if len(e.Routes) < 5000 {
		e.Routes = append(e.Routes, r)
	}
	e.mu.Unlock()
}

func (e *Findings) addTool(t ToolDef) {
	e.mu.Lock()
	if len(e.Tools) < 1000 {
		e.Tools = append(e.Tools, t)
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
)
