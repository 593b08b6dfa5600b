package report_test

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/report"
)

// check is a check of a report "now", with its message.
func check(id string, st report.Status, msg string) report.Check {
	return report.Check{ID: id, Name: "check " + id, Status: st, Passed: st == report.Pass, Message: msg}
}

// mark is a check as the summary before kept it.
func mark(id string, st report.Status, msg string) report.Mark {
	return report.Mark{ID: id, Status: st, Message: report.MessageHash(msg)}
}

func ids(cs []report.Change) string {
	var s []string
	for _, c := range cs {
		s = append(s, c.ID+":"+string(c.From)+">"+string(c.To))
	}
	return strings.Join(s, " ")
}

func TestCompare(t *testing.T) {
	before := report.Summary{Timestamp: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC), Score: 40, Grade: "F", Level: 0, LevelName: "Not Ready", Checks: report.Marks{
		mark("1.1", report.Fail, "no llms.txt"),
		mark("1.2", report.Partial, "legacy path"),
		mark("1.3", report.Fail, "missing"),
		mark("1.4", report.Pass, "ok"),
		mark("1.5", report.Pass, "3 of 3"),
		mark("1.6", report.Fail, "404"),
		mark("1.7", report.NA, "no API"),
		mark("1.8", report.Pass, "found"),
		mark("1.9", report.Partial, "half"),
		mark("1.10", report.Fail, "gone"),
		mark("9.9", report.Fail, "a check the catalog no longer has"),
	}}
	now := &report.Result{Checks: []report.Check{
		check("1.1", report.Pass, "llms.txt found"),        // fail → pass
		check("1.2", report.Fail, "no card"),               // partial → fail
		check("1.3", report.Partial, "half there"),         // fail → partial
		check("1.4", report.Pass, "ok"),                    // the same
		check("1.5", report.Pass, "2 of 3"),                // pass, another message
		check("1.6", report.Fail, "500"),                   // fail, another message
		check("1.7", report.Pass, "API found"),             // na → pass
		check("1.8", report.NA, "no API any more"),         // pass → na
		check("1.9", report.Partial, "half"),               // the same
		check("1.10", report.Fail, "gone"),                 // the same
		check("1.11", report.Fail, "added to the catalog"), // unknown before: not compared
	}}
	p := report.Compare(before, now)
	if !p.Timestamp.Equal(before.Timestamp) || p.Score != 40 || p.Grade != "F" || p.Level != 0 || p.LevelName != "Not Ready" {
		t.Errorf("the previous scan's numbers: %+v", p)
	}
	for _, c := range []struct {
		name string
		got  []report.Change
		want string
	}{
		{"newly passing", p.NewlyPassing, "1.1:fail>pass 1.7:na>pass"},
		{"newly failing", p.NewlyFailing, "1.2:partial>fail"},
		{"changed", p.Changed, "1.3:fail>partial 1.5:pass>pass 1.6:fail>fail 1.8:pass>na"},
	} {
		if got := ids(c.got); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	if c := p.Changed[1]; c.Name != "check 1.5" || c.Message != "2 of 3" {
		t.Errorf("a change carries the check's name and its message now: %+v", c)
	}

	// Nothing changed: every list is there, empty.
	same := report.Compare(now.Summary(), now)
	b, _ := json.Marshal(same)
	for _, k := range []string{`"newlyPassing":[]`, `"newlyFailing":[]`, `"changed":[]`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("%s not in %s", k, b)
		}
	}
}

