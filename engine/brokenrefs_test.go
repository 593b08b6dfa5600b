package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/gather"
)

// The brokenrefs site (testdata/sites/brokenrefs/README.md): a description
// with eleven references that do not resolve is still the site's API. The
// verdicts are in its _expect.json; this test holds what the messages and
// details must say.
func TestBrokenReferencesKeepTheAPI(t *testing.T) {
	site := startSite(t, "brokenrefs")
	res, err := loopbackScanner(20*time.Second).Scan(context.Background(), site.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	check := func(id string) (string, map[string]any) {
		c, ok := res.Check(id)
		if !ok {
			t.Fatalf("no check %s", id)
		}
		var det map[string]any
		if err := json.Unmarshal(c.Details, &det); err != nil {
			t.Fatalf("%s details: %v", id, err)
		}
		return c.Message, det
	}
	msg, det := check("1.3")
	if unresolved, _ := det["unresolved"].([]any); len(unresolved) != 11 || !strings.Contains(msg, "11 $refs do not resolve") {
		t.Errorf("1.3: %q, %d unresolved in details", msg, len(unresolved))
	}
	if msg, _ := check("2.3"); !strings.Contains(msg, "such as POST /batches/{batch_id}/cancel") {
		t.Errorf("2.3's example is not the write action: %q", msg)
	}
	if msg, _ := check("1.1"); !strings.Contains(msg, "line 7: the 4 links in the sections are not list items") {
		t.Errorf("1.1: %q", msg)
	}
	var probes []string
	for _, h := range site.Hits() {
		if strings.Contains(h.Path, gather.ErrorProbePrefix) {
			probes = append(probes, h.Path)
		}
	}
	if len(probes) != 1 || !strings.HasPrefix(probes[0], "/v1/"+gather.ErrorProbePrefix) {
		t.Errorf("2.7 probed %q, want one path under the spec's server /v1", probes)
	}
}
