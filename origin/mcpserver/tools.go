package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentready/agentready/edge/x402"
	"github.com/agentready/agentready/engine/advice"
	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/parse/agentcard"
	"github.com/agentready/agentready/engine/parse/llmstxt"
	"github.com/agentready/agentready/engine/profile"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/origin/payment"
)

func ptr[T any](v T) *T { return &v }

// Annotations: every tool only reads; those that fetch sites touch the open world.
func readOnly(openWorld bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(openWorld), DestructiveHint: ptr(false)}
}

// ---- inputs and outputs ------------------------------------------------------

type URLInput struct {
	URL string `json:"url" jsonschema:"The site to scan: a domain such as example.com (scanned over https) or a full http(s) URL; only the site root is scanned."`
}

type ScanInput struct {
	URL         string      `json:"url" jsonschema:"The site to scan: a domain such as example.com (scanned over https) or a full http(s) URL; only the site root is scanned."`
	OnlyFailing bool        `json:"only_failing,omitempty" jsonschema:"When true, return only checks that did not pass (fail or partial), to save tokens."`
	Profile     ProfileName `json:"profile,omitempty"`
}

// ProfiledInput is a site and, optionally, the kind of site to judge it
// as (deep_scan, get_recommendations).
type ProfiledInput struct {
	URL     string      `json:"url" jsonschema:"The site to scan: a domain such as example.com (scanned over https) or a full http(s) URL; only the site root is scanned."`
	Profile ProfileName `json:"profile,omitempty"`
}

// ProfileName is the kind of site a report is judged as; its schema
// (inputOptions) is the enum of report.Profiles.
type ProfileName string

// check refuses a profile the scanner does not know (the empty one is the
// site's own kind), before anything is scanned or paid.
func (p ProfileName) check() error {
	if p != "" && !profile.Known(string(p)) {
		return &ToolError{profile.ErrUnknown{}.Error()}
	}
	return nil
}

// profileDescription describes the profile argument of the tools that
// take one.
const profileDescription = "Optional: judge the site as this kind of site (content, docs, api, commerce or application) instead of the kind it declares in /.well-known/agentready.json or the kind detected. The checks that do not apply to that kind are counted as not applicable in the profile block (profile.id, profile.source \"requested\", its score) and come last among the recommendations; checks and score stay as scanned, and no new scan is made."

// judged is r judged as profile p (r itself when p is empty): a copy, so
// the cached result the scan path shares is never changed.
func judged(r *report.Result, p ProfileName) (*report.Result, error) {
	jr, err := profile.As(r, string(p))
	if err != nil {
		return nil, &ToolError{err.Error()}
	}
	return jr, nil
}

type ScanOutput struct {
	URL          string                 `json:"url" jsonschema:"The scanned site root."`
	Timestamp    time.Time              `json:"timestamp" jsonschema:"When the scan ran (an earlier time means a cached result)."`
	CurrentLevel int                    `json:"currentLevel" jsonschema:"Highest level reached, 0 (Not Ready) to 3 (Optimized)."`
	LevelName    string                 `json:"levelName" jsonschema:"Name of the current level."`
	Score        report.Score           `json:"score" jsonschema:"Score summary: value 0-100, grade A-F, counts, and the level-4 indexable sub-score."`
	Levels       []report.LevelProgress `json:"levels" jsonschema:"Progress per level."`
	Checks       []report.Check         `json:"checks" jsonschema:"Per-check results (all 48, or only the failing ones)."`
	Signals      []report.Signal        `json:"signals" jsonschema:"Identity and commerce signals (webbotauth, ucp, acp, ap2, mpp): status pass, partial or na, never fail; not scored, so they never change score, level or badge. Always all five, whatever only_failing says."`
	Read         *report.Read           `json:"read,omitempty" jsonschema:"The read suite: a sample of the site's pages (from llms.txt and the sitemap), read one by one as an agent would, with its read checks R.1, R.2… (category Readable) and the suite's own score; not in the 48-check score. Absent in a report made before it existed."`
	Profile      *report.Profile        `json:"profile,omitempty" jsonschema:"The kind of site the report is judged as (content, docs, api, commerce or application), where that came from (detected, declared or requested), the evidence, the checks that do not apply with their reasons, the score as that kind and as each other kind. Never changes checks or score."`
	Interactions []report.Interaction   `json:"interactions,omitempty" jsonschema:"Findings that only show across checks (such as markdown twins nothing points to), each with its fix."`
}

