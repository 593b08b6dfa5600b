package checks

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
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
	WebScan  bool   `json:"webScan"`  // part of the 48-check web scan (levels 1–4)
}

// Outcome is what a check says about one site.
type Outcome struct {
	Status         report.Status
	Message        string
	Recommendation string // specific advice; the definition's Fix is used when empty
	Details        any    // evidence, rendered as compact JSON
	FoundAt        string
}

// Check is a definition with its judge. Run is nil for level-5 checks, which
// run over a repository, not a site.
type Check struct {
	Definition
	Run func(*gather.Artifacts) Outcome
}

var registry = map[string]*Check{}

func register(d Definition, run func(*gather.Artifacts) Outcome) {
	if _, dup := registry[d.ID]; dup {
		panic("duplicate check id " + d.ID)
	}
	d.Category = report.Levels[d.Level-1].Name
	d.WebScan = d.Level <= 4
	registry[d.ID] = &Check{Definition: d, Run: run}
}

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

// Judge runs one check and turns its outcome into a report entry, enforcing the
// rules every result obeys (passed == status pass; no recommendation on pass;
// details as compact JSON).
func (c *Check) Judge(a *gather.Artifacts) (res report.Check) {
	defer func() {
		// A check must never take a scan down: a bug becomes an honest result.
		if r := recover(); r != nil {
			res = c.result(Outcome{Status: report.Fail, Message: fmt.Sprintf("The check could not be evaluated (internal error: %v); please report it.", r)})
		}
	}()
	return c.result(c.Run(a))
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
	if o.Details != nil {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(o.Details); err == nil {
			r.Details = strings.TrimSpace(buf.String())
		}
	}
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
