package profile

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/engine/score"
)

// result is a scanned result with the 48 ids (levels 1–4 by prefix),
// statuses as given (fail when not), a read suite of three checks and a
// detected profile.
func result(status map[string]report.Status) *report.Result {
	res := &report.Result{URL: "https://a.example/"}
	for _, id := range []string{"1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "1.7", "1.8", "1.9", "1.10", "1.11", "1.12", "1.13", "1.14", "1.15", "1.16", "1.17", "1.18",
		"2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8", "2.9", "2.10", "2.11",
		"3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7",
		"4.1", "4.2", "4.3", "4.4", "4.5", "4.6", "4.7", "4.8", "4.9", "4.10", "4.11", "4.12"} {
		s, ok := status[id]
		if !ok {
			s = report.Fail
		}
		res.Checks = append(res.Checks, report.Check{ID: id, Name: "Check " + id, Status: s, Level: int(id[0] - '0')})
	}
	score.Apply(res)
	res.Read = &report.Read{
		Checks: []report.Check{{ID: "R.1", Name: "Page Size", Status: report.Pass}, {ID: "R.5", Name: "Markdown at .md URLs", Status: report.Fail}, {ID: "R.12", Name: "Coverage", Status: report.NA}},
		Counts: []report.ReadCount{{ID: "R.1", OK: 10, Of: 10}, {ID: "R.5", OK: 0, Of: 10}, {ID: "R.12"}},
	}
	res.Read.Score = score.Read(res.Read.Checks, res.Read.Counts)
	res.Profile = &report.Profile{Detected: "docs", Evidence: []string{"it is docs"}, Waivers: []report.Waiver{}}
	return res
}

func naIDs(p *report.Profile) []string {
	var out []string
	for _, n := range p.NotApplicable {
		out = append(out, n.ID)
	}
	return out
}

func findNA(p *report.Profile, id string) (report.NotApplicable, bool) {
	for _, n := range p.NotApplicable {
		if n.ID == id {
			return n, true
		}
	}
	return report.NotApplicable{}, false
}

func TestApplySource(t *testing.T) {
	cases := []struct {
		name                    string
		detected, declared, req string
		id, source              string
	}{
		{"detected", "docs", "", "", "docs", "detected"},
		{"declared beats detected", "docs", "api", "", "api", "declared"},
		{"requested beats declared", "docs", "api", "commerce", "commerce", "requested"},
		{"requested beats detected", "content", "", "application", "application", "requested"},
		{"requested is trimmed and lower-cased", "docs", "", "  API ", "api", "requested"},
		{"an unknown detection falls back to content", "bogus", "", "", "content", "detected"},
	}
	for _, c := range cases {
		res := result(nil)
		res.Profile.Detected, res.Profile.Declared = c.detected, c.declared
		if err := Apply(res, c.req, nil); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if res.Profile.ID != c.id || res.Profile.Source != c.source || res.Profile.Detected != c.detected || res.Profile.Declared != c.declared {
			t.Errorf("%s: id %q source %q detected %q declared %q", c.name, res.Profile.ID, res.Profile.Source, res.Profile.Detected, res.Profile.Declared)
		}
	}
}

func TestApplyUnknownProfile(t *testing.T) {
	res := result(nil)
	Apply(res, "", nil)
	before, _ := json.Marshal(res)
	for _, req := range []string{"blog", "docs ", "DOCSX", "content,docs"} {
		err := Apply(res, req, nil)
		if req == "docs " {
			if err != nil {
				t.Errorf("%q: %v", req, err)
			}
			Apply(res, "", nil)
			continue
		}
		var unknown ErrUnknown
		if !errors.As(err, &unknown) {
			t.Errorf("%q: err %v, want ErrUnknown", req, err)
		}
	}
	if after, _ := json.Marshal(res); string(after) != string(before) {
		t.Errorf("a failed Apply changed the result")
	}
}

// The profile never changes checks[], score or the read suite.
func TestApplyLeavesChecksAndScore(t *testing.T) {
	res := result(map[string]report.Status{"1.1": report.Pass, "1.14": report.Pass, "2.6": report.NA, "4.12": report.Partial})
	checks, sc := slices.Clone(res.Checks), res.Score
	read, _ := json.Marshal(res.Read)
	for _, id := range report.Profiles {
		if err := Apply(res, id, []report.Waiver{{Check: "1.1", Reason: "r"}, {Check: "R.5", Reason: "r"}}); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(res.Checks, checks) || res.Score != sc {
			t.Fatalf("%s: checks or score changed", id)
		}
		if after, _ := json.Marshal(res.Read); string(after) != string(read) {
			t.Fatalf("%s: the read suite changed", id)
		}
	}
}

