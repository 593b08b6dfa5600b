package profile

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/engine/score"
)

// Rule is one kind of site: the checks that do not apply to it, and why.
type Rule struct {
	ID          string
	Description string
	// Skip maps a check id to the reason it does not apply.
	Skip map[string]string
}

// The reasons, written once and shared by the profiles they fit.
const (
	noAPI       = "a %s site offers pages to read, not an API or agent actions: agents read it, they do not call it"
	noShopAPI   = "a shop's agents buy through its commerce protocols (the UCP, ACP and payment signals), not a general-purpose API"
	noFeed      = "%s has no stream of articles to syndicate"
	noPageTools = "an API's agents call it directly; it has no pages whose actions WebMCP would expose"
	noArticles  = "an application's pages are tools behind a sign-in, not articles to ground answers in"
)

func skip(reason string, ids ...string) map[string]string {
	m := make(map[string]string, len(ids))
	for _, id := range ids {
		m[id] = reason
	}
	return m
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		maps.Copy(out, m)
	}
	return out
}

// apiChecks are the checks that judge an API and the agent-facing services
// around it.
var apiChecks = []string{"1.2", "1.3", "1.8", "1.10", "1.12", "1.16", "1.18",
	"2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8", "2.9", "2.10", "2.11",
	"3.1", "3.2", "3.3", "3.4", "3.5", "3.7"}

// Rules are the profiles, in the order reports list them.
var Rules = []Rule{
	{ID: "content", Description: "articles, news, a blog or a marketing site: agents read it",
		Skip: skip(fmt.Sprintf(noAPI, "content"), apiChecks...)},
	{ID: "docs", Description: "documentation: agents read it to use a product",
		Skip: skip(fmt.Sprintf(noAPI, "documentation"), apiChecks...)},
	{ID: "api", Description: "an API product: agents call it",
		Skip: merge(skip(fmt.Sprintf(noFeed, "an API"), "1.14"), skip(noPageTools, "1.18"))},
	{ID: "commerce", Description: "a shop: agents browse and buy",
		Skip: merge(skip(noShopAPI, "1.3", "1.16", "2.1", "2.2", "2.3", "2.4", "2.5", "2.7", "2.8", "2.9", "2.10", "3.1", "3.2", "3.3", "3.4", "3.5"),
			skip(fmt.Sprintf(noFeed, "a shop"), "1.14"))},
	{ID: "application", Description: "a web application behind a sign-in: agents act in it",
		Skip: merge(skip(fmt.Sprintf(noFeed, "an application"), "1.14"), skip(noArticles, "4.12"))},
}

// Known reports whether id names a profile.
func Known(id string) bool {
	_, ok := rule(id)
	return ok
}

