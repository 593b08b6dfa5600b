package report

import (
	"fmt"
	"strings"
	"time"
)

// Status of a check.
type Status string

const (
	Pass    Status = "pass"
	Partial Status = "partial"
	Fail    Status = "fail"
	NA      Status = "na"
)

// Level describes one of the five levels.
type Level struct {
	Number      int    `json:"number"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Levels are the five levels of docs/check-rules.md, index = number-1.
var Levels = []Level{
	{1, "Discoverable", "Agents can find what the site offers."},
	{2, "Usable", "The API works for agents."},
	{3, "Optimized", "Agents spend few tokens and round trips."},
	{4, "Indexable", "AI search can crawl, index and ground answers in the site."},
	{5, "Agent-Native", "The codebase treats agents as first-class users."},
}

// LevelName names current-level values 0–3 as the score reports them.
func LevelName(n int) string {
	if n <= 0 || n > len(Levels) {
		return "Not Ready"
	}
	return Levels[n-1].Name
}

// Check is one check's result: the ten fields of service-spec.md §2.3.
type Check struct {
	ID             string  `json:"id"`
	Name           string  `json:"name"`
	Passed         bool    `json:"passed"`
	Status         Status  `json:"status"`
	Level          int     `json:"level"`
	Category       string  `json:"category"`
	Message        string  `json:"message"`
	Recommendation string  `json:"recommendation"`
	Details        Details `json:"details"`
	FoundAt        string  `json:"foundAt"`
}

// LevelProgress is one entry of levels[].
type LevelProgress struct {
	Level    Level `json:"level"`
	Passed   int   `json:"passed"`
	Failed   int   `json:"failed"` // fail and partial
	NA       int   `json:"na"`
	Total    int   `json:"total"`
	Complete bool  `json:"complete"`
}

// Tally counts outcomes.
type Tally struct {
	Value   int `json:"value"`
	Passed  int `json:"passed"`
	Partial int `json:"partial"`
	Failed  int `json:"failed"`
	NA      int `json:"na"`
	Total   int `json:"total"`
}

// Score is the top-level summary.
type Score struct {
	Value     int    `json:"value"`
	Grade     string `json:"grade"`
	Level     int    `json:"level"`
	LevelName string `json:"levelName"`
	Passed    int    `json:"passed"`
	Partial   int    `json:"partial"`
	Failed    int    `json:"failed"`
	NA        int    `json:"na"`
	Total     int    `json:"total"`
	Indexable Tally  `json:"indexable"`
}

// Result is a full scan report (ScanResult).
type Result struct {
	URL          string          `json:"url"`
	Timestamp    time.Time       `json:"timestamp"`
	CurrentLevel int             `json:"currentLevel"`
	Score        Score           `json:"score"`
	Levels       []LevelProgress `json:"levels"`
	Checks       []Check         `json:"checks"`
	// Signals are the identity and commerce signals (not scored): always
	// present, in the order of the signal registry.
	Signals []Signal `json:"signals"`
	// Previous compares this scan with the site's scan before it; present
	// only when the service's scan history holds one (see Compare).
	Previous *Previous `json:"previous,omitempty"`
	// Rendered is what a browser saw after the page's scripts ran, compared
	// with the server's HTML; present only when the scan had a renderer.
	Rendered *Rendered `json:"rendered,omitempty"`
	// Deep is present only in a paid deep scan's report.
	Deep *Deep `json:"deep,omitempty"`
	// Read is the read suite over a sample of pages (docs/checks.md,
	// "Read suite"); Profile the kind of site the report was judged as;
	// Interactions the findings that only show across checks. None of
	// them changes Checks or Score (docs/scoring.md).
	Read         *Read         `json:"read,omitempty"`
	Profile      *Profile      `json:"profile,omitempty"`
	Interactions []Interaction `json:"interactions,omitempty"`
}

// Rendered compares the homepage as the server sends it with the same page
// after its JavaScript ran: what agents that do not run JavaScript miss.
// The checks keep judging the server's HTML; this block only informs.
type Rendered struct {
	FinalURL string `json:"finalUrl,omitempty"`
	// Error says why the page could not be rendered (the rest is then empty).
	Error string `json:"error,omitempty"`
	// Words of main content in each, and how many appear only after
	// rendering (counted with multiplicity), with the first of them in order.
	ServerWords       int      `json:"serverWords"`
	RenderedWords     int      `json:"renderedWords"`
	WordsOnlyRendered int      `json:"wordsOnlyRendered"`
	MissedText        string   `json:"missedText,omitempty"`
	Headings          []string `json:"headingsOnlyRendered"` // "h1: Title"
	Links             []string `json:"linksOnlyRendered"`    // resolved hrefs
	LinksDropped      int      `json:"linksOnlyRenderedDropped,omitempty"`
	// JSON-LD: blocks in each document, and the schema.org types present
	// only after rendering.
	ServerJSONLD   int      `json:"serverJsonLdBlocks"`
	RenderedJSONLD int      `json:"renderedJsonLdBlocks"`
	JSONLDTypes    []string `json:"jsonLdTypesOnlyRendered"`
	ConsoleErrors  []string `json:"consoleErrors"`
	// Tools are the WebMCP tools the page registered while it ran, as
	// observed in the page (not guessed from its source text).
	Tools []WebMCPTool `json:"webmcpTools"`
}

// WebMCPTool is a tool a page registered at run time.
type WebMCPTool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	API         string `json:"api"` // how it was registered, e.g. navigator.modelContext.registerTool
}

// Missing reports whether anything is present only after rendering.
func (r *Rendered) Missing() bool {
	return r.WordsOnlyRendered > 0 || len(r.Headings) > 0 || len(r.Links) > 0 || len(r.JSONLDTypes) > 0 || r.RenderedJSONLD > r.ServerJSONLD || len(r.Tools) > 0
}

// Advice says what to do about what the render found, from what it found:
// one line per kind of difference, most important first, none when the
// server's HTML already carries everything.
func (r *Rendered) Advice() []string {
	var out []string
	if r.WordsOnlyRendered > 0 || len(r.Headings) > 0 || len(r.Links) > 0 {
		var what []string
		if r.WordsOnlyRendered > 0 {
			what = append(what, fmt.Sprintf("%d words", r.WordsOnlyRendered))
		}
		if len(r.Headings) > 0 {
			what = append(what, plural(len(r.Headings), "heading", "headings"))
		}
		if n := len(r.Links) + r.LinksDropped; n > 0 {
			what = append(what, plural(n, "link", "links"))
		}
		out = append(out, "Render the page's content on the server (SSR or prerendering): "+strings.Join(what, ", ")+" reach only agents that run JavaScript.")
	}
	if len(r.JSONLDTypes) > 0 || r.RenderedJSONLD > r.ServerJSONLD {
		types := ""
		if len(r.JSONLDTypes) > 0 {
			types = " (" + strings.Join(r.JSONLDTypes, ", ") + ")"
		}
		out = append(out, "Put the JSON-LD"+types+" in the HTML the server sends: crawlers and most agents read structured data without running scripts.")
	}
	if len(r.Tools) > 0 {
		what := "The WebMCP tool registered at run time reaches"
		if len(r.Tools) > 1 {
			what = fmt.Sprintf("The %d WebMCP tools registered at run time reach", len(r.Tools))
		}
		out = append(out, what+" only agents that run the page in a browser: offer the same actions through an MCP server (a server card at /.well-known/mcp/server-card) or an API for the rest.")
	}
	if len(r.ConsoleErrors) > 0 {
		out = append(out, "Fix the page's "+plural(len(r.ConsoleErrors), "console error", "console errors")+": agents that run the page meet them too.")
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// BriefCheck is the reduced check of the POST /api/scan body.
type BriefCheck struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Passed  bool   `json:"passed"`
	Status  Status `json:"status"`
	Level   int    `json:"level"`
	Message string `json:"message"`
}

// Brief is the POST /api/scan body: url, timestamp, currentLevel, checks.
type Brief struct {
	URL          string       `json:"url"`
	Timestamp    time.Time    `json:"timestamp"`
	CurrentLevel int          `json:"currentLevel"`
	Checks       []BriefCheck `json:"checks"`
}

// Brief reduces a result to the POST body.
func (r *Result) Brief() Brief {
	b := Brief{URL: r.URL, Timestamp: r.Timestamp, CurrentLevel: r.CurrentLevel, Checks: make([]BriefCheck, len(r.Checks))}
	for i, c := range r.Checks {
		b.Checks[i] = BriefCheck{ID: c.ID, Name: c.Name, Passed: c.Passed, Status: c.Status, Level: c.Level, Message: c.Message}
	}
	return b
}

// Signal returns signal id, if present.
func (r *Result) Signal(id string) (Signal, bool) {
	for _, s := range r.Signals {
		if s.ID == id {
			return s, true
		}
	}
	return Signal{}, false
}

// Check returns the result of check id, if present.
func (r *Result) Check(id string) (Check, bool) {
	for _, c := range r.Checks {
		if c.ID == id {
			return c, true
		}
	}
	return Check{}, false
}