// Two real reports (the golden partial and full fixture sites, as if one
// site went from the first to the second): every check whose verdict or
// message differs is listed once, in the list its statuses say, in catalog
// order; the others are not.
func TestCompareRealReports(t *testing.T) {
	read := func(name string) *report.Result {
		b, err := os.ReadFile("../testdata/golden/" + name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var r report.Result
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		return &r
	}
	before, now := read("partial"), read("full")
	p := report.Compare(before.Summary(), now)
	listed := map[string]string{}
	for list, cs := range map[string][]report.Change{"newlyPassing": p.NewlyPassing, "newlyFailing": p.NewlyFailing, "changed": p.Changed} {
		if !slices.IsSortedFunc(cs, func(a, b report.Change) int {
			if checks.Less(a.ID, b.ID) {
				return -1
			}
			return 1
		}) {
			t.Errorf("%s is not in catalog order: %s", list, ids(cs))
		}
		for _, c := range cs {
			if listed[c.ID] != "" {
				t.Errorf("%s is listed in %s and %s", c.ID, listed[c.ID], list)
			}
			listed[c.ID] = list
		}
	}
	for _, c := range now.Checks {
		was, _ := before.Check(c.ID)
		want := ""
		switch {
		case was.Status == c.Status && was.Message == c.Message:
		case c.Status == report.Pass && was.Status != report.Pass:
			want = "newlyPassing"
		case c.Status == report.Fail && was.Status != report.Fail:
			want = "newlyFailing"
		default:
			want = "changed"
		}
		if listed[c.ID] != want {
			t.Errorf("%s (%s %q → %s %q) is in %q, want %q", c.ID, was.Status, was.Message, c.Status, c.Message, listed[c.ID], want)
		}
	}
	if len(p.NewlyPassing) == 0 || len(p.Changed) == 0 {
		t.Errorf("partial → full should pass checks and change others: %+v", p)
	}
}

func TestMarksText(t *testing.T) {
	m := report.Marks{mark("1.1", report.Pass, "a"), mark("1.10", report.Partial, "b"), mark("2.3", report.Fail, ""), mark("4.12", report.NA, "d")}
	b, err := m.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	if want := 4*9 + len("1.1,1.10,2.3,4.12"); len(b) != want {
		t.Errorf("%q: %d bytes, want %d", b, len(b), want)
	}
	var back report.Marks
	if err := back.UnmarshalText(b); err != nil || !reflect.DeepEqual(back, m) {
		t.Fatalf("round trip of %q: %+v %v", b, back, err)
	}
	// In JSON it is one string.
	j, _ := json.Marshal(struct {
		C report.Marks `json:"c"`
	}{m})
	if !strings.HasPrefix(string(j), `{"c":"1.1P`) {
		t.Errorf("JSON: %s", j)
	}

	for _, bad := range []report.Marks{{{ID: "1.1", Status: "unknown"}}, {{ID: "", Status: report.Pass}}, {{ID: "1,1", Status: report.Pass}}, {{ID: strings.Repeat("1", 33), Status: report.Pass}}} {
		if b, err := bad.MarshalText(); err == nil {
			t.Errorf("%+v written as %q", bad, b)
		}
	}
	for _, bad := range []string{"1.1", "1.1P0000000", "1.1X00000000", "P00000000", "1.1P0000000g", "1.1P00000000,", ",1.1P00000000", "1.1P-0000000", "1.1P0x000000", "1.1P00000000,,1.2F00000000"} {
		keep := report.Marks{mark("9.9", report.Pass, "")}
		if err := keep.UnmarshalText([]byte(bad)); err == nil || len(keep) != 1 || keep[0].ID != "9.9" {
			t.Errorf("%q read as %+v (%v)", bad, keep, err)
		}
	}
}

func FuzzMarks(f *testing.F) {
	f.Add("1.1P0a1b2c3d,1.2F00000000")
	f.Add("1.10H0000ffff")
	f.Add("")
	f.Add("xN12345678")
	f.Fuzz(func(t *testing.T, s string) {
		var m report.Marks
		if err := m.UnmarshalText([]byte(s)); err != nil {
			return
		}
		b, err := m.MarshalText()
		if err != nil {
			t.Fatalf("%q read as %+v, which does not write back: %v", s, m, err)
		}
		var again report.Marks
		if err := again.UnmarshalText(b); err != nil || !reflect.DeepEqual(again, m) {
			t.Fatalf("%q → %+v → %q → %+v (%v)", s, m, b, again, err)
		}
	})
}