// DeepScanOutput is the deep scan's report: the full report plus its deep block.
type DeepScanOutput struct {
	URL          string                 `json:"url" jsonschema:"The scanned site root."`
	Timestamp    time.Time              `json:"timestamp" jsonschema:"When the scan ran."`
	CurrentLevel int                    `json:"currentLevel" jsonschema:"Highest level reached, 0 (Not Ready) to 3 (Optimized)."`
	Score        report.Score           `json:"score" jsonschema:"Score summary: value 0-100, grade A-F, counts, and the level-4 indexable sub-score."`
	Levels       []report.LevelProgress `json:"levels" jsonschema:"Progress per level."`
	Checks       []report.Check         `json:"checks" jsonschema:"All 48 per-check results."`
	Signals      []report.Signal        `json:"signals" jsonschema:"Identity and commerce signals (webbotauth, ucp, acp, ap2, mpp): pass, partial or na; not scored."`
	Rendered     *report.Rendered       `json:"rendered,omitempty" jsonschema:"The homepage after its scripts ran, when the service has a browser."`
	Deep         *report.Deep           `json:"deep" jsonschema:"What the deep scan tried (live MCP, OAuth, API and A2A probes, several pages) and what broke; not scored."`
	Read         *report.Read           `json:"read,omitempty" jsonschema:"The read suite: sampled pages read one by one, its read checks (R.1…) and its own score; not in the 48-check score."`
	Profile      *report.Profile        `json:"profile,omitempty" jsonschema:"The kind of site the report is judged as, why, and what that changes (checks that do not apply, the score as each kind). Never changes checks or score."`
	Interactions []report.Interaction   `json:"interactions,omitempty" jsonschema:"Findings that only show across checks, each with its fix."`
}

type DefinitionsInput struct {
	Level int `json:"level,omitempty" jsonschema:"Only checks of this level, 1-5 (5 = Agent-Native, repository checks run by the command-line tool); 0 or absent for all 58."`
}

type DefinitionsOutput struct {
	Checks []checks.Definition `json:"checks" jsonschema:"Check definitions in order."`
	// Signals are listed when no level is asked for: they belong to none.
	Signals []*checks.Signal `json:"signals,omitempty" jsonschema:"The identity and commerce signals every web scan reports beside the checks (not scored; pass, partial or na), when no level was given."`
}

type CheckInput struct {
	ID  string `json:"id" jsonschema:"Check id in level.sequence form, such as 1.1 or 3.7, or a signal id: webbotauth, ucp, acp, ap2 or mpp."`
	URL string `json:"url,omitempty" jsonschema:"Optional site; when given, the check's current result for that site is included (costs one scan)."`
}

type CheckOutput struct {
	Definition checks.Definition `json:"definition" jsonschema:"What the check looks at, how it decides and how to fix it (for a signal: its id, name, looksFor, rule and fix, level 0)."`
	Result     *report.Check     `json:"result,omitempty" jsonschema:"The check's result for the given site, when a url was given."`
	// A signal is not a check: its definition and result have their own
	// shapes, so the check fields stay what check clients expect.
	Signal       *checks.Signal `json:"signal,omitempty" jsonschema:"When the id names an identity or commerce signal: its definition, with its group."`
	SignalResult *report.Signal `json:"signalResult,omitempty" jsonschema:"The signal's result for the given site, when the id names a signal and a url was given."`
}

type ShowcaseInput struct {
	Limit  int    `json:"limit,omitempty" jsonschema:"Sites per page, 1-50 (default 10)."`
	Cursor string `json:"cursor,omitempty" jsonschema:"The nextCursor of a previous page; absent for the first page."`
}

type ShowcaseSite struct {
	URL       string    `json:"url" jsonschema:"Site root."`
	Score     int       `json:"score" jsonschema:"Score 0-100."`
	Grade     string    `json:"grade" jsonschema:"Grade A-F."`
	Level     int       `json:"level" jsonschema:"Current level 0-3."`
	LevelName string    `json:"levelName" jsonschema:"Name of the level."`
	ScannedAt time.Time `json:"scannedAt" jsonschema:"When it was last scanned."`
}

type ShowcaseOutput struct {
	Sites      []ShowcaseSite `json:"sites" jsonschema:"Best-scoring sites from the scan history, highest first."`
	Total      int            `json:"total" jsonschema:"How many sites the history ranks."`
	Curated    []string       `json:"curated" jsonschema:"Sites the operator features."`
	NextCursor string         `json:"nextCursor,omitempty" jsonschema:"Pass as cursor for the next page; absent on the last page."`
}

type CompareInput struct {
	URLs []string `json:"urls" jsonschema:"Two to five sites to compare (domains or http(s) URLs)."`
}

type SiteSummary struct {
	URL       string `json:"url" jsonschema:"Site root (as given when it could not be scanned)."`
	Score     int    `json:"score" jsonschema:"Score 0-100."`
	Grade     string `json:"grade" jsonschema:"Grade A-F."`
	Level     int    `json:"level" jsonschema:"Current level 0-3."`
	LevelName string `json:"levelName" jsonschema:"Name of the level."`
	Error     string `json:"error,omitempty" jsonschema:"Why this site could not be scanned."`
}

