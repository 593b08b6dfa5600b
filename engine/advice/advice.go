// Package advice turns a scan result into what to do next: the failing and
// partial checks in the order that raises the level soonest, each with the
// check's own recommendation and, where one file or stanza makes it pass, a
// starter to publish. The order is decided here only; the CLI (scan
// --recommend), the MCP tool get_recommendations and any page render it.
package advice

import (
	"sort"

	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/engine/score"
)

// Plan is the ordered advice for one result.
type Plan struct {
	URL          string `json:"url"`
	CurrentLevel int    `json:"currentLevel"`
	// TargetLevel is the level the fewest further passes reach; it can be
	// above CurrentLevel+1 when the score's second route (a strong level 2
	// over a weaker level 1) is the shorter one. 0 when level 3 is reached,
	// or when no fix among the result's checks reaches another level.
	TargetLevel int `json:"targetLevel"`
	// PassesNeeded is how many more checks must pass to reach TargetLevel,
	// Needs how many of them in each level.
	PassesNeeded int    `json:"passesNeeded"`
	Needs        []Need `json:"needs"`
	Steps        []Step `json:"recommendations"`
}

// Need is how many more checks of one level must pass.
type Need struct {
	Level  int `json:"level"`
	Passes int `json:"passes"`
}

// Step is one fix.
type Step struct {
	Rank   int           `json:"rank"`
	ID     string        `json:"id"`
	Name   string        `json:"name"`
	Level  int           `json:"level"`
	Status report.Status `json:"status"`
	Effort checks.Effort `json:"effort"`
	// Blocking: the check's level is one TargetLevel needs passes in, so
	// fixing it counts toward the next level.
	Blocking bool   `json:"blocking"`
	Why      string `json:"why"`
	Fix      string `json:"fix"`
	Snippet  string `json:"snippet,omitempty"`
	// NotApplicable is why the check does not apply to the kind of site
	// the report is judged as (its profile, or a waiver): such steps come
	// last and never count toward the next level.
	NotApplicable string `json:"notApplicable,omitempty"`
}

// For orders r's fail and partial checks (pass and na are never advised):
// first those of the levels the cheapest route to the next level needs
// passes in, then the rest; within each, by level, then effort, then fails
// before partials (a fail fixed gains the score a whole point, a partial
// half), then catalog order. The route is found with score.CurrentLevel
// itself, so the advice cannot disagree with the score. The checks that do
// not apply to the report's profile (r.Profile.NotApplicable) are advised
// last, with the reason, and the route to the next level is found without
// them: a content site is not told to publish an API first.
func For(r *report.Result) Plan {
	skip := map[string]string{}
	if r.Profile != nil {
		for _, n := range r.Profile.NotApplicable {
			skip[n.ID] = n.Reason
		}
	}
	levels := score.Levels(r.Checks)
	p := Plan{URL: r.URL, CurrentLevel: score.CurrentLevel(levels), Needs: []Need{}, Steps: []Step{}}

	var open, aside []Step
	for _, c := range r.Checks {
		if c.Status != report.Fail && c.Status != report.Partial {
			continue
		}
		s := Step{ID: c.ID, Name: c.Name, Level: c.Level, Status: c.Status, Effort: checks.Large, Why: c.Message, Fix: c.Recommendation}
		if def, ok := checks.ByID(c.ID); ok {
			s.Effort, s.Snippet = def.Effort, def.Starter(r.URL)
			if s.Fix == "" {
				s.Fix = def.Fix
			}
		}
		if why, ok := skip[c.ID]; ok {
			s.NotApplicable = why
			aside = append(aside, s)
			continue
		}
		open = append(open, s)
	}
	sort.SliceStable(open, func(i, j int) bool { return before(open[i], open[j]) })
	sort.SliceStable(aside, func(i, j int) bool { return before(aside[i], aside[j]) })

	if target, k := route(levels, open, p.CurrentLevel); target > 0 {
		p.TargetLevel = target
		for lv := 1; lv <= 3; lv++ {
			if k[lv] > 0 {
				p.PassesNeeded += k[lv]
				p.Needs = append(p.Needs, Need{Level: lv, Passes: k[lv]})
			}
		}
		for i := range open {
			if lv := open[i].Level; lv >= 1 && lv <= 3 && k[lv] > 0 {
				open[i].Blocking = true
			}
		}
		sort.SliceStable(open, func(i, j int) bool { return open[i].Blocking && !open[j].Blocking })
	}
	open = append(open, aside...)
	for i := range open {
		open[i].Rank = i + 1
	}
	p.Steps = append(p.Steps, open...)
	return p
}

// before is the order within a group: level, effort, fail first, catalog.
func before(a, b Step) bool {
	if a.Level != b.Level {
		return a.Level < b.Level
	}
	if ra, rb := a.Effort.Rank(), b.Effort.Rank(); ra != rb {
		return ra < rb
	}
	if (a.Status == report.Fail) != (b.Status == report.Fail) {
		return a.Status == report.Fail
	}
	return checks.Less(a.ID, b.ID)
}

// route finds how many more passes in levels 1–3 (k[1..3]) reach a level
// above current with the fewest passes, then the least effort (the cheapest
// open checks of each level are the ones counted), then the most passes in
// lower levels. It tries every split: the levels that gate hold at most 18,
// 11 and 7 checks, and a larger k3 only costs more once one is enough.
func route(levels []report.LevelProgress, open []Step, current int) (int, [4]int) {
	if current >= 3 {
		return 0, [4]int{}
	}
	var cost [4][]int // cost[lv][k]: effort of the k cheapest open checks of lv
	for lv := 1; lv <= 3; lv++ {
		cost[lv] = []int{0}
		for _, s := range open { // already cheapest first within a level
			if s.Level == lv {
				cost[lv] = append(cost[lv], cost[lv][len(cost[lv])-1]+s.Effort.Rank())
			}
		}
	}
	lp := make([]report.LevelProgress, len(levels))
	with := func(k [4]int) int {
		copy(lp, levels)
		for i := range lp {
			if n := lp[i].Level.Number; n >= 1 && n <= 3 {
				lp[i].Passed += k[n]
				lp[i].Failed -= k[n]
			}
		}
		return score.CurrentLevel(lp)
	}
	best, bestLevel, found := [4]int{}, 0, false
	better := func(k [4]int) bool {
		if !found {
			return true
		}
		n, bn := k[1]+k[2]+k[3], best[1]+best[2]+best[3]
		if n != bn {
			return n < bn
		}
		e, be := cost[1][k[1]]+cost[2][k[2]]+cost[3][k[3]], cost[1][best[1]]+cost[2][best[2]]+cost[3][best[3]]
		if e != be {
			return e < be
		}
		if k[1] != best[1] {
			return k[1] > best[1]
		}
		return k[2] > best[2]
	}
	for k1 := range cost[1] {
		for k2 := range cost[2] {
			for k3 := range cost[3] {
				k := [4]int{0, k1, k2, k3}
				if lv := with(k); lv > current {
					if better(k) {
						best, bestLevel, found = k, lv, true
					}
					break
				}
			}
		}
	}
	return bestLevel, best
}
