package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/fixture"
)

// deepDir holds the deep scan's fixture sites: each one a site that
// exercises some probes, working or broken, with _deep.json giving the
// status every listed probe must reach (and, optionally, words its message
// must contain, with {{ORIGIN}} standing for the site's origin). A free-scan
// check may be listed too, by its ID ("1.3"), when the site exercises it.
const deepDir = "../testdata/deep"

type deepExpect struct {
	Status   report.Status `json:"status"`
	Contains []string      `json:"contains,omitempty"`
}

func TestDeepFixtures(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(deepDir, "*", "_deep.json"))
	sort.Strings(dirs)
	if len(dirs) == 0 {
		t.Fatal("no deep fixture sites under testdata/deep")
	}
	for _, path := range dirs {
		dir := filepath.Dir(path)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var want map[string]deepExpect
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			site, err := fixture.Start(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer site.Close()
			res, stats, err := loopbackScanner(20*time.Second).DeepScan(context.Background(), site.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Deep == nil || res.Deep.Requests != stats.Requests {
				t.Fatalf("deep block %+v, stats %d requests", res.Deep, stats.Requests)
			}
			type verdict struct {
				Status  report.Status
				Message string
			}
			got := map[string]verdict{}
			for _, p := range res.Deep.Probes {
				got[p.ID] = verdict{p.Status, p.Message}
			}
			for _, c := range res.Checks {
				got[c.ID] = verdict{c.Status, c.Message}
			}
			for id, w := range want {
				p, ok := got[id]
				switch {
				case !ok:
					t.Errorf("probe or check %s missing from the report", id)
				case p.Status != w.Status:
					t.Errorf("probe %s: %s (%s), want %s", id, p.Status, p.Message, w.Status)
				}
				for _, s := range w.Contains {
					s = strings.ReplaceAll(s, "{{ORIGIN}}", site.URL)
					if ok && !strings.Contains(p.Message, s) {
						t.Errorf("probe %s: message %q lacks %q", id, p.Message, s)
					}
				}
			}
		})
	}
}