type Difference struct {
	ID       string            `json:"id" jsonschema:"Check id."`
	Name     string            `json:"name" jsonschema:"Check name."`
	Statuses map[string]string `json:"statuses" jsonschema:"Status per site url."`
}

type CompareOutput struct {
	Sites       []SiteSummary `json:"sites" jsonschema:"One summary per site, in the order given."`
	Differences []Difference  `json:"differences" jsonschema:"Checks whose status differs between the scanned sites."`
}

// Recommendation is advice.Step with its schema's descriptions: the fields
// are the same, in the same order, so renderPlan converts one into the other
// and the compiler keeps them so.
type Recommendation struct {
	Rank     int           `json:"rank" jsonschema:"Priority, 1 first."`
	ID       string        `json:"id" jsonschema:"Check id."`
	Name     string        `json:"name" jsonschema:"Check name."`
	Level    int           `json:"level" jsonschema:"Level of the check."`
	Status   report.Status `json:"status" jsonschema:"Current status: fail or partial."`
	Effort   checks.Effort `json:"effort" jsonschema:"How much work the fix usually is: small (a static file, or a line in robots.txt or the page head), medium (a discovery document, a response header or server configuration) or large (a change to the application, its API, its content or its code)."`
	Blocking bool          `json:"blocking" jsonschema:"True when the check is in a level that targetLevel needs more passes in: fixing it counts toward the next level. Blocking fixes come first."`
	Why      string        `json:"why" jsonschema:"What the scan found."`
	Fix      string        `json:"fix" jsonschema:"What to do."`
	Snippet  string        `json:"snippet,omitempty" jsonschema:"A starter file or stanza to publish, filled in for the site, when one applies."`
	// NotApplicable: the check does not apply to the report's profile.
	NotApplicable string `json:"notApplicable,omitempty" jsonschema:"Why the check does not apply to the kind of site the report is judged as (its profile, or a waiver); such recommendations come last and never count toward the next level."`
}

// LevelNeed is advice.Need with its schema's descriptions.
type LevelNeed struct {
	Level  int `json:"level" jsonschema:"A level, 1-3."`
	Passes int `json:"passes" jsonschema:"How many more of its checks must pass."`
}

type RecommendationsOutput struct {
	URL             string           `json:"url" jsonschema:"The scanned site root."`
	CurrentLevel    int              `json:"currentLevel" jsonschema:"Current level 0-3."`
	TargetLevel     int              `json:"targetLevel" jsonschema:"The level the fewest further passes reach: usually currentLevel+1, higher when the score lets a strong level 2 lift a weaker level 1; 0 when level 3 is reached or no fix reaches another level."`
	PassesNeeded    int              `json:"passesNeeded" jsonschema:"How many more checks must pass to reach targetLevel (0 when targetLevel is 0)."`
	Needs           []LevelNeed      `json:"needs" jsonschema:"Where those passes are needed: how many more checks of each level must pass."`
	Recommendations []Recommendation `json:"recommendations" jsonschema:"Every fail and partial check, in the order to fix them: the blocking ones first, then by level, effort (small first) and fails before partials; the checks that do not apply to the report's profile last."`
}

type BatchInput struct {
	URLs []string `json:"urls" jsonschema:"One to ten sites to scan."`
}

type BatchOutput struct {
	Results []SiteSummary `json:"results" jsonschema:"One summary per site, in the order given; failed sites carry error."`
}

type DocInput struct {
	Content string `json:"content,omitempty" jsonschema:"The document text to validate; give either content or url."`
	URL     string `json:"url,omitempty" jsonschema:"Where to fetch the document: a site (its well-known path is used) or the document's own URL; give either content or url."`
}

type LlmsOutput struct {
	Source string          `json:"source" jsonschema:"inline, or the URL the file was fetched from."`
	Report *llmstxt.Report `json:"report" jsonschema:"Validation result with line-numbered findings."`
}

type CardOutput struct {
	Source string            `json:"source" jsonschema:"inline, or the URL the card was fetched from."`
	Report *agentcard.Report `json:"report" jsonschema:"Validation result against A2A v1.0 and v0.3."`
}

type BadgeOutput struct {
	URL      string `json:"url" jsonschema:"The site root."`
	BadgeURL string `json:"badgeUrl" jsonschema:"SVG badge URL, always current."`
	Markdown string `json:"markdown" jsonschema:"Markdown embed for a README."`
	HTML     string `json:"html" jsonschema:"HTML embed."`
	Score    int    `json:"score" jsonschema:"Current score 0-100."`
	Level    int    `json:"level" jsonschema:"Current level 0-3."`
}

