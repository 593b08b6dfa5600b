package monitor

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/origin/store"
)

// An event's previous: none on the baseline; the previous run's numbers
// and what changed since when the run kept its checks; the numbers and
// null lists when it did not (a run recorded before runs kept them).
func TestPreviousOf(t *testing.T) {
	at := time.Date(2026, 5, 11, 9, 0, 0, 0, time.UTC)
	before := &report.Result{Timestamp: at, Checks: []report.Check{
		{ID: "1.1", Name: "llms.txt", Status: report.Partial, Message: "no title"},
		{ID: "1.2", Name: "Agent card", Status: report.Pass, Message: "found"},
		{ID: "1.3", Name: "OpenAPI", Status: report.Fail, Message: "missing"},
	}}
	now := &report.Result{Checks: []report.Check{
		{ID: "1.1", Name: "llms.txt", Status: report.Pass, Message: "found"},
		{ID: "1.2", Name: "Agent card", Status: report.Fail, Message: "gone"},
		{ID: "1.3", Name: "OpenAPI", Status: report.Fail, Message: "still missing"},
	}}
	kept := store.RunState{Baseline: true, Score: 64, Level: 1, Grade: "D", LevelName: "Discoverable", LastRun: at.Add(time.Minute), ScannedAt: at, Checks: before.Summary().Checks}
	old := kept
	old.ScannedAt, old.Checks = time.Time{}, nil

	if p := previousOf(store.RunState{}, now); p != nil {
		t.Errorf("the baseline run has a previous: %+v", p)
	}
	p := previousOf(kept, now)
	b, _ := json.Marshal(p)
	for _, want := range []string{`"score":64`, `"level":1`, `"timestamp":"2026-05-11T09:00:00Z"`, `"grade":"D"`, `"level_name":"Discoverable"`,
		`"newly_passing":[{"id":"1.1","name":"llms.txt","from":"partial","to":"pass","message":"found"}]`,
		`"newly_failing":[{"id":"1.2","name":"Agent card","from":"pass","to":"fail","message":"gone"}]`,
		`"changed":[{"id":"1.3","name":"OpenAPI","from":"fail","to":"fail","message":"still missing"}]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s not in %s", want, b)
		}
	}
	b, _ = json.Marshal(previousOf(kept, before))
	if !strings.Contains(string(b), `"newly_passing":[],"newly_failing":[],"changed":[]`) {
		t.Errorf("nothing changed: %s", b)
	}
	b, _ = json.Marshal(previousOf(old, now))
	if !strings.Contains(string(b), `"timestamp":"2026-05-11T09:01:00Z"`) || !strings.Contains(string(b), `"newly_passing":null,"newly_failing":null,"changed":null`) {
		t.Errorf("a previous run without checks: %s", b)
	}
}
