package mcpserver

import (
	"strings"
	"testing"

	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/engine/score"
)

func TestRecommendOrder(t *testing.T) {
	r := &report.Result{URL: "https://shop.example/"}
	add := func(id string, level int, st report.Status) {
		r.Checks = append(r.Checks, report.Check{ID: id, Name: "n" + id, Level: level, Status: st, Message: "m", Recommendation: "fix " + id})
	}
	add("1.1", 1, report.Fail)
	add("1.2", 1, report.Partial)
	add("1.3", 1, report.Pass)
	add("1.13", 1, report.Fail)
	add("1.16", 1, report.Fail)
	add("2.1", 2, report.Fail)
	add("4.6", 4, report.Fail)
	score.Apply(r)
	out := recommend(r)
	if out.CurrentLevel != 0 || out.TargetLevel != 1 || out.PassesNeeded != 2 { // 3 of 5 must pass, 1 does
		t.Fatalf("%+v", out)
	}
	var ids []string
	for _, rec := range out.Recommendations {
		ids = append(ids, rec.ID)
	}
	// Level 1 only (the target), fails before partials, file-publishing fixes first.
	if got := strings.Join(ids, " "); got != "1.1 1.16 1.13 1.2" {
		t.Errorf("order %s", got)
	}
	if s := out.Recommendations[0].Snippet; !strings.HasPrefix(s, "# shop.example\n") || !strings.Contains(s, "https://shop.example/docs/") {
		t.Errorf("llms.txt starter: %q", s)
	}
}

func TestSnippetsAreFilledIn(t *testing.T) {
	for _, id := range []string{"1.1", "1.2", "1.12", "1.16", "4.8", "4.9"} {
		s := snippet(id, "https://www.acme.example/")
		if s == "" || strings.Contains(s, "%!") || (id != "1.1" && !strings.Contains(s, "acme.example")) {
			t.Errorf("%s: %q", id, s)
		}
	}
	if got := reverseDNS("www.acme.example"); got != "example.acme" {
		t.Errorf("reverseDNS %q", got)
	}
}