// ---- registration --------------------------------------------------------------

func (s *Server) register() error {
	regs := []func() error{
		func() error {
			return addTool(s, &mcp.Tool{Name: "scan_url", Title: "Scan a website",
				Description: "Scan one website for AI-agent readiness: runs the 48 web checks (llms.txt, robots.txt AI rules, OpenAPI, MCP server card, OAuth metadata, API catalog, markdown negotiation, structured data and more) and returns the score, the level reached and every check's verdict with a recommendation, plus the identity and commerce signals (Web Bot Auth key directory, UCP, ACP, AP2, MPP; pass, partial or na, not scored). Use this first for any question about a site's agent readiness. Results are cached for a few minutes. Costs one scan from the daily allowance.",
				Annotations: readOnly(true)}, s.scanURL)
		},
		func() error {
			return addTool(s, &mcp.Tool{Name: "get_check_definitions", Title: "List the checks",
				Description: "List the 58 checks the scanner knows (48 web checks in levels 1-4, 10 repository checks in level 5), each with what it looks at, how pass/partial/fail/na are decided, and how to fix it; without a level, also the 5 identity and commerce signals (webbotauth, ucp, acp, ap2, mpp), which are reported but not scored. Use it to explain the method, not to learn about a particular site. Free.",
				Annotations: readOnly(false)}, s.checkDefinitions)
		},
		func() error {
			return addTool(s, &mcp.Tool{Name: "get_check", Title: "Explain one check",
				Description: "Explain one check by id (such as 1.1 or 3.7), or one identity or commerce signal (webbotauth, ucp, acp, ap2, mpp): its rule and fix, and, if a url is given, its current result for the site. Use it to answer 'why did check X fail on my site?'. With a url it costs one scan.",
				Annotations: readOnly(true)}, s.getCheck)
		},
		func() error {
			return addTool(s, &mcp.Tool{Name: "get_showcase", Title: "Best-scoring sites",
				Description: "List the best-scoring sites from the scanner's history (highest score first, with grade, level and when scanned) plus sites the operator features; paginated with a cursor. Use it to find examples of agent-ready sites to learn from. Free.",
				Annotations: readOnly(false)}, s.showcase)
		},
		func() error {
			return addTool(s, &mcp.Tool{Name: "compare_sites", Title: "Compare sites",
				Description: "Scan two to five websites concurrently and compare them side by side: level, score and grade per site, and every check whose verdict differs between them. Use it for competitor comparisons. Costs one scan per site.",
				Annotations: readOnly(true)}, s.compare)
		},
		func() error {
			return addTool(s, &mcp.Tool{Name: "get_recommendations", Title: "Prioritised fixes",
				Description: "Scan a website and return every fix it needs, in the order that raises its level fastest: first the checks of the levels the next level needs more passes in (how many, per level), cheap fixes before large ones, each with what the scan found, what to do, the effort and, where one applies, a starter file or stanza to publish filled in for the site (llms.txt, robots.txt AI rules, API catalog, agent card, MCP server card, JSON-LD); the checks that do not apply to the site's kind (its own, or the profile given) come last with the reason. Use it when a site owner asks what to do next. Costs one scan.",
				Annotations: readOnly(true)}, s.recommendations)
		},
		func() error {
			return addTool(s, &mcp.Tool{Name: "deep_scan", Title: "Paid deep scan (x402)",
				Description: "The paid deep scan, 0.10 USDC on Solana over x402: the full report plus a deep block in which the site's declarations are used the way an agent would (live MCP connection and tool schemas, OAuth metadata and challenge, API servers and documented errors, the A2A agent, up to 20 pages), each with what broke. Without a payment it answers the x402 payment requirements (an error result whose structured content is the v2 PaymentRequired object); send the payment in _meta[\"x402/payment\"] (a PaymentPayload) and the result carries the report and _meta[\"x402/payment-response\"] (the settlement). The payment is settled only when a report is produced; the same payment sent again returns the same report. Use scan_url for the free scan.",
				Annotations: readOnly(true)}, s.deepScan)
		},
		func() error {
			return addTool(s, &mcp.Tool{Name: "scan_batch", Title: "Scan several sites",
				Description: "Scan one to ten websites with bounded concurrency and return a summary per site (score, grade, level) with a per-site error when one cannot be scanned. Use it for portfolios or lists of sites; use scan_url for the full per-check report of one site. Costs one scan per site, taken up front.",
				Annotations: readOnly(true)}, s.batch)
		},
		func() error {
			return addTool(s, &mcp.Tool{Name: "validate_llms_txt", Title: "Validate llms.txt",
				Description: "Validate an llms.txt file against the llmstxt.org format (H1 title first, optional blockquote summary, H2 sections of markdown links) and return line-numbered errors, warnings and notes. Give the text as content, or a url: a site (its /llms.txt is fetched) or the file's own URL. The same validator grades check 1.1. Free.",
				Annotations: readOnly(true)}, s.validateLlms)
		},
		func() error {
			return addTool(s, &mcp.Tool{Name: "get_badge", Title: "Badge embed",
				Description: "Return the SVG badge URL of a website's agent-readiness score and ready-to-paste Markdown and HTML embed snippets, with the current score and level. Use it when a site owner wants to show their score in a README or page. Costs one scan (usually answered from the cache).",
				Annotations: readOnly(true)}, s.badge)
		},
		func() error {
			return addTool(s, &mcp.Tool{Name: "validate_agent_card", Title: "Validate an A2A agent card",
				Description: "Validate an A2A Agent Card against the v1.0 and v0.3 shapes and return which version it satisfies, the required members it misses and precise problems in its skills and interfaces. Give the JSON as content, or a url: a site (its /.well-known/agent-card.json is fetched) or the card's own URL. The same validator grades check 1.2. Free.",
				Annotations: readOnly(true)}, s.validateCard)
		},
	}
	for _, r := range regs {
		if err := r(); err != nil {
			return err
		}
	}
	return nil
}

