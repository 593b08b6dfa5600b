package gather

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/parse/mcpcard"
)

// Accept headers: each request says what it wants.
const (
	AcceptHTML     = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"
	AcceptMarkdown = "text/markdown"
	acceptText     = "text/plain,text/markdown;q=0.9,*/*;q=0.5"
	acceptJSON     = "application/json,*/*;q=0.5"
	acceptSpec     = "application/vnd.oai.openapi+json,application/json,application/yaml,text/yaml;q=0.9,*/*;q=0.5"
	acceptLinkset  = "application/linkset+json,application/json;q=0.9"
	acceptFeed     = "application/rss+xml,application/atom+xml,application/feed+json,application/xml;q=0.9,text/xml;q=0.9,*/*;q=0.5"
	acceptXML      = "application/xml,text/xml;q=0.9,*/*;q=0.5"
)

// Paths probed when nothing links to the document.
var (
	SpecPaths = []string{"/openapi.json", "/openapi.yaml", "/swagger.json", "/api-docs", "/api/openapi.json", "/docs/openapi.json", "/v1/openapi.json", "/.well-known/openapi.json"}
	FeedPaths = []string{"/feed", "/feed.xml", "/rss.xml", "/atom.xml", "/index.xml", "/rss"}
	DocsPaths = []string{"/docs", "/documentation", "/developers", "/api/docs"} // /api/docs only for APIs under /api
	MCPPaths  = []string{"/.well-known/mcp/server-card", "/.well-known/mcp/server-card.json", "/.well-known/mcp.json"}
)

// ErrorProbePrefix starts the path segment requested to see how the API
// reports errors (2.7). The rest is random in every scan, so a site cannot
// recognise the probe and answer it better than a real missing path.
const ErrorProbePrefix = "agentready-probe-"

// errorProbeSegment is ErrorProbePrefix and 12 random hex digits.
func errorProbeSegment() string { return randomSegment(ErrorProbePrefix) }

// randomSegment is prefix and 12 random hex digits: a path a site cannot
// recognise as a probe.
func randomSegment(prefix string) string {
	var b [6]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// MaxScripts is how many same-origin scripts 1.18 reads.
const MaxScripts = 5

// UnreachableError ends a scan whose homepage could not be fetched at all.
type UnreachableError struct {
	URL    string
	Reason string
	Err    error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("site unreachable: %s: %s", e.URL, e.Reason)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// describe turns a transport error into a sentence a site owner can act on;
// fetch words it, so no resolver address or library text reaches a report.
func describe(err error) string { return fetch.Describe(err) }

func found(r *fetch.Response) bool { return r.Found() }

// mentionsOpenAPI tells a broken description (worth a partial) from an unrelated 200 answer.
func mentionsOpenAPI(b []byte) bool {
	if len(b) > 4096 {
		b = b[:4096]
	}
	l := strings.ToLower(string(b))
	return strings.Contains(l, "openapi") || strings.Contains(l, "swagger")
}

func hasRel(rels []string, r string) bool {
	for _, x := range rels {
		if x == r {
			return true
		}
	}
	return false
}

var docsPath = regexp.MustCompile(`(?i)^/(docs?|documentation|developers?|api-docs|api-reference|reference|dev)(/|$)`)

// WebMCPRegister matches a WebMCP registration in text.
var WebMCPRegister = regexp.MustCompile(`modelContext\s*(\??\.\s*|\[\s*["']\s*)registerTool`)

// MCPProbe is what the live handshake with a card's endpoint showed.
type MCPProbe struct {
	Endpoint    string         `json:"endpoint,omitempty"`
	Modern      bool           `json:"modern"` // server/discover answered
	Legacy      bool           `json:"legacy"` // initialize answered
	Error       string         `json:"error,omitempty"`
	Tools       []mcpcard.Tool `json:"-"`
	ToolsSource string         `json:"toolsSource,omitempty"` // "card" or "tools/list"
}

// IsDocsPath reports a URL path under a documentation section (/docs,
// /developers, /reference…).
func IsDocsPath(p string) bool { return docsPath.MatchString(p) }

// IsDocsURL reports a documentation page: under a docs path, or on a
// docs.* host.
func IsDocsURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (IsDocsPath(u.Path) || strings.HasPrefix(strings.ToLower(u.Hostname()), "docs."))
}
