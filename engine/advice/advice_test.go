package advice

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/engine/score"
)

const site = "https://www.shop.example/"

// result builds a scored result over the real catalog: every web check
// passes unless statuses says otherwise.
func result(statuses map[string]report.Status) *report.Result {
	r := &report.Result{URL: site}
	for _, c := range checks.Web() {
		st, ok := statuses[c.ID]
		if !ok {
			st = report.Pass
		}
		rc := report.Check{ID: c.ID, Name: c.Name, Level: c.Level, Status: st, Passed: st == report.Pass, Message: "found " + c.ID}
		if st == report.Fail || st == report.Partial {
			rc.Recommendation = "do " + c.ID
		}
		r.Checks = append(r.Checks, rc)
	}
	score.Apply(r)
	return r
}

// open fails every check of the levels given, except those in pass; then
// over sets single checks, and every check of the levels in na is na.
func open(levels []int, pass []string, over map[string]report.Status, na ...int) map[string]report.Status {
	m := map[string]report.Status{}
	for _, c := range checks.Web() {
		switch {
		case slices.Contains(na, c.Level):
			m[c.ID] = report.NA
		case slices.Contains(levels, c.Level) && !slices.Contains(pass, c.ID):
			m[c.ID] = report.Fail
		}
	}
	for id, st := range over {
		m[id] = st
	}
	return m
}

func ids(p Plan) string {
	var s []string
	for _, st := range p.Steps {
		s = append(s, st.ID)
	}
	return strings.Join(s, " ")
}

func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		name     string
		statuses map[string]report.Status
		current  int
		target   int
		needs    []Need
		order    string // the steps' ids, in order
		blocking int    // how many steps lead and are blocking
	}{{
		// Level 1 at 8/18, level 2 at 5/11, level 3 at 1/7: one more level-1
		// pass reaches level 1, so every open level-1 check comes first and
		// levels 2 and 3 wait, failing as they are.
		name: "a level-1 failure comes before level-2 ones",
		statuses: open([]int{1, 2, 3}, []string{"1.3", "1.4", "1.5", "1.6", "1.9", "1.14", "1.17", "1.18", "2.1", "2.2", "2.3", "2.4", "2.5", "3.1"},
			map[string]report.Status{"1.2": report.Partial}),
		current: 0, target: 1, needs: []Need{{1, 1}},
		// small (1.1 1.7 1.8 1.15), medium fails (1.10 1.11 1.12 1.16), the
		// medium partial 1.2, large (1.13); then level 2, level 3 by effort.
		order:    "1.1 1.7 1.8 1.15 1.10 1.11 1.12 1.16 1.2 1.13 2.6 2.10 2.7 2.8 2.9 2.11 3.6 3.7 3.2 3.3 3.4 3.5",
		blocking: 10,
	}, {
		name:     "pass and na are never recommended",
		statuses: map[string]report.Status{"1.1": report.NA, "1.2": report.NA, "2.8": report.NA, "4.11": report.NA, "4.6": report.Fail, "3.6": report.Partial},
		current:  3, target: 0, needs: []Need{},
		order: "3.6 4.6",
	}, {
		// Level 1 at 6/18 with levels 2 and 3 not applicable: 3 more passes.
		// Effort first, then fails before partials, then catalog order.
		name: "effort, then fail before partial",
		statuses: open([]int{1}, []string{"1.5", "1.6", "1.7", "1.8", "1.9", "1.10"},
			map[string]report.Status{"1.1": report.Partial, "1.3": report.Partial, "1.16": report.Partial}, 2, 3),
		current: 0, target: 1, needs: []Need{{1, 3}},
		order:    "1.4 1.15 1.1 1.2 1.11 1.12 1.14 1.3 1.16 1.13 1.17 1.18",
		blocking: 12,
	}, {
		// score.CurrentLevel's second route: level 1 at 7/18 (≥ 0.35) with
		// level 2 at 9/11 (≥ 0.75) is level 2. One level-2 pass gets there;
		// the first route needs two level-1 passes. The simplified copy of
		// the gating the MCP tool had asked for two level-1 fixes.
		name:     "the score's second route is shorter",
		statuses: open([]int{1, 2, 3}, []string{"1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "1.7", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8"}, nil),
		current:  0, target: 2, needs: []Need{{2, 1}},
		order:    "2.10 2.9 2.11 1.8 1.9 1.15 1.10 1.11 1.12 1.14 1.16 1.13 1.17 1.18 3.6 3.7 3.1 3.2 3.3 3.4 3.5",
		blocking: 3,
	}, {
		// Level 2 reached; level 3 (1 of 7) needs 3 more (4/7 ≥ 0.5).
		name:     "level 3 gated by its own checks",
		statuses: open([]int{3}, []string{"3.1"}, map[string]report.Status{"4.12": report.Fail}),
		current:  2, target: 3, needs: []Need{{3, 3}},
		order: "3.6 3.7 3.2 3.3 3.4 3.5 4.12", blocking: 6,
	}, {
		// Nothing in levels 1–3 applies: no fix reaches a level.
		name:     "no level within reach",
		statuses: open(nil, nil, map[string]report.Status{"4.4": report.Fail}, 1, 2, 3),
		current:  0, target: 0, needs: []Need{},
		order: "4.4",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			r := result(tc.statuses)
			p := For(r)
			if p.CurrentLevel != tc.current || p.CurrentLevel != r.CurrentLevel || p.TargetLevel != tc.target || !reflect.DeepEqual(p.Needs, tc.needs) {
				t.Fatalf("level %d (result says %d) → %d needs %v; want %d → %d needs %v", p.CurrentLevel, r.CurrentLevel, p.TargetLevel, p.Needs, tc.current, tc.target, tc.needs)
			}
			if got := ids(p); got != tc.order {
				t.Errorf("order\n got %s\nwant %s", got, tc.order)
			}
			sum := 0
			for _, n := range p.Needs {
				sum += n.Passes
			}
			if p.PassesNeeded != sum {
				t.Errorf("passesNeeded %d, needs add up to %d", p.PassesNeeded, sum)
			}
			for i, st := range p.Steps {
				if st.Blocking != (i < tc.blocking) || st.Rank != i+1 {
					t.Errorf("step %d (%s): rank %d blocking %v", i, st.ID, st.Rank, st.Blocking)
				}
			}
			holds(t, r, p)
		})
	}
}