func TestApplyNotApplicable(t *testing.T) {
	res := result(map[string]report.Status{"1.2": report.Pass, "1.3": report.NA, "1.14": report.Partial, "2.6": report.NA})
	if err := Apply(res, "docs", nil); err != nil {
		t.Fatal(err)
	}
	p := res.Profile
	// docs skips the API checks; 1.3 is already na and is not listed.
	if _, ok := findNA(p, "1.3"); ok {
		t.Error("1.3, already na, is listed")
	}
	if _, ok := findNA(p, "2.6"); ok {
		t.Error("2.6, already na, is listed")
	}
	n, ok := findNA(p, "1.2")
	if !ok || n.By != "profile" || n.Status != report.Pass || n.Reason == "" || n.Name != "Check 1.2" {
		t.Errorf("1.2: %+v", n)
	}
	if n, ok := findNA(p, "2.1"); !ok || n.Status != report.Fail {
		t.Errorf("2.1: %+v (want its own fail)", n)
	}
	if _, ok := findNA(p, "1.14"); ok {
		t.Error("docs does not skip 1.14")
	}
	// Every id the rule skips that is not na is listed, and nothing else.
	rule, _ := rule("docs")
	for id := range rule.Skip {
		c, _ := res.Check(id)
		if _, listed := findNA(p, id); listed == (c.Status == report.NA) {
			t.Errorf("%s (status %s): listed %v", id, c.Status, listed)
		}
	}
	if len(p.NotApplicable) != len(rule.Skip)-2 {
		t.Errorf("%d not applicable, want %d", len(p.NotApplicable), len(rule.Skip)-2)
	}
	// The score counts them as na: 48 total, na = the 2 already na plus those listed.
	if p.Score.Total != 48 || p.Score.NA != 2+len(p.NotApplicable) || p.Grade != score.Grade(p.Score.Value) {
		t.Errorf("score %+v grade %s", p.Score, p.Grade)
	}
	// api skips only 1.14 and 1.18.
	Apply(res, "api", nil)
	if got := naIDs(res.Profile); !slices.Equal(got, []string{"1.14", "1.18"}) {
		t.Errorf("api: %v", got)
	}
	if n, _ := findNA(res.Profile, "1.14"); n.Status != report.Partial {
		t.Errorf("1.14 keeps its own partial: %+v", n)
	}
}

// Skipping checks raises the profile's score when they failed.
func TestApplyScoreRises(t *testing.T) {
	res := result(map[string]report.Status{"1.1": report.Pass, "1.4": report.Pass, "1.13": report.Pass})
	Apply(res, "docs", nil)
	if res.Profile.Score.Value <= res.Score.Value {
		t.Errorf("docs score %d, 48-check score %d: skipping failed API checks should raise it", res.Profile.Score.Value, res.Score.Value)
	}
}

func TestApplyWaivers(t *testing.T) {
	res := result(map[string]report.Status{"1.14": report.Pass, "4.11": report.NA})
	res.Profile.Waivers = []report.Waiver{{Check: "1.15", Reason: "site says so", From: "site"}}
	cfg := []report.Waiver{{Check: "1.14", Reason: "no feed here", From: "site"}, {Check: "4.11", Reason: "already na"}, {Check: "R.5", Reason: "no twins"}, {Check: "9.9", Reason: "nothing"}}
	if err := Apply(res, "api", cfg); err != nil {
		t.Fatal(err)
	}
	p := res.Profile
	var from []string
	for _, w := range p.Waivers {
		from = append(from, w.Check+":"+w.From)
	}
	if !slices.Equal(from, []string{"1.15:site", "1.14:config", "4.11:config", "R.5:config", "9.9:config"}) {
		t.Errorf("waivers %v", from)
	}
	// A waiver beats the profile's own reason; an na check is not listed.
	if n, ok := findNA(p, "1.14"); !ok || n.By != "waiver" || n.Reason != "no feed here" || n.Status != report.Pass {
		t.Errorf("1.14: %+v", n)
	}
	if n, ok := findNA(p, "1.15"); !ok || n.By != "waiver" || n.Reason != "site says so" {
		t.Errorf("1.15: %+v", n)
	}
	if _, ok := findNA(p, "4.11"); ok {
		t.Error("4.11, already na, is listed")
	}
	// A read check's waiver takes it out of the read score, not the 48.
	if n, ok := findNA(p, "R.5"); !ok || n.By != "waiver" || n.Status != report.Fail {
		t.Errorf("R.5: %+v", n)
	}
	if p.ReadScore == nil || p.ReadScore.Value != 100 || res.Read.Score.Value != 50 {
		t.Errorf("read score %+v (the suite's own %d)", p.ReadScore, res.Read.Score.Value)
	}
	// New config waivers replace the previous ones; the site's stay.
	Apply(res, "", []report.Waiver{{Check: "1.5", Reason: "new"}})
	from = nil
	for _, w := range res.Profile.Waivers {
		from = append(from, w.Check+":"+w.From)
	}
	if !slices.Equal(from, []string{"1.15:site", "1.5:config"}) {
		t.Errorf("after a second Apply: %v", from)
	}
	if _, ok := findNA(res.Profile, "1.14"); ok {
		t.Error("the dropped config waiver of 1.14 still applies")
	}
	// No waivers at all: an empty list, not null.
	res.Profile.Waivers = nil
	Apply(res, "", nil)
	if b, _ := json.Marshal(res.Profile); !json.Valid(b) || res.Profile.Waivers == nil {
		t.Errorf("waivers nil: %s", b)
	}
}