// ---- handlers ----------------------------------------------------------------

func (s *Server) scanned(ctx context.Context, req *mcp.CallToolRequest, raw string) (*report.Result, *mcp.CallToolResult, error) {
	u, err := s.site(raw)
	if err != nil {
		return nil, nil, err
	}
	if pay, err := s.charge(ctx, req, u); pay != nil || err != nil {
		return nil, pay, err
	}
	r, err := s.d.Scan(ctx, u)
	if err != nil {
		return nil, nil, scanErr(u, err)
	}
	return r, nil, nil
}

func (s *Server) scanURL(ctx context.Context, req *mcp.CallToolRequest, in ScanInput) (*mcp.CallToolResult, *ScanOutput, error) {
	if err := in.Profile.check(); err != nil { // refused before it costs a scan
		return nil, nil, err
	}
	r, pay, err := s.scanned(ctx, req, in.URL)
	if pay != nil || err != nil {
		return pay, nil, err
	}
	if r, err = judged(r, in.Profile); err != nil {
		return nil, nil, err
	}
	out := &ScanOutput{URL: r.URL, Timestamp: r.Timestamp, CurrentLevel: r.CurrentLevel, LevelName: report.LevelName(r.CurrentLevel), Score: r.Score, Levels: r.Levels, Checks: r.Checks, Signals: r.Signals,
		Read: r.Read, Profile: r.Profile, Interactions: r.Interactions}
	if out.Signals == nil { // a result cached before signals existed
		out.Signals = []report.Signal{}
	}
	if in.OnlyFailing {
		out.Checks = nil
		for _, c := range r.Checks {
			if c.Status == report.Fail || c.Status == report.Partial {
				out.Checks = append(out.Checks, c)
			}
		}
		if out.Checks == nil {
			out.Checks = []report.Check{}
		}
	}
	return nil, out, nil
}

func (s *Server) checkDefinitions(_ context.Context, _ *mcp.CallToolRequest, in DefinitionsInput) (*mcp.CallToolResult, *DefinitionsOutput, error) {
	if in.Level < 0 || in.Level > 5 {
		return nil, nil, &ToolError{"level must be 1-5, or omitted for all checks"}
	}
	out := &DefinitionsOutput{Checks: []checks.Definition{}}
	for _, c := range checks.All() {
		if in.Level == 0 || c.Level == in.Level {
			out.Checks = append(out.Checks, c.Definition)
		}
	}
	if in.Level == 0 {
		out.Signals = checks.Signals()
	}
	return nil, out, nil
}

func (s *Server) getCheck(ctx context.Context, req *mcp.CallToolRequest, in CheckInput) (*mcp.CallToolResult, *CheckOutput, error) {
	if sg, ok := checks.SignalByID(strings.ToLower(strings.TrimSpace(in.ID))); ok {
		return s.getSignal(ctx, req, sg, in.URL)
	}
	c, ok := checks.ByID(strings.TrimSpace(in.ID))
	if !ok {
		return nil, nil, &ToolError{fmt.Sprintf("no check %q: ids run 1.1-1.18, 2.1-2.11, 3.1-3.7, 4.1-4.12, 5.1-5.10, and the signals are webbotauth, ucp, acp, ap2 and mpp (see get_check_definitions)", in.ID)}
	}
	out := &CheckOutput{Definition: c.Definition}
	if in.URL == "" {
		return nil, out, nil
	}
	if !c.WebScan {
		return nil, nil, &ToolError{fmt.Sprintf("check %s runs over a repository with the command-line tool (agentready repo), not over a website", c.ID)}
	}
	r, pay, err := s.scanned(ctx, req, in.URL)
	if pay != nil || err != nil {
		return pay, nil, err
	}
	res, _ := r.Check(c.ID)
	out.Result = &res
	return nil, out, nil
}

