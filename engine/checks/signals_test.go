package checks

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/internal/signal"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/testenv"
)

var signalNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func runSignalRecording(s *Signal, set *gather.Set, read map[string]bool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	s.Run(gather.View(set, s.Requires, func(name string) { read[name] = true }), signalNow)
	return nil
}

// Every signal's Requires is exact over the signal fixture sites and the
// fixture websites: nothing read undeclared, everything declared read.
func TestSignalRequiresAreExact(t *testing.T) {
	testenv.Quick(t, "the exhaustive requires check of the signals")
	dirs, _ := filepath.Glob("../../testdata/signals/*/index.html")
	sites, _ := filepath.Glob("../../testdata/sites/*/_expect.json")
	if len(dirs) < 5 || len(sites) < 5 {
		t.Fatalf("%d signal sites, %d fixture sites", len(dirs), len(sites))
	}
	var sets []*gather.Set
	for _, f := range append(dirs, sites...) {
		sets = append(sets, gatherSite(t, filepath.Dir(f)))
	}
	for _, s := range Signals() {
		used := map[string]bool{}
		for _, set := range sets {
			if err := runSignalRecording(s, set, used); err != nil {
				t.Errorf("%s: %v", s.ID, err)
			}
		}
		for _, k := range s.Requires {
			if !used[k.Name()] {
				t.Errorf("%s declares %q but never reads it", s.ID, k.Name())
			}
		}
	}
}

// The registry is complete and documented, and its entries are well-formed.
func TestSignalDefinitions(t *testing.T) {
	want := []string{"webbotauth", "ucp", "acp", "ap2", "mpp"}
	got := Signals()
	if len(got) != len(want) {
		t.Fatalf("%d signals, want %d", len(got), len(want))
	}
	for i, s := range got {
		if s.ID != want[i] {
			t.Errorf("signal %d is %s, want %s", i, s.ID, want[i])
		}
		if s.Name == "" || s.LooksFor == "" || s.Rule == "" || s.Fix == "" || len(s.Requires) == 0 || s.Run == nil {
			t.Errorf("%s: incomplete definition", s.ID)
		}
		if (s.ID == "webbotauth") != (s.Group == report.GroupIdentity) || (s.Group != report.GroupIdentity && s.Group != report.GroupCommerce) {
			t.Errorf("%s: group %q", s.ID, s.Group)
		}
		if d, ok := SignalByID(s.ID); !ok || d != s {
			t.Errorf("SignalByID(%s)", s.ID)
		}
		if !strings.Contains(Markdown(), "### "+s.ID+" ") {
			t.Errorf("%s is not described in docs/checks.md", s.ID)
		}
	}
	if _, ok := SignalByID("1.1"); ok {
		t.Error("a check id found as a signal")
	}
}

// Whatever goes wrong, a signal answers na with the reason: never a fail,
// never a crash of the scan.
func TestSignalJudgeNeverFails(t *testing.T) {
	empty := gather.NewSet(gather.Site{})
	boom := &Signal{ID: "x", Name: "x", Group: report.GroupCommerce, Fix: "do x",
		Run: func(gather.Source, time.Time) signal.Verdict { panic("boom") }}
	if r := boom.Judge(empty, signalNow); r.Status != report.NA || r.Passed || !strings.Contains(r.Message, "internal error: boom") {
		t.Errorf("panic: %+v", r)
	}
	missing := &Signal{ID: "y", Name: "y", Group: report.GroupCommerce, Fix: "do y", Requires: []gather.AnyKey{gather.UCPProfile},
		Run: func(gather.Source, time.Time) signal.Verdict { return signal.Pass("never") }}
	if r := missing.Judge(empty, signalNow); r.Status != report.NA || !strings.Contains(r.Message, `"ucp-profile" was not gathered`) {
		t.Errorf("missing input: %+v", r)
	}
	failing := &Signal{ID: "z", Name: "z", Group: report.GroupCommerce, Fix: "do z",
		Run: func(gather.Source, time.Time) signal.Verdict {
			return signal.Verdict{Status: report.Fail, Message: "m", Recommendation: "r"}
		}}
	if r := failing.Judge(empty, signalNow); r.Status != report.NA || r.Recommendation != "" {
		t.Errorf("a fail verdict reached the report: %+v", r)
	}
	partial := &Signal{ID: "p", Name: "p", Group: report.GroupCommerce, Fix: "the fix",
		Run: func(gather.Source, time.Time) signal.Verdict { return signal.Partial("half", "") }}
	if r := partial.Judge(empty, signalNow); r.Status != report.Partial || r.Recommendation != "the fix" {
		t.Errorf("partial without its own recommendation: %+v", r)
	}
}
