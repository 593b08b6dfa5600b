package score

import (
	"math"

	"github.com/agentready/agentready/engine/report"
)

// Levels computes levels[] for every level present in checks.
func Levels(checks []report.Check) []report.LevelProgress {
	var out []report.LevelProgress
	for _, lv := range report.Levels {
		p := report.LevelProgress{Level: lv}
		for _, c := range checks {
			if c.Level != lv.Number {
				continue
			}
			p.Total++
			switch c.Status {
			case report.Pass:
				p.Passed++
			case report.NA:
				p.NA++
			default:
				p.Failed++
			}
		}
		if p.Total == 0 {
			continue
		}
		p.Complete = p.Total > p.NA && p.Passed == p.Total-p.NA
		out = append(out, p)
	}
	return out
}

// rate is passed/applicable for a level, 0 when nothing applies.
func rate(levels []report.LevelProgress, n int) float64 {
	for _, p := range levels {
		if p.Level.Number == n && p.Total > p.NA {
			return float64(p.Passed) / float64(p.Total-p.NA)
		}
	}
	return 0
}

// CurrentLevel is 0–3. Level 3 always requires level 1 (unlike the peer's shortcut).
func CurrentLevel(levels []report.LevelProgress) int {
	r1, r2, r3 := rate(levels, 1), rate(levels, 2), rate(levels, 3)
	l1 := r1 >= 0.5
	l2 := (l1 && r2 >= 0.5) || (r1 >= 0.35 && r2 >= 0.75)
	l3 := (l2 && r3 >= 0.5) || (l1 && r2 >= 0.35 && r3 >= 0.75)
	switch {
	case l3:
		return 3
	case l2:
		return 2
	case l1:
		return 1
	}
	return 0
}

// Grade maps a 0–100 value to A–F.
func Grade(v int) string {
	switch {
	case v >= 90:
		return "A"
	case v >= 75:
		return "B"
	case v >= 60:
		return "C"
	case v >= 40:
		return "D"
	}
	return "F"
}

func tally(checks []report.Check, keep func(int) bool) report.Tally {
	var t report.Tally
	for _, c := range checks {
		if !keep(c.Level) {
			continue
		}
		t.Total++
		switch c.Status {
		case report.Pass:
			t.Passed++
		case report.Partial:
			t.Partial++
		case report.Fail:
			t.Failed++
		case report.NA:
			t.NA++
		}
	}
	if applicable := t.Total - t.NA; applicable > 0 {
		t.Value = int(math.Round(100 * (float64(t.Passed) + 0.5*float64(t.Partial)) / float64(applicable)))
	}
	return t
}

// Summary is the top-level score over levels 1–4, with level 4 also on its own.
func Summary(checks []report.Check, current int) report.Score {
	all := tally(checks, func(l int) bool { return l >= 1 && l <= 4 })
	return report.Score{
		Value: all.Value, Grade: Grade(all.Value), Level: current, LevelName: report.LevelName(current),
		Passed: all.Passed, Partial: all.Partial, Failed: all.Failed, NA: all.NA, Total: all.Total,
		Indexable: tally(checks, func(l int) bool { return l == 4 }),
	}
}

// Apply fills a result's levels, currentLevel and score from its checks.
func Apply(r *report.Result) {
	r.Levels = Levels(r.Checks)
	r.CurrentLevel = CurrentLevel(r.Levels)
	r.Score = Summary(r.Checks, r.CurrentLevel)
}

// Read is the read suite's score: each applicable read check (Of > 0)
// counts the share of pages it passed, so 3 failing pages of 50 cost a
// check 6% of its weight, not all of it. The counts are the checks' own.
func Read(checks []report.Check, counts []report.ReadCount) report.Tally {
	var t report.Tally
	share := 0.0
	for _, c := range checks {
		t.Total++
		var n report.ReadCount
		for _, x := range counts {
			if x.ID == c.ID {
				n = x
			}
		}
		if c.Status == report.NA {
			t.NA++
			continue
		}
		if n.Of == 0 { // a check that could not be evaluated: a fail, worth nothing
			t.Failed++
			continue
		}
		share += float64(n.OK) / float64(n.Of)
		switch c.Status {
		case report.Pass:
			t.Passed++
		case report.Partial:
			t.Partial++
		default:
			t.Failed++
		}
	}
	if applicable := t.Total - t.NA; applicable > 0 {
		t.Value = int(math.Round(100 * share / float64(applicable)))
	}
	return t
}
