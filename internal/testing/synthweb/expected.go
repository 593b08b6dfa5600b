package synthweb

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/engine/score"
	"github.com/agentready/agentready/survey"
)

// Expected is the adoption report a survey of a list must write, counted
// from the pinned verdicts site by site, without the survey's code: overall
// and for the top 1k and 10k.
type Expected struct {
	Listed, Duplicates, Invalid int
	Errors                      map[string]int
	slices                      map[int]*expectedSlice // 0 = all, else the rank threshold
}

type expectedSlice struct {
	sites, unreachable int
	checks, signals    map[string]survey.Counts
	levels, scores     []int
}

// NewExpected starts an empty count.
func NewExpected() *Expected {
	e := &Expected{Errors: map[string]int{}, slices: map[int]*expectedSlice{}}
	for _, k := range []int{0, 1000, 10000} {
		e.slices[k] = &expectedSlice{checks: map[string]survey.Counts{}, signals: map[string]survey.Counts{}, levels: make([]int, 4), scores: make([]int, 10)}
	}
	return e
}

// Add counts a listed site of the given rank (0: unranked) that must be
// judged v.
func (e *Expected) Add(rank int, v Verdicts) {
	e.Listed++
	if v.Error != "" {
		k := v.Error
		if v.Cause != "" {
			k += "/" + v.Cause
		}
		e.Errors[k]++
	}
	var level, value int
	if v.Error == "" {
		// The score and level follow from the statuses alone.
		res := &report.Result{}
		for _, c := range checks.Web() {
			st := report.Status(v.Checks[c.ID])
			res.Checks = append(res.Checks, report.Check{ID: c.ID, Level: c.Level, Status: st, Passed: st == report.Pass})
		}
		score.Apply(res)
		level, value = res.CurrentLevel, res.Score.Value
	}
	for top, s := range e.slices {
		if top != 0 && (rank <= 0 || rank > top) {
			continue
		}
		if v.Error != "" {
			s.unreachable++
			continue
		}
		s.sites++
		for id, st := range v.Checks {
			c := s.checks[id]
			c.Add(report.Status(st))
			s.checks[id] = c
		}
		for id, st := range v.Signals {
			c := s.signals[id]
			c.Add(report.Status(st))
			s.signals[id] = c
		}
		s.levels[level]++
		s.scores[min(value/10, 9)]++
	}
}

// Compare lists every count of ad that is not the expected one (the
// methods aside); maxRank is the list's highest rank, which decides the
// buckets the report has.
func (e *Expected) Compare(ad *survey.Adoption, maxRank int) error {
	var diffs []string
	eq := func(what string, got, want any) {
		if !reflect.DeepEqual(got, want) {
			diffs = append(diffs, fmt.Sprintf("%s: got %v, want %v", what, got, want))
		}
	}
	eq("listed", ad.Listed, e.Listed)
	eq("duplicates", ad.Skipped.Duplicates, e.Duplicates)
	eq("invalid", ad.Skipped.Invalid, e.Invalid)
	eq("errors", ad.Errors, e.Errors)
	slices := map[string]survey.Slice{"all": ad.Slice}
	for _, bk := range ad.Buckets {
		slices[bk.Name] = bk.Slice
	}
	for top, ws := range e.slices {
		name := "all"
		if top != 0 {
			if maxRank == 0 || (top > 1000 && top/10 >= maxRank) {
				continue // the report stops at the first bucket holding every rank
			}
			name = fmt.Sprintf("top %dk", top/1000)
		}
		got, ok := slices[name]
		if !ok {
			diffs = append(diffs, name+": missing")
			continue
		}
		eq(name+" sites", got.Sites, ws.sites)
		eq(name+" unreachable", got.Unreachable, ws.unreachable)
		eq(name+" levels", got.Levels, ws.levels)
		eq(name+" scores", got.Scores, ws.scores)
		for _, pair := range []struct {
			what string
			got  survey.Tally
			want map[string]survey.Counts
		}{{"check", got.Checks, ws.checks}, {"signal", got.Signals, ws.signals}} {
			ids := map[string]bool{}
			for id := range pair.got {
				ids[id] = true
			}
			for id := range pair.want {
				ids[id] = true
			}
			for id := range ids {
				var g survey.Counts
				if c := pair.got[id]; c != nil {
					g = *c
				}
				eq(fmt.Sprintf("%s %s %s", name, pair.what, id), g, pair.want[id])
			}
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		if len(diffs) > 20 {
			diffs = append(diffs[:20], fmt.Sprintf("… and %d more", len(diffs)-20))
		}
		return fmt.Errorf("the report differs from the web's known counts:\n    %s", strings.Join(diffs, "\n    "))
	}
	return nil
}
