package gather

import (
	"net/url"

	"github.com/agentready/agentready/engine/agentcard"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/htmlpage"
	"github.com/agentready/agentready/engine/jsonld"
	"github.com/agentready/agentready/engine/linkset"
	"github.com/agentready/agentready/engine/llmstxt"
	"github.com/agentready/agentready/engine/mcpcard"
	"github.com/agentready/agentready/engine/openapi"
	"github.com/agentready/agentready/engine/robots"
)

// Artifacts is everything a scan learned about a site.
type Artifacts struct {
	Target *url.URL // the site root
	Origin string   // scheme://host[:port]
	// ScannerOrigin is the Origin header every request carried (CORS is judged against it).
	ScannerOrigin string

	Home        *fetch.Response
	Page        *htmlpage.Page // nil when the homepage is not HTML
	HomeLinks   []linkset.HeaderLink
	JSONLD      *jsonld.Graph
	Markdown    *fetch.Response // homepage asked for text/markdown
	Revalidated *fetch.Response // conditional re-request; nil without a validator
	HTTPProbe   *fetch.Response // http:// twin of an https target, redirects not followed

	Robots     *fetch.Response
	RobotsFile *robots.File // nil unless robots.txt was found

	Llms       *fetch.Response // the llms.txt answer judged (found, or the last tried)
	LlmsReport *llmstxt.Report

	AgentCard       *fetch.Response
	AgentCardLegacy bool
	AgentCardReport *agentcard.Report
	AgentCardErr    error

	Spec       *openapi.Spec
	SpecResp   *fetch.Response // the document graded (nil when none was found)
	SpecErr    error           // why a found document did not load
	SpecSource string          // how it was found: link header, catalog, common path…

	SkillFile   *fetch.Response
	AISite      *fetch.Response
	SkillsIndex *fetch.Response
	SkillsV01   bool

	MCPCardResp *fetch.Response
	MCPCard     *mcpcard.Card
	MCPCardErr  error
	MCPProbe    MCPProbe

	Feed       *fetch.Response
	FeedLinked bool

	Catalog     *fetch.Response
	Linkset     *linkset.Linkset
	LinksetErr  error
	CatalogHead *fetch.Response

	OpenIDConfig *fetch.Response
	OAuthServer  *fetch.Response
	ProtectedRes *fetch.Response
	X402         *fetch.Response

	Sitemap         *fetch.Response
	SitemapDeclared bool
	SitemapURL      string

	Docs       *fetch.Response // the documentation page, or the first probe answer when none was found
	DocsFound  bool
	DocsSource string

	ErrorProbe *fetch.Response
	Scripts    []*fetch.Response

	// Every response of the scan, in request order (for header-based checks).
	All []*fetch.Response
}

// MCPProbe is what the live handshake with a card's endpoint showed.
type MCPProbe struct {
	Endpoint    string         `json:"endpoint,omitempty"`
	Modern      bool           `json:"modern"` // server/discover answered
	Legacy      bool           `json:"legacy"` // initialize answered
	Error       string         `json:"error,omitempty"`
	Tools       []mcpcard.Tool `json:"-"`
	ToolsSource string         `json:"toolsSource,omitempty"` // "card" or "tools/list"
}

// HasAPI reports evidence that the site offers an API: a spec or a catalog.
func (a *Artifacts) HasAPI() bool {
	return a.Spec != nil || a.Linkset != nil
}
