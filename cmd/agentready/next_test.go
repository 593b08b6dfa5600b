package main

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/agentready/agentready/engine/advice"
	"github.com/agentready/agentready/engine/report"
)

// scan --recommend renders the engine's plan: with --json
// it is advice.For of the report a plain --json scan gives, and as text its
// steps come in the plan's order, each with its fix, the starters filled in
// for the scanned site.
func TestScanRecommend(t *testing.T) {
	url := site(t, "peer")
	code, out, stderr := runCLI("scan", "--json", url)
	if code != exitOK {
		t.Fatalf("scan --json: exit %d: %s", code, stderr)
	}
	var res report.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	want := advice.For(&res)
	if want.TargetLevel == 0 || len(want.Steps) < 5 {
		t.Fatalf("the peer site's plan proves little: %+v", want)
	}

	code, out, stderr = runCLI("scan", "--json", "--recommend", url)
	if code != exitOK {
		t.Fatalf("scan --json --recommend: exit %d: %s", code, stderr)
	}
	var got advice.Plan
	if err := json.Unmarshal([]byte(out), &got); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("--json --recommend is not the engine's plan (%v):\n%s", err, out)
	}

	code, out, stderr = runCLI("scan", url, "--recommend")
	if code != exitOK {
		t.Fatalf("scan --recommend: exit %d: %s", code, stderr)
	}
	_, next, ok := strings.Cut(out, "\nNext steps: ")
	if !ok {
		t.Fatalf("no next steps in:\n%s", out)
	}
	var order []string
	for _, m := range regexp.MustCompile(`(?m)^ +\d+\. \S+ (\d+\.\d+) `).FindAllStringSubmatch(next, -1) {
		order = append(order, m[1])
	}
	var wantOrder []string
	for _, s := range want.Steps {
		wantOrder = append(wantOrder, s.ID)
		if !strings.Contains(next, "→ "+s.Fix+"\n") {
			t.Errorf("step %s: its fix is missing", s.ID)
		}
	}
	if !reflect.DeepEqual(order, wantOrder) {
		t.Errorf("text order %v, the plan's %v", order, wantOrder)
	}
	if !strings.HasPrefix(next, "4 more passing checks reach level 1 Discoverable (4 of level 1)") {
		t.Errorf("heading: %.100s", next)
	}
	host := strings.TrimPrefix(url, "http://")
	if !strings.Contains(next, "            name: "+strings.NewReplacer(".", "-", ":", "-").Replace(strings.Split(host, ":")[0])) {
		t.Errorf("no skill.md starter filled in for %s:\n%s", host, next)
	}
	// Without the flag the report is what it was (the README examples).
	if _, out, _ := runCLI("scan", url); strings.Contains(out, "Next steps") {
		t.Error("next steps printed without --recommend")
	}
}