// getSignal explains an identity or commerce signal, and with a url gives
// its result from the site's (usually cached) scan.
func (s *Server) getSignal(ctx context.Context, req *mcp.CallToolRequest, sg *checks.Signal, url string) (*mcp.CallToolResult, *CheckOutput, error) {
	out := &CheckOutput{Signal: sg, Definition: checks.Definition{ID: sg.ID, Name: sg.Name, Category: "Identity and commerce signals (not scored)",
		LooksFor: sg.LooksFor, Rule: sg.Rule, Fix: sg.Fix, WebScan: true}}
	if url == "" {
		return nil, out, nil
	}
	r, pay, err := s.scanned(ctx, req, url)
	if pay != nil || err != nil {
		return pay, nil, err
	}
	if res, ok := r.Signal(sg.ID); ok {
		out.SignalResult = &res
	}
	return nil, out, nil
}

func (s *Server) showcase(ctx context.Context, _ *mcp.CallToolRequest, in ShowcaseInput) (*mcp.CallToolResult, *ShowcaseOutput, error) {
	limit := in.Limit
	if limit == 0 {
		limit = 10
	}
	if limit < 1 || limit > 50 {
		return nil, nil, &ToolError{"limit must be 1-50"}
	}
	offset := 0
	if in.Cursor != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(in.Cursor, "o:"))
		if err != nil || n < 0 || !strings.HasPrefix(in.Cursor, "o:") {
			return nil, nil, &ToolError{"cursor is not one this tool returned; omit it for the first page"}
		}
		offset = n
	}
	out := &ShowcaseOutput{Sites: []ShowcaseSite{}, Curated: append([]string{}, s.d.Curated...)}
	if s.d.History != nil {
		top, total, err := s.d.History.Top(ctx, offset, limit)
		if err != nil {
			return nil, nil, fmt.Errorf("the scan history does not answer: %w", err)
		}
		out.Total = total
		for _, e := range top {
			out.Sites = append(out.Sites, ShowcaseSite{URL: e.URL, Score: e.Score, Grade: e.Grade, Level: e.Level, LevelName: e.LevelName, ScannedAt: e.ScannedAt})
		}
		if offset+len(top) < total {
			out.NextCursor = "o:" + strconv.Itoa(offset+len(top))
		}
	}
	return nil, out, nil
}

func summary(u string, r *report.Result) SiteSummary {
	return SiteSummary{URL: r.URL, Score: r.Score.Value, Grade: r.Score.Grade, Level: r.CurrentLevel, LevelName: report.LevelName(r.CurrentLevel)}
}

// scanMany scans urls with at most 4 at a time; failures are per site.
func (s *Server) scanMany(ctx context.Context, urls []string) ([]SiteSummary, []*report.Result) {
	sums := make([]SiteSummary, len(urls))
	results := make([]*report.Result, len(urls))
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, raw := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			u, err := s.site(raw)
			if err == nil {
				var r *report.Result
				if r, err = s.d.Scan(ctx, u); err == nil {
					sums[i], results[i] = summary(u, r), r
					return
				}
				err = scanErr(u, err)
			}
			sums[i] = SiteSummary{URL: raw, Error: err.Error()}
		}()
	}
	wg.Wait()
	return sums, results
}

func (s *Server) compare(ctx context.Context, req *mcp.CallToolRequest, in CompareInput) (*mcp.CallToolResult, *CompareOutput, error) {
	if len(in.URLs) < 2 || len(in.URLs) > 5 {
		return nil, nil, &ToolError{fmt.Sprintf("compare_sites takes 2 to 5 urls (got %d)", len(in.URLs))}
	}
	if pay, err := s.charge(ctx, req, in.URLs...); pay != nil || err != nil {
		return pay, nil, err
	}
	sums, results := s.scanMany(ctx, in.URLs)
	out := &CompareOutput{Sites: sums, Differences: []Difference{}}
	for _, c := range checks.Web() {
		d := Difference{ID: c.ID, Name: c.Name, Statuses: map[string]string{}}
		seen := map[report.Status]bool{}
		for _, r := range results {
			if r == nil {
				continue
			}
			ch, _ := r.Check(c.ID)
			d.Statuses[r.URL] = string(ch.Status)
			seen[ch.Status] = true
		}
		if len(seen) > 1 {
			out.Differences = append(out.Differences, d)
		}
	}
	return nil, out, nil
}

