package checks

import (
	"embed"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/report"
)

// Definition is what a check is, independent of any site.
type Definition struct {
	ID       string `json:"id"`
	Level    int    `json:"level"`
	Name     string `json:"name"`
	Category string `json:"category"`
	LooksFor string `json:"looksFor"` // the evidence it reads
	Rule     string `json:"rule"`     // how pass, partial, fail and na are decided
	Fix      string `json:"fix"`      // what to publish to pass
	Effort   Effort `json:"effort"`   // how much work the fix usually takes
	WebScan  bool   `json:"webScan"`  // part of the 48-check web scan (levels 1–4)
	// Snippet is a starter to publish as it is, where one file or stanza
	// makes the check pass; Starter fills in the site. It is a template, not
	// part of the catalog's JSON, whose readers want text they can use.
	Snippet string `json:"-"`
}

// Effort is how much work a check's fix usually takes. A level counts
// passes, not work, so recommendations put the cheap fixes first.
type Effort string

const (
	Small  Effort = "small"  // a static file, or a line in robots.txt or the page head
	Medium Effort = "medium" // a discovery document, a response header or server configuration
	Large  Effort = "large"  // a change to the application, its API, its content or its code
)

// Rank orders efforts, small first; an unknown effort ranks last.
func (e Effort) Rank() int {
	switch e {
	case Small:
		return 0
	case Medium:
		return 1
	}
	return 2
}

// Placeholders a Snippet may use, and what Starter puts in their place for
// https://www.acme.example:8443/.
const (
	SiteOrigin  = "{origin}"  // https://www.acme.example:8443
	SiteName    = "{name}"    // acme.example (the host without www.)
	SiteSlug    = "{slug}"    // acme-example
	SiteReverse = "{reverse}" // example.acme, as MCP registry names are spelt
)

// Starter is the check's snippet filled in for site (an http(s) URL): ""
// when the check has none, or when it names the site and site has no host.
func (d *Definition) Starter(site string) string {
	if !strings.Contains(d.Snippet, "{") { // none, or nothing to fill in (a repository has no site)
		return d.Snippet
	}
	u, err := url.Parse(site)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	name := strings.TrimPrefix(u.Hostname(), "www.")
	reverse := name
	if net.ParseIP(name) == nil { // an address is not a domain to turn around
		parts := strings.Split(name, ".")
		slices.Reverse(parts)
		reverse = strings.Join(parts, ".")
	}
	// One pass: a site's own spelling is never read as a placeholder.
	return strings.NewReplacer(
		SiteOrigin, u.Scheme+"://"+u.Host,
		SiteName, name,
		SiteSlug, strings.ReplaceAll(name, ".", "-"),
		SiteReverse, reverse,
	).Replace(d.Snippet)
}

// Outcome is what a check says about one site.
type Outcome struct {
	Status         report.Status
	Message        string
	Recommendation string // specific advice; the definition's Fix is used when empty
	Details        any    // evidence, rendered as compact JSON
	FoundAt        string
}

// Check is a definition with its judge: the artifacts it reads and a pure
// function over them. Web checks read what the web plan gathers (package
// gather); level-5 checks read the evidence of a repository walk (package
// repo). Run sees only what Requires declares: reading anything else panics,
// and a test runs every check over every fixture site to keep Requires exact.
type Check struct {
	Definition
	Requires []gather.AnyKey
	Run      func(in gather.Source) Outcome
}

var registry = map[string]*Check{}

func register(d Definition, requires []gather.AnyKey, run func(gather.Source) Outcome) {
	if _, dup := registry[d.ID]; dup {
		panic("duplicate check id " + d.ID)
	}
	if d.Effort.Rank() == 2 && d.Effort != Large {
		panic("check " + d.ID + ": effort must be Small, Medium or Large")
	}
	d.Category = report.Levels[d.Level-1].Name
	d.WebScan = d.Level <= 4
	registry[d.ID] = &Check{Definition: d, Requires: requires, Run: run}
}

// needs is a Requires list.
func needs(keys ...gather.AnyKey) []gather.AnyKey { return keys }

// All returns every check, sorted by level then sequence (1.1 … 1.18, 2.1 …).
func All() []*Check {
	out := make([]*Check, 0, len(registry))
	for _, c := range registry {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return Less(out[i].ID, out[j].ID) })
	return out
}

// Web returns the 48 checks of the web scan, in order.
func Web() []*Check {
	var out []*Check
	for _, c := range All() {
		if c.WebScan {
			out = append(out, c)
		}
	}
	return out
}

// Repo returns the 10 level-5 checks, which judge a repository, in order.
func Repo() []*Check {
	var out []*Check
	for _, c := range All() {
		if !c.WebScan {
			out = append(out, c)
		}
	}
	return out
}

// ByID finds a check.
func ByID(id string) (*Check, bool) {
	c, ok := registry[id]
	return c, ok
}

// Less orders check ids numerically by level, then sequence.
func Less(a, b string) bool {
	la, sa := split(a)
	lb, sb := split(b)
	if la != lb {
		return la < lb
	}
	return sa < sb
}

func split(id string) (int, int) {
	l, s, _ := strings.Cut(id, ".")
	a, _ := strconv.Atoi(l)
	b, _ := strconv.Atoi(s)
	return a, b
}

// Judge runs one check over the artifacts it requires and turns its outcome
// into a report entry, enforcing the rules every result obeys (passed ==
// status pass; no recommendation on pass; details as compact JSON). A check
// whose inputs were not all gathered is not run: judging a missing document
// as absent would be a false verdict.
func (c *Check) Judge(set *gather.Set) (res report.Check) {
	for _, k := range c.Requires {
		if !gather.Has(set, k) {
			return c.result(Outcome{Status: report.Fail,
				Message:        fmt.Sprintf("The check could not be evaluated: its input %q was not gathered before the scan ended.", k.Name()),
				Recommendation: "Scan again; if this keeps happening, the site answers too slowly for the scan deadline."})
		}
	}
	defer func() {
		// A check must never take a scan down: a bug becomes an honest result.
		if r := recover(); r != nil {
			res = c.result(Outcome{Status: report.Fail, Message: fmt.Sprintf("The check could not be evaluated (internal error: %v); please report it.", r)})
		}
	}()
	return c.result(c.Run(gather.View(set, c.Requires, nil)))
}

func (c *Check) result(o Outcome) report.Check {
	r := report.Check{
		ID: c.ID, Name: c.Name, Status: o.Status, Passed: o.Status == report.Pass,
		Level: c.Level, Category: c.Category, Message: o.Message, FoundAt: o.FoundAt,
	}
	if o.Status != report.Pass && o.Status != report.NA {
		r.Recommendation = o.Recommendation
		if r.Recommendation == "" {
			r.Recommendation = c.Fix
		}
	}
	r.Details = report.ObjectDetails(o.Details)
	return r
}

//go:embed ai_crawlers.json
var crawlerData embed.FS

// Crawler is an AI product token and its class.
type Crawler struct {
	Token    string `json:"token"`
	Class    string `json:"class"` // training, search, user, agent
	Operator string `json:"operator"`
}

// Crawlers is the maintained list of AI tokens (ai_crawlers.json).
var Crawlers = func() []Crawler {
	b, err := crawlerData.ReadFile("ai_crawlers.json")
	if err != nil {
		panic(err)
	}
	var doc struct {
		Tokens []Crawler `json:"tokens"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		panic(err)
	}
	return doc.Tokens
}()
