package score

import (
	"testing"

	"github.com/agentready/agentready/engine/report"
)

func readChecks(statuses ...report.Status) []report.Check {
	out := make([]report.Check, len(statuses))
	for i, s := range statuses {
		out[i] = report.Check{ID: "R." + string(rune('1'+i)), Status: s}
	}
	return out
}

// The read score credits each applicable check with the share of pages
// that passed it: 3 failing pages of 50 cost a check 6%, not all of it.
func TestReadCreditsShare(t *testing.T) {
	cases := []struct {
		name   string
		checks []report.Check
		counts []report.ReadCount
		want   report.Tally
	}{
		{"3 failing of 50", readChecks(report.Partial), []report.ReadCount{{ID: "R.1", OK: 47, Of: 50}},
			report.Tally{Value: 94, Partial: 1, Total: 1}},
		{"all pass", readChecks(report.Pass, report.Pass), []report.ReadCount{{ID: "R.1", OK: 10, Of: 10}, {ID: "R.2", OK: 1, Of: 1}},
			report.Tally{Value: 100, Passed: 2, Total: 2}},
		{"a pass and a 47/50", readChecks(report.Pass, report.Partial), []report.ReadCount{{ID: "R.1", OK: 10, Of: 10}, {ID: "R.2", OK: 47, Of: 50}},
			report.Tally{Value: 97, Passed: 1, Partial: 1, Total: 2}},
		{"a failing check still earns its share", readChecks(report.Fail), []report.ReadCount{{ID: "R.1", OK: 2, Of: 10}},
			report.Tally{Value: 20, Failed: 1, Total: 1}},
		{"na checks are left out", readChecks(report.NA, report.Pass, report.Fail), []report.ReadCount{{ID: "R.1"}, {ID: "R.2", OK: 3, Of: 3}, {ID: "R.3", OK: 0, Of: 4}},
			report.Tally{Value: 50, Passed: 1, Failed: 1, NA: 1, Total: 3}},
		{"counts in another order", readChecks(report.Partial, report.Pass), []report.ReadCount{{ID: "R.2", OK: 4, Of: 4}, {ID: "R.1", OK: 1, Of: 2}},
			report.Tally{Value: 75, Passed: 1, Partial: 1, Total: 2}},
		{"nothing", nil, nil, report.Tally{}},
		{"all na", readChecks(report.NA, report.NA), nil, report.Tally{NA: 2, Total: 2}},
	}
	for _, c := range cases {
		if got := Read(c.checks, c.counts); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// A read check that could not be evaluated (its input missing, or it
// panicked) is reported as fail with no count; the score must count it as
// the failure the report shows, not drop it as not applicable.
func TestReadCountsUnevaluatedFailure(t *testing.T) {
	got := Read(readChecks(report.Pass, report.Fail), []report.ReadCount{{ID: "R.1", OK: 4, Of: 4}, {ID: "R.2"}})
	if got.Failed != 1 || got.NA != 0 || got.Value != 50 {
		t.Errorf("%+v: the failed check vanished from the score", got)
	}
}