// recommendations is the plan of the site judged as its own kind, or as
// the profile asked for: what does not apply to that kind comes last.
func (s *Server) recommendations(ctx context.Context, req *mcp.CallToolRequest, in ProfiledInput) (*mcp.CallToolResult, *RecommendationsOutput, error) {
	if err := in.Profile.check(); err != nil { // refused before it costs a scan
		return nil, nil, err
	}
	r, pay, err := s.scanned(ctx, req, in.URL)
	if pay != nil || err != nil {
		return pay, nil, err
	}
	if r, err = judged(r, in.Profile); err != nil {
		return nil, nil, err
	}
	return nil, renderPlan(advice.For(r)), nil
}

// renderPlan is the engine's plan in the tool's schema; the order, the
// level gating and the starters are all the engine's.
func renderPlan(p advice.Plan) *RecommendationsOutput {
	out := &RecommendationsOutput{URL: p.URL, CurrentLevel: p.CurrentLevel, TargetLevel: p.TargetLevel, PassesNeeded: p.PassesNeeded,
		Needs: make([]LevelNeed, len(p.Needs)), Recommendations: make([]Recommendation, len(p.Steps))}
	for i, n := range p.Needs {
		out.Needs[i] = LevelNeed(n)
	}
	for i, st := range p.Steps {
		out.Recommendations[i] = Recommendation(st)
	}
	return out
}

// deepScan sells the deep scan over the x402 MCP transport: without a
// payment in _meta["x402/payment"] it answers the payment requirements (an
// error result whose structured content is the v2 PaymentRequired); with
// one, the HTTP gateway's logic verifies, scans and settles, and the result
// carries the deep report and _meta["x402/payment-response"].
func (s *Server) deepScan(ctx context.Context, req *mcp.CallToolRequest, in ProfiledInput) (*mcp.CallToolResult, *DeepScanOutput, error) {
	u, err := s.site(in.URL)
	if err != nil {
		return nil, nil, err
	}
	if err := in.Profile.check(); err != nil { // refused before anything is paid
		return nil, nil, err
	}
	if s.d.Gateway == nil {
		return nil, nil, &ToolError{"the paid deep scan is not available on this server"}
	}
	var pay DeepScanPayment
	meta := req.Params.GetMeta()
	if v, ok := meta["x402/payment"]; ok && v != nil {
		pay.Payload, _ = json.Marshal(v)
	}
	pay.Receipt, _ = meta[MetaReceipt].(string)
	pay.IdempotencyKey, _ = meta[MetaIdempotencyKey].(string)
	status, header, body := s.d.Gateway(ctx, u, baseOf(req), pay)
	if s.d.Audit != nil {
		outcome := fmt.Sprint(status)
		if header[payment.HeaderReceipt] != "" {
			outcome += " settled" // this call paid: the audit log matches the facilitator's settlements
		}
		s.d.Audit(ctx, callerOf(req), req.Params.Name, []string{u}, outcome)
	}
	switch {
	case status == http.StatusPaymentRequired:
		// The v2 PaymentRequired, as the transport spec puts it: the same
		// object the HTTP gateway sends base64 in PAYMENT-REQUIRED.
		raw, err := base64.StdEncoding.DecodeString(header[x402.HeaderRequired])
		if err != nil {
			return nil, nil, &ToolError{"the gateway's payment requirements could not be read"}
		}
		var pr map[string]any
		if json.Unmarshal(raw, &pr) == nil {
			var refusal struct {
				Message string `json:"message"`
			}
			_ = json.Unmarshal(body, &refusal)
			if refusal.Message != "" {
				pr["error"] = refusal.Message
			}
			raw, _ = json.Marshal(pr)
		}
		return &mcp.CallToolResult{IsError: true, StructuredContent: json.RawMessage(raw), Content: []mcp.Content{&mcp.TextContent{Text: string(raw)}}}, nil, nil
	case status != http.StatusOK:
		var e struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(body, &e)
		if e.Message == "" {
			e.Message = fmt.Sprintf("the deep scan failed (HTTP %d)", status)
		}
		return nil, nil, &ToolError{e.Message}
	}
	var r report.Result
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, nil, &ToolError{"the deep report could not be decoded"}
	}
	paid := mcp.Meta{}
	for _, h := range []string{x402.HeaderResponse, x402.HeaderResponseV1} {
		if v := header[h]; v != "" {
			if raw, err := base64.StdEncoding.DecodeString(v); err == nil {
				var settled map[string]any
				if json.Unmarshal(raw, &settled) == nil {
					paid["x402/payment-response"] = settled
				}
			}
		}
	}
	if receipt := header[payment.HeaderReceipt]; receipt != "" {
		paid[MetaReceipt] = receipt
	}
	out := &mcp.CallToolResult{}
	if len(paid) > 0 {
		out.Meta = paid
	}
	jr, err := judged(&r, in.Profile)
	if err != nil {
		return nil, nil, err
	}
	return out, &DeepScanOutput{URL: jr.URL, Timestamp: jr.Timestamp, CurrentLevel: jr.CurrentLevel, Score: jr.Score, Levels: jr.Levels,
		Checks: jr.Checks, Signals: jr.Signals, Rendered: jr.Rendered, Deep: jr.Deep, Read: jr.Read, Profile: jr.Profile, Interactions: jr.Interactions}, nil
}

