package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/fixture"
)

func signalSite(t *testing.T, name string) string {
	t.Helper()
	s, err := fixture.Start(filepath.Join("..", "..", "testdata", "signals", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s.URL
}

// The text report lists every signal under its own heading, after the
// levels and before the request count, with its recommendation on partial;
// --json carries the same signals.
func TestScanTextShowsSignals(t *testing.T) {
	url := signalSite(t, "partial")
	code, out, stderr := runCLI("scan", url)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	head := strings.Index(out, "\n"+signalsHeading+"\n")
	lastLevel := strings.LastIndex(out, "\nLevel ")
	closing := regexp.MustCompile(`\n\d+ requests in \d+ rounds`).FindStringIndex(out)
	if head < 0 || lastLevel > head || closing == nil || closing[0] < head {
		t.Fatalf("signals section missing or misplaced:\n%s", out)
	}
	section := strings.Split(strings.TrimSpace(out[head:closing[0]]), "\n")[1:]
	var ids []string
	for i, l := range section {
		if m := regexp.MustCompile(`^  ◐ (\S+) `).FindStringSubmatch(l); m != nil {
			ids = append(ids, m[1])
			if i+1 >= len(section) || !strings.HasPrefix(strings.TrimSpace(section[i+1]), "→ ") {
				t.Errorf("%s: no recommendation line", m[1])
			}
		}
	}
	if strings.Join(ids, " ") != "webbotauth ucp acp ap2 mpp" {
		t.Errorf("partial signals listed: %v\n%s", ids, strings.Join(section, "\n"))
	}

	code, out, _ = runCLI("scan", "--json", signalSite(t, "none"))
	var r report.Result
	if code != exitOK || json.Unmarshal([]byte(out), &r) != nil || len(r.Signals) != 5 {
		t.Fatalf("--json: exit %d, %d signals", code, len(r.Signals))
	}
	for _, s := range r.Signals {
		if s.Status != report.NA {
			t.Errorf("%s: %s on a site that publishes nothing", s.ID, s.Status)
		}
	}
}
