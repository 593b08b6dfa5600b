package gather

// The web scan's plan: the Site every gatherer and check knows, the keys of
// the web artifacts, the fetch helpers the gatherers share, and WebPlan,
// which lists every gatherer. The gatherers themselves live in one file per
// family, named like the file of their checks in engine/checks.

import (
	"net/url"

	"github.com/agentready/agentready/engine/fetch"
)

// Site is what every gatherer and check knows before any request.
type Site struct {
	Target *url.URL // the site root
	Origin string   // scheme://host[:port]
	// ScannerOrigin is the Origin header every request carried (CORS is judged against it).
	ScannerOrigin string
	// ReadPages is how many pages the read suite samples (0: the default,
	// DefaultReadPages; negative: none).
	ReadPages int
}

// The artifacts of a web scan, one key each. Every document is parsed once,
// by the gatherer that fetched it (in the file of its family: page.go,
// robots.go, discovery.go, openapi.go, mcp.go, feed.go, auth.go,
// payments.go); checks only judge.

// Keys of the web scan's artifacts.
var (
	Home              = NewKey[*HomePage]("home")
	HomeMarkdown      = NewKey[*fetch.Response]("home-markdown")
	Revalidated       = NewKey[*fetch.Response]("home-revalidated")
	HTTPTwin          = NewKey[*fetch.Response]("http-twin")
	Robots            = NewKey[*RobotsTxt]("robots")
	Sitemap           = NewKey[*SitemapDoc]("sitemap")
	Llms              = NewKey[*LlmsTxt]("llms")
	AgentCard         = NewKey[*AgentCardDoc]("agent-card")
	Catalog           = NewKey[*APICatalog]("api-catalog")
	CatalogHead       = NewKey[*fetch.Response]("api-catalog-head") // nil unless GET found a catalog
	Spec              = NewKey[*OpenAPIDoc]("openapi")
	SkillFile         = NewKey[*SkillFileDoc]("skill-file")
	AISite            = NewKey[*AISiteDoc]("ai-site")
	SkillsIndex       = NewKey[*SkillsIndexDoc]("skills-index")
	MCPCard           = NewKey[*MCPCardDoc]("mcp-card")
	Feed              = NewKey[*FeedDoc]("feed")
	Docs              = NewKey[*DocsPage]("docs")
	ErrorProbe        = NewKey[*ErrorProbeDoc]("error-probe")
	Scripts           = NewKey[[]*fetch.Response]("scripts")
	OpenIDConfig      = NewKey[*AuthMetadata]("openid-configuration")
	OAuthServer       = NewKey[*AuthMetadata]("oauth-authorization-server")
	ProtectedResource = NewKey[*ProtectedResourceDoc]("oauth-protected-resource")
	X402              = NewKey[*X402Doc]("x402")
	// Responses is every response of the scan in request order, for checks
	// that judge headers across documents; it requires every artifact that
	// makes requests.
	Responses = NewKey[[]*fetch.Response]("responses")
	// Payments is every 402 of the scan, parsed (it requires Responses).
	Payments = NewKey[[]PaymentAnswer]("payments")

	// The first candidate of a search that later needs the homepage is asked
	// for at once, in the first round, by a gatherer of its own.
	specDefault = NewKey[*fetch.Response]("openapi-first-path")
	mcpDefault  = NewKey[*fetch.Response]("mcp-card-first-path")
)

func fetchDoc(c *Ctx, path, accept string) *fetch.Response {
	return c.Fetch(fetch.Request{URL: c.URL(path), Accept: accept})
}

// orFallback asks for fallback when first was not found, and keeps whichever was.
func orFallback(c *Ctx, first *fetch.Response, fallback, accept string) (*fetch.Response, bool) {
	if first.Found() {
		return first, false
	}
	if r := c.Fetch(fetch.Request{URL: c.URL(fallback), Accept: accept, Round: After(first)}); r.Found() {
		return r, true
	}
	return first, false
}

func baseOf(r *fetch.Response) *url.URL {
	u, _ := url.Parse(r.FinalURL)
	return u
}

// WebPlan is the web scan's gatherers.
var WebPlan = func() *Plan {
	gs := []*Gatherer{homeGatherer, markdownGatherer, revalidateGatherer, httpTwinGatherer, robotsGatherer, sitemapGatherer,
		llmsGatherer, agentCardGatherer, catalogGatherer, catalogHeadGatherer, specDefaultGatherer, specGatherer, mcpDefaultGatherer, skillFileGatherer, aiSiteGatherer, skillsIndexGatherer,
		authMetadata(OpenIDConfig, "/.well-known/openid-configuration"), authMetadata(OAuthServer, "/.well-known/oauth-authorization-server"),
		protectedResourceGatherer, x402Gatherer, mcpGatherer, feedGatherer, docsGatherer, errorProbeGatherer, scriptsGatherer}
	gs = append(gs, signalGatherers...)
	// The read suite's requests are its own: Responses, which the 48
	// checks judge headers across, does not wait for them or hold them.
	read := []*Gatherer{readGatherer, declarationGatherer}
	var all []AnyKey
	for _, g := range gs {
		all = append(all, NewKey[any](g.Name))
	}
	gs = append(gs, &Gatherer{Name: Responses.Name(), Doc: "Every response of the scan in request order, but the signal documents'.", Requires: all,
		run: func(c *Ctx) (any, error) { return withoutSignals(c, c.sess.Responses()), nil }}, paymentsGatherer)
	return MustPlan(append(gs, read...)...)
}()
