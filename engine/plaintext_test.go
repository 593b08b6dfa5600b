package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/internal/signal"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/fixture"
)

// Every fixture site, signal site and deep fixture is deep-scanned (which
// runs every check and signal too). No message, recommendation or details
// value of a check, signal or probe may carry a library's or Go's own text,
// and every details key is camelCase, like the report's own fields
// (foundAt, durationMs), except in objects keyed by data (dataKeyed).
func TestReportsSpeakPlainly(t *testing.T) {
	var dirs []string
	for _, pattern := range []string{sitesDir + "/*/README.md", signalsDir + "/*/index.html", deepDir + "/*/_deep.json"} {
		found, _ := filepath.Glob(pattern)
		if len(found) == 0 {
			t.Fatalf("no fixture site matches %s", pattern)
		}
		for _, f := range found {
			dirs = append(dirs, filepath.Dir(f))
		}
	}
	sort.Strings(dirs)
	sc := loopbackScanner(20 * time.Second)
	for _, dir := range dirs {
		name := filepath.Base(filepath.Dir(dir)) + "/" + filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			site, err := fixture.Start(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer site.Close()
			res, _, err := sc.DeepScan(context.Background(), site.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Deep == nil {
				t.Fatal("no deep block in a deep scan's report")
			}
			for _, e := range reportEntries(t, res) {
				for _, s := range []located{{e.id + " message", e.message}, {e.id + " recommendation", e.recommendation}} {
					if p := leakedText(s.text); p != "" {
						t.Errorf("%s: %q in %q", s.where, p, s.text)
					}
				}
				walkDetails(e.id+" details", e.details, func(where, s string) {
					if p := leakedText(s); p != "" {
						t.Errorf("%s: %q in %q", where, p, s)
					}
				}, func(where, k string) {
					if dataKeyed[indexless.ReplaceAllString(where, "[*]")] == "" && !camelCase.MatchString(k) {
						t.Errorf("%s: details key %q is not camelCase", where, k)
					}
				})
			}
		})
	}
}

// goText is what Go prints when a value reaches a message unformatted (fmt's
// verb errors, nil, maps, slices, struct and pointer dumps, package-qualified
// type names), the encoding/json phrases signal.RawText does not list, and
// kin-openapi's loader phrases.
var goText = regexp.MustCompile(`%!|<nil>|map\[|\[\]\w|&\{|\binterface \{|\bstruct \{|\b0xc0[0-9a-f]{8,}\b|\*\w+\.[A-Z]\w*|\b(json|yaml|url|http|net|x509|strconv|base64|fetch|gather|openapi[23])\.[A-Z]\w*|looking for beginning|(^|[^.\w])json: |unexpected end of JSON input|failed to resolve|fragment in URI|struct field "|map key "|disallowed external reference|value MUST be`)

// leakedText returns the first library or Go phrase in s, or "".
func leakedText(s string) string {
	if p := signal.RawText(s); p != "" {
		return p
	}
	return goText.FindString(s)
}

var (
	camelCase = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)
	indexless = regexp.MustCompile(`\[\d+\]`)
)

// dataKeyed are the details objects whose keys are data (names a site or a
// standard chose), kept as written.
var dataKeyed = map[string]string{
	"1.7 details":                       "the llms:* meta tag names",
	"1.15 details.applying[*].signals":  "Content-Signal names (ai-train, search…)",
	"2.2 details":                       "HTTP methods",
	"3.5 details":                       "rate-limit header names",
	"3.7 details.problems":              "the site's tool names",
	"oauth.challenge details.challenge": "WWW-Authenticate parameter names",
}

type located struct{ where, text string }

// reportEntry is what a check, a signal and a probe have in common.
type reportEntry struct {
	id, message, recommendation string
	details                     any
}

func reportEntries(t *testing.T, res *report.Result) []reportEntry {
	var out []reportEntry
	for _, c := range res.Checks {
		out = append(out, reportEntry{c.ID, c.Message, c.Recommendation, parseDetails(t, c.ID, c.Details)})
	}
	for _, s := range res.Signals {
		out = append(out, reportEntry{s.ID, s.Message, s.Recommendation, parseDetails(t, s.ID, s.Details)})
	}
	for _, p := range res.Deep.Probes {
		b, err := json.Marshal(p.Details)
		if err != nil {
			t.Fatalf("%s: details do not marshal: %v", p.ID, err)
		}
		var d any
		json.Unmarshal(b, &d)
		out = append(out, reportEntry{id: p.ID, message: p.Message, details: d})
	}
	return out
}

// parseDetails reads a check's or a signal's details: a JSON object.
func parseDetails(t *testing.T, id string, d report.Details) any {
	var v map[string]any
	if err := json.Unmarshal(d, &v); err != nil && !d.Empty() {
		t.Errorf("%s: details %q are not a JSON object", id, d)
	}
	return v
}

// walkDetails calls str on every string and key on every object key of a
// details tree, with the path that leads to it.
func walkDetails(where string, v any, str func(where, s string), key func(where, k string)) {
	switch x := v.(type) {
	case string:
		str(where, x)
	case []any:
		for i, e := range x {
			walkDetails(fmt.Sprintf("%s[%d]", where, i), e, str, key)
		}
	case map[string]any:
		for k, e := range x {
			key(where, k)
			walkDetails(where+"."+k, e, str, key)
		}
	}
}
