package score

import (
	"fmt"
	"testing"

	"github.com/agentready/agentready/engine/report"
)

// checks builds a result set: per level, counts of pass, partial, fail, na.
func checks(levels map[int][4]int) []report.Check {
	var out []report.Check
	for l, c := range levels {
		for i, st := range []report.Status{report.Pass, report.Partial, report.Fail, report.NA} {
			for n := 0; n < c[i]; n++ {
				out = append(out, report.Check{ID: fmt.Sprintf("%d.%d", l, len(out)), Level: l, Status: st})
			}
		}
	}
	return out
}

func TestCurrentLevel(t *testing.T) {
	cases := []struct {
		name   string
		levels map[int][4]int
		want   int
	}{
		{"nothing", map[int][4]int{1: {0, 0, 18, 0}}, 0},
		{"half of level 1", map[int][4]int{1: {9, 0, 9, 0}, 2: {0, 0, 11, 0}}, 1},
		{"level 2 by the main path", map[int][4]int{1: {9, 0, 9, 0}, 2: {6, 0, 5, 0}, 3: {0, 0, 7, 0}}, 2},
		{"level 2 by the strong-API path", map[int][4]int{1: {7, 0, 11, 0}, 2: {9, 0, 2, 0}}, 2},
		{"level 3", map[int][4]int{1: {10, 0, 8, 0}, 2: {6, 0, 5, 0}, 3: {4, 0, 3, 0}}, 3},
		// The peer reached level 3+ with 39% of level 1; we never skip level 1.
		{"peer's shortcut refused", map[int][4]int{1: {7, 2, 9, 0}, 2: {4, 0, 7, 0}, 3: {6, 0, 1, 0}}, 0},
		{"level 3 via strong level 3 needs level 1", map[int][4]int{1: {9, 0, 9, 0}, 2: {4, 0, 7, 0}, 3: {6, 0, 1, 0}}, 3},
		{"na shrinks the denominator", map[int][4]int{1: {9, 0, 0, 9}, 2: {0, 0, 0, 11}}, 1},
		{"nothing applicable is rate 0", map[int][4]int{1: {9, 0, 9, 0}, 2: {0, 0, 0, 11}, 3: {0, 0, 0, 7}}, 1},
	}
	for _, c := range cases {
		if got := CurrentLevel(Levels(checks(c.levels))); got != c.want {
			t.Errorf("%s: level %d, want %d", c.name, got, c.want)
		}
	}
}

func TestSummary(t *testing.T) {
	cs := checks(map[int][4]int{1: {10, 4, 4, 0}, 2: {2, 0, 0, 9}, 3: {0, 0, 1, 6}, 4: {6, 2, 4, 0}, 5: {10, 0, 0, 0}})
	lv := Levels(cs)
	if len(lv) != 5 || lv[0].Failed != 8 || lv[1].NA != 9 || !lv[1].Complete || lv[2].Complete || !lv[4].Complete {
		t.Errorf("levels %+v", lv)
	}
	s := Summary(cs, 1)
	// applicable over 1–4: 18+2+1+12 = 33; pass 18, partial 6 → (18+3)/33 = 63.6 → 64
	if s.Value != 64 || s.Grade != "C" || s.Passed != 18 || s.Partial != 6 || s.Total != 48 || s.NA != 15 {
		t.Errorf("summary %+v", s)
	}
	if s.Indexable.Value != 58 || s.Indexable.Total != 12 {
		t.Errorf("indexable %+v", s.Indexable)
	}
	for v, g := range map[int]string{100: "A", 90: "A", 89: "B", 75: "B", 60: "C", 40: "D", 39: "F", 0: "F"} {
		if Grade(v) != g {
			t.Errorf("Grade(%d) = %s", v, Grade(v))
		}
	}
}