func rule(id string) (Rule, bool) {
	for _, r := range Rules {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

// ErrUnknown is returned for a requested profile that does not exist.
type ErrUnknown struct{}

func (ErrUnknown) Error() string {
	return "profile must be one of " + strings.Join(report.Profiles, ", ")
}

// As is res judged as profile id: res itself when id is "", else a copy
// with its own profile block, so a result shared by a cache is never
// changed. It fails only for an unknown profile.
func As(res *report.Result, id string) (*report.Result, error) {
	if id == "" {
		return res, nil
	}
	cp := *res // Apply sets Profile alone
	if err := Apply(&cp, id, nil); err != nil {
		return nil, err
	}
	return &cp, nil
}

// Apply sets res.Profile to the report judged as requested ("" keeps what
// the site declared, else what was detected) with waivers added to the
// site's own. It fails only for an unknown profile. A result scanned before
// profiles existed is judged from its checks alone.
func Apply(res *report.Result, requested string, waivers []report.Waiver) error {
	requested = strings.ToLower(strings.TrimSpace(requested))
	if requested != "" && !Known(requested) {
		return ErrUnknown{}
	}
	p := res.Profile
	if p == nil {
		p = &report.Profile{Detected: "content", Evidence: []string{"the report predates profiles, so nothing was detected"}}
	}
	out := &report.Profile{Detected: p.Detected, Evidence: p.Evidence, Declared: p.Declared, DeclarationProblems: p.DeclarationProblems}
	for _, w := range p.Waivers {
		if w.From != "config" {
			out.Waivers = append(out.Waivers, w)
		}
	}
	for _, w := range waivers {
		w.From = "config"
		out.Waivers = append(out.Waivers, w)
	}
	switch {
	case requested != "":
		out.ID, out.Source = requested, "requested"
	case out.Declared != "":
		out.ID, out.Source = out.Declared, "declared"
	default:
		out.ID, out.Source = out.Detected, "detected"
	}
	if !Known(out.ID) {
		out.ID, out.Source = "content", "detected"
	}
	waived := reasons(out.Waivers)
	out.NotApplicable, out.Score = judge(res, out.ID, waived)
	readNA, readScore := judgeRead(res, waived)
	out.NotApplicable = append(out.NotApplicable, readNA...)
	out.ReadScore = readScore
	out.Grade = score.Grade(out.Score.Value)
	for _, r := range Rules {
		if r.ID == out.ID {
			continue
		}
		na, t := judge(res, r.ID, waived)
		o := report.ProfileOutcome{ID: r.ID, Value: t.Value, Grade: score.Grade(t.Value), NotApplicable: []string{}}
		for _, n := range na {
			o.NotApplicable = append(o.NotApplicable, n.ID)
		}
		out.Others = append(out.Others, o)
	}
	if out.Waivers == nil {
		out.Waivers = []report.Waiver{}
	}
	res.Profile = out
	return nil
}

// reasons maps each waived check to its first waiver's reason.
func reasons(waivers []report.Waiver) map[string]string {
	waived := map[string]string{}
	for _, w := range waivers {
		if _, dup := waived[w.Check]; !dup {
			waived[w.Check] = w.Reason
		}
	}
	return waived
}

// judge lists what does not apply as profile id with waivers, and the 48
// checks' tally with those counted as not applicable. A check that is
// already na keeps its own reason and is not listed.
func judge(res *report.Result, id string, waived map[string]string) ([]report.NotApplicable, report.Tally) {
	r, _ := rule(id)
	na := []report.NotApplicable{}
	checks := slices.Clone(res.Checks)
	for i, c := range checks {
		if c.Status == report.NA {
			continue
		}
		if why, ok := waived[c.ID]; ok {
			na = append(na, report.NotApplicable{ID: c.ID, Name: c.Name, Reason: why, By: "waiver", Status: c.Status})
			checks[i].Status = report.NA
		} else if why, ok := r.Skip[c.ID]; ok {
			na = append(na, report.NotApplicable{ID: c.ID, Name: c.Name, Reason: why, By: "profile", Status: c.Status})
			checks[i].Status = report.NA
		}
	}
	return na, tally(checks)
}

// judgeRead lists the read checks waivers take out, and the read score
// without them.
func judgeRead(res *report.Result, waived map[string]string) ([]report.NotApplicable, *report.Tally) {
	if res.Read == nil {
		return nil, nil
	}
	var na []report.NotApplicable
	checks := slices.Clone(res.Read.Checks)
	for i, c := range checks {
		why, ok := waived[c.ID]
		if !ok || c.Status == report.NA {
			continue
		}
		na = append(na, report.NotApplicable{ID: c.ID, Name: c.Name, Reason: why, By: "waiver", Status: c.Status})
		checks[i].Status = report.NA
	}
	t := score.Read(checks, res.Read.Counts)
	return na, &t
}

// tally is the 48 checks' score over checks (score.Summary's rule).
func tally(checks []report.Check) report.Tally {
	s := score.Summary(checks, 0)
	t := report.Tally{Value: s.Value, Passed: s.Passed, Partial: s.Partial, Failed: s.Failed, NA: s.NA, Total: s.Total}
	return t
}