// holds checks what every plan promises about r: only fail and partial
// checks, each once, with the check's own words and starter; and passing
// the cheapest Needs of each level reaches TargetLevel per the score itself,
// while no smaller number of passes reaches any level above the current one.
func holds(t *testing.T, r *report.Result, p Plan) {
	t.Helper()
	open := map[string]report.Check{}
	for _, c := range r.Checks {
		if c.Status == report.Fail || c.Status == report.Partial {
			open[c.ID] = c
		}
	}
	if len(p.Steps) != len(open) {
		t.Errorf("%d steps for %d open checks", len(p.Steps), len(open))
	}
	seenFree := false
	for _, st := range p.Steps {
		c, ok := open[st.ID]
		def, _ := checks.ByID(st.ID)
		if !ok || st.Status != c.Status || st.Why != c.Message || st.Fix != c.Recommendation || st.Effort != def.Effort || st.Snippet != def.Starter(r.URL) {
			t.Errorf("step %+v from %+v", st, c)
		}
		delete(open, st.ID)
		if st.Blocking && seenFree {
			t.Errorf("blocking %s after a step that is not", st.ID)
		}
		seenFree = seenFree || !st.Blocking
	}
	if p.TargetLevel == 0 {
		if p.PassesNeeded != 0 || len(p.Needs) != 0 || (len(p.Steps) > 0 && p.Steps[0].Blocking) {
			t.Errorf("no target, yet %+v", p)
		}
		return
	}
	fixed := *r
	fixed.Checks = slices.Clone(r.Checks)
	left := map[int]int{}
	for _, n := range p.Needs {
		left[n.Level] = n.Passes
	}
	for _, st := range p.Steps {
		if left[st.Level] > 0 {
			left[st.Level]--
			for i := range fixed.Checks {
				if fixed.Checks[i].ID == st.ID {
					fixed.Checks[i].Status = report.Pass
				}
			}
		}
	}
	if got := score.CurrentLevel(score.Levels(fixed.Checks)); got != p.TargetLevel {
		t.Errorf("passing the planned checks gives level %d, the plan says %d", got, p.TargetLevel)
	}
	// Independently of the plan's search: every split of one pass fewer over
	// levels 1–3 stays at the current level.
	levels := score.Levels(r.Checks)
	openIn := map[int]int{}
	for _, c := range r.Checks {
		if c.Status == report.Fail || c.Status == report.Partial {
			openIn[c.Level]++
		}
	}
	n := p.PassesNeeded - 1
	for k1 := 0; k1 <= n && k1 <= openIn[1]; k1++ {
		for k2 := 0; k1+k2 <= n && k2 <= openIn[2]; k2++ {
			// The rest in level 3: the score only grows with passes.
			k3 := min(n-k1-k2, openIn[3])
			add := [6]int{1: k1, 2: k2, 3: k3}
			lp := slices.Clone(levels)
			for i := range lp {
				lp[i].Passed += add[lp[i].Level.Number]
			}
			if score.CurrentLevel(lp) > p.CurrentLevel {
				t.Errorf("%d+%d+%d passes already reach level %d; the plan asks for %d", k1, k2, k3, score.CurrentLevel(lp), p.PassesNeeded)
			}
		}
	}
}