func TestApplyOthers(t *testing.T) {
	res := result(nil)
	Apply(res, "commerce", []report.Waiver{{Check: "4.1", Reason: "r"}})
	var ids []string
	for _, o := range res.Profile.Others {
		ids = append(ids, o.ID)
		r, _ := rule(o.ID)
		// Each other profile skips its own checks and keeps the waivers.
		if len(o.NotApplicable) != len(r.Skip)+1 || !slices.Contains(o.NotApplicable, "4.1") || o.Grade != score.Grade(o.Value) {
			t.Errorf("%s: na %v grade %s value %d", o.ID, o.NotApplicable, o.Grade, o.Value)
		}
	}
	if !slices.Equal(ids, []string{"content", "docs", "api", "application"}) {
		t.Errorf("others %v", ids)
	}
	// Judged as docs, docs's score is what Others said it would be.
	want := res.Profile.Others[1]
	Apply(res, "docs", []report.Waiver{{Check: "4.1", Reason: "r"}})
	if res.Profile.Score.Value != want.Value {
		t.Errorf("docs scores %d, Others said %d", res.Profile.Score.Value, want.Value)
	}
}

// A report scanned before profiles existed has no Profile and no read suite.
func TestApplyOldReport(t *testing.T) {
	res := result(nil)
	res.Profile, res.Read = nil, nil
	if err := Apply(res, "", nil); err != nil {
		t.Fatal(err)
	}
	p := res.Profile
	if p == nil || p.ID != "content" || p.Source != "detected" || len(p.Evidence) == 0 || p.ReadScore != nil || len(p.Others) != 4 || p.Waivers == nil {
		t.Fatalf("%+v", p)
	}
	res.Profile = nil
	if err := Apply(res, "api", []report.Waiver{{Check: "1.1", Reason: "r"}}); err != nil || res.Profile.ID != "api" || res.Profile.Source != "requested" {
		t.Errorf("requested on an old report: %v %+v", err, res.Profile)
	}
}

// Every rule names real web checks and the ids the spec lists.
func TestRules(t *testing.T) {
	want := map[string][]string{
		"api":         {"1.14", "1.18"},
		"application": {"1.14", "4.12"},
		"commerce":    {"1.14", "1.16", "1.3", "2.1", "2.10", "2.2", "2.3", "2.4", "2.5", "2.7", "2.8", "2.9", "3.1", "3.2", "3.3", "3.4", "3.5"},
		"content":     {"1.10", "1.12", "1.16", "1.18", "1.2", "1.3", "1.8", "2.1", "2.10", "2.11", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8", "2.9", "3.1", "3.2", "3.3", "3.4", "3.5", "3.7"},
	}
	want["docs"] = want["content"]
	var ids []string
	for _, r := range Rules {
		ids = append(ids, r.ID)
		var got []string
		for id, why := range r.Skip {
			got = append(got, id)
			if why == "" {
				t.Errorf("%s skips %s without a reason", r.ID, id)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want[r.ID]) {
			t.Errorf("%s skips %v, want %v", r.ID, got, want[r.ID])
		}
		if !Known(r.ID) || r.Description == "" {
			t.Errorf("%s: known %v description %q", r.ID, Known(r.ID), r.Description)
		}
	}
	if !slices.Equal(ids, report.Profiles) || Known("blog") || Known("") {
		t.Errorf("rules %v, profiles %v", ids, report.Profiles)
	}
}