func (s *Server) batch(ctx context.Context, req *mcp.CallToolRequest, in BatchInput) (*mcp.CallToolResult, *BatchOutput, error) {
	if len(in.URLs) < 1 || len(in.URLs) > 10 {
		return nil, nil, &ToolError{fmt.Sprintf("scan_batch takes 1 to 10 urls (got %d)", len(in.URLs))}
	}
	if pay, err := s.charge(ctx, req, in.URLs...); pay != nil || err != nil {
		return pay, nil, err
	}
	sums, _ := s.scanMany(ctx, in.URLs)
	return nil, &BatchOutput{Results: sums}, nil
}

// document resolves content-or-url input into text and its source.
func (s *Server) document(ctx context.Context, in DocInput, wellKnown, accept string) ([]byte, string, error) {
	switch {
	case in.Content != "" && in.URL != "":
		return nil, "", &ToolError{"give either content or url, not both"}
	case in.Content != "":
		if len(in.Content) > 2<<20 {
			return nil, "", &ToolError{"content is larger than 2 MiB"}
		}
		return []byte(in.Content), "inline", nil
	case in.URL == "":
		return nil, "", &ToolError{"give the document as content, or a url to fetch it from"}
	}
	if _, err := s.site(in.URL); err != nil {
		return nil, "", err
	}
	raw := strings.TrimSpace(in.URL)
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	target := docURL(raw, wellKnown)
	if u, err := url.Parse(target); err == nil {
		u.Fragment = ""
		target = u.String()
	}
	d, err := s.d.Fetch(ctx, target, accept)
	if err != nil {
		return nil, "", scanErr(target, err)
	}
	if d.Status < 200 || d.Status > 299 {
		return nil, "", &ToolError{fmt.Sprintf("%s answered %d; nothing to validate", target, d.Status)}
	}
	if d.Cut != "" { // the beginning of a document is not the document
		return nil, "", &ToolError{fmt.Sprintf("%s could not be read whole (%s); nothing to validate", target, d.Cut)}
	}
	return d.Body, d.URL, nil
}

func (s *Server) validateLlms(ctx context.Context, _ *mcp.CallToolRequest, in DocInput) (*mcp.CallToolResult, *LlmsOutput, error) {
	body, src, err := s.document(ctx, in, "/llms.txt", "text/plain,text/markdown;q=0.9")
	if err != nil {
		return nil, nil, err
	}
	var base *url.URL
	if src != "inline" {
		base, _ = url.Parse(src)
	}
	return nil, &LlmsOutput{Source: src, Report: llmstxt.Validate(body, base)}, nil
}

func (s *Server) validateCard(ctx context.Context, _ *mcp.CallToolRequest, in DocInput) (*mcp.CallToolResult, *CardOutput, error) {
	body, src, err := s.document(ctx, in, "/.well-known/agent-card.json", "application/json")
	if err != nil {
		return nil, nil, err
	}
	rep, err := agentcard.Validate(body)
	if err != nil {
		return nil, nil, &ToolError{"the agent card is " + err.Error()}
	}
	return nil, &CardOutput{Source: src, Report: rep}, nil
}

func (s *Server) badge(ctx context.Context, req *mcp.CallToolRequest, in URLInput) (*mcp.CallToolResult, *BadgeOutput, error) {
	r, pay, err := s.scanned(ctx, req, in.URL)
	if pay != nil || err != nil {
		return pay, nil, err
	}
	base := baseOf(req)
	img := base + "/api/badge?url=" + url.QueryEscape(r.URL)
	// The badge links to the report page: a person who clicks it gets the
	// report, not an event stream that a scan is charged for.
	link := base + "/report?url=" + url.QueryEscape(r.URL)
	alt := fmt.Sprintf("Agent readiness: %d/100, level %d %s", r.Score.Value, r.CurrentLevel, report.LevelName(r.CurrentLevel))
	return nil, &BadgeOutput{URL: r.URL, BadgeURL: img, Score: r.Score.Value, Level: r.CurrentLevel,
		Markdown: fmt.Sprintf("[![%s](%s)](%s)", alt, img, link),
		HTML:     fmt.Sprintf(`<a href="%s"><img src="%s" alt="%s"></a>`, htmlEscape(link), htmlEscape(img), htmlEscape(alt))}, nil
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