// The plan depends on the checks, not on the order the result lists them in,
// and the same result always gives the same plan.
func TestPlanIsStable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	statuses := []report.Status{report.Pass, report.Pass, report.Fail, report.Partial, report.NA}
	for i := range 300 {
		m := map[string]report.Status{}
		for _, c := range checks.Web() {
			m[c.ID] = statuses[rng.IntN(len(statuses))]
		}
		r := result(m)
		want := For(r)
		holds(t, r, want)
		shuffled := *r
		shuffled.Checks = slices.Clone(r.Checks)
		rng.Shuffle(len(shuffled.Checks), func(a, b int) { shuffled.Checks[a], shuffled.Checks[b] = shuffled.Checks[b], shuffled.Checks[a] })
		if got := For(&shuffled); !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: the plan changed with the checks' order:\n got %s\nwant %s", i, ids(got), ids(want))
		}
		if t.Failed() {
			t.Fatalf("case %d: %v", i, m)
		}
	}
}

// A result with level-5 checks (scan --repo) lists them after, never as
// blocking; a starter with nothing to fill in (AGENTS.md) comes as it is.
func TestPlanWithRepoChecks(t *testing.T) {
	r := result(map[string]report.Status{"1.1": report.Fail})
	five, _ := checks.ByID("5.9")
	r.Checks = append(r.Checks, report.Check{ID: "5.9", Name: five.Name, Level: 5, Status: report.Fail, Message: "no AGENTS.md"})
	score.Apply(r)
	p := For(r)
	if got := ids(p); got != "1.1 5.9" {
		t.Fatalf("order %s", got)
	}
	last := p.Steps[1]
	if last.Blocking || last.Fix != five.Fix || !strings.HasPrefix(last.Snippet, "# AGENTS.md\n") {
		t.Errorf("level-5 step %+v", last)
	}
	if first := p.Steps[0]; !strings.HasPrefix(first.Snippet, "# shop.example\n") || !strings.Contains(first.Snippet, "https://www.shop.example/docs/") {
		t.Errorf("llms.txt starter for %s: %q", site, first.Snippet)
	}
	// A check the catalog does not know is still advised, as large work.
	r.Checks = append(r.Checks, report.Check{ID: "9.1", Name: "x", Level: 4, Status: report.Partial, Message: "m", Recommendation: "r"})
	p = For(r)
	if i := slices.IndexFunc(p.Steps, func(s Step) bool { return s.ID == "9.1" }); i < 0 || p.Steps[i].Effort != checks.Large || p.Steps[i].Snippet != "" {
		t.Errorf("unknown check: %+v", p.Steps)
	}
}

// The empty result answers empty lists, not null: JSON readers iterate them.
func TestEmptyPlan(t *testing.T) {
	p := For(&report.Result{URL: site})
	if p.Steps == nil || p.Needs == nil || p.TargetLevel != 0 {
		t.Errorf("%+v", p)
	}
}

// The checks that do not apply to the report's profile are advised last,
// with the reason, never block, and the route to the next level is found
// without them.
func TestPlanPutsWhatDoesNotApplyLast(t *testing.T) {
	// Level 1 passes 8 of 18 and level 2 none: one more pass of level 1
	// reaches level 1. Three of level 1's failures are API-side.
	r := result(open([]int{1, 2}, []string{"1.1", "1.4", "1.5", "1.6", "1.7", "1.9", "1.11", "1.13"}, nil))
	plain := For(r)
	if plain.TargetLevel != 1 || plain.PassesNeeded != 1 || len(plain.Steps) != 21 {
		t.Fatalf("without a profile: %s, %d passes to level %d", ids(plain), plain.PassesNeeded, plain.TargetLevel)
	}
	r.Profile = &report.Profile{ID: "content", NotApplicable: []report.NotApplicable{
		{ID: "1.2", Reason: "no API"}, {ID: "1.3", Reason: "no API"}, {ID: "1.12", Reason: "no API"}}}
	p := For(r)
	if len(p.Steps) != 21 || p.TargetLevel != 1 || p.PassesNeeded != 1 {
		t.Fatalf("with the profile: %s, %d passes to level %d", ids(p), p.PassesNeeded, p.TargetLevel)
	}
	last := []string{}
	for i, st := range p.Steps {
		switch {
		case i < 7: // level 1's applicable failures, which reach the level
			if st.NotApplicable != "" || !st.Blocking || st.Level != 1 {
				t.Errorf("step %d %s: notApplicable %q blocking %v, want an applicable blocking step of level 1", i+1, st.ID, st.NotApplicable, st.Blocking)
			}
			continue
		case i < 18: // level 2's
			if st.NotApplicable != "" || st.Blocking || st.Level != 2 {
				t.Errorf("step %d %s: want a level-2 step that does not block", i+1, st.ID)
			}
			continue
		}
		if st.NotApplicable != "no API" || st.Blocking {
			t.Errorf("step %d %s: notApplicable %q blocking %v", i+1, st.ID, st.NotApplicable, st.Blocking)
		}
		last = append(last, st.ID)
	}
	slices.Sort(last)
	if strings.Join(last, " ") != "1.12 1.2 1.3" {
		t.Errorf("the last steps are %v, want the three that do not apply", last)
	}
}
