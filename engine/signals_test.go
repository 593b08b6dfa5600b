package engine_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/internal/signal"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/fixture"
)

const signalsDir = "../testdata/signals"

// signalOrder is the report order: identity first, then commerce.
var signalOrder = []string{"webbotauth", "ucp", "acp", "ap2", "mpp"}

var signalGroups = map[string]string{"webbotauth": report.GroupIdentity, "ucp": report.GroupCommerce, "acp": report.GroupCommerce, "ap2": report.GroupCommerce, "mpp": report.GroupCommerce}

// The paths the three signal gatherers ask for; ap2 and mpp ask for nothing.
var signalPaths = []string{"/.well-known/http-message-signatures-directory", "/.well-known/ucp", "/.well-known/acp.json"}

type signalWant struct {
	status report.Status
	says   string // in the message or the details
}

// Every signal in every state it can take, each from a whole scan of a
// fixture site under testdata/signals (the README there says what each site
// publishes).
func TestSignalStates(t *testing.T) {
	cases := map[string]map[string]signalWant{
		"none": {
			"webbotauth": {report.NA, "answered 404"},
			"ucp":        {report.NA, "answered 404"},
			"acp":        {report.NA, "answered 404"},
			"ap2":        {report.NA, "No A2A agent card was found"},
			"mpp":        {report.NA, "No Machine Payments Protocol"},
		},
		"soft404": {
			"webbotauth": {report.NA, "HTML page (a soft 404)"},
			"ucp":        {report.NA, "HTML page (a soft 404)"},
			"acp":        {report.NA, "HTML page (a soft 404)"},
			"ap2":        {report.NA, "No A2A agent card was found"},
			"mpp":        {report.NA, "No Machine Payments Protocol"},
		},
		"pass": {
			"webbotauth": {report.Pass, "kid is the RFC 7638 thumbprint"},
			"ucp":        {report.Pass, "capabilities: dev.ucp.shopping.checkout"},
			"acp":        {report.Pass, "transports: rest, mcp"},
			"ap2":        {report.Pass, "roles: merchant"},
			"mpp":        {report.Pass, "method example, intent charge"},
		},
		"partial": {
			"webbotauth": {report.Partial, "expired on 2025-06-15"},
			"ucp":        {report.Partial, "not a YYYY-MM-DD date"},
			"acp":        {report.Partial, "predates the discovery RFC"},
			"ap2":        {report.Partial, "not the URI the AP2 specification gives"},
			"mpp":        {report.Partial, "lower-case"},
		},
		"cut": {
			"webbotauth": {report.Partial, "could not be read whole"},
			"ucp":        {report.Partial, "could not be read whole"},
			"acp":        {report.NA, "could be read at /.well-known/acp.json: "},
			"ap2":        {report.NA, "No A2A agent card was found"},
			"mpp":        {report.NA, "No Machine Payments Protocol"},
		},
		"paywall": {
			"webbotauth": {report.NA, "answered 402, not a document"},
			"ucp":        {report.NA, "answered 402, not a document"},
			"acp":        {report.NA, "answered 402, not a document"},
			"ap2":        {report.NA, "No A2A agent card was found"},
			"mpp":        {report.Pass, "method example, intent charge"},
		},
		"leak": {
			"webbotauth": {report.Partial, "PRIVATE KEY MATERIAL IS PUBLISHED"},
			"ucp":        {report.Partial, "looks like an ACP discovery document"},
			"acp":        {report.Partial, "lacks `transports`"},
			"ap2":        {report.NA, "No A2A agent card was found"},
			"mpp":        {report.Partial, "no Payment challenge was seen"},
		},
	}
	sc := loopbackScanner(20 * time.Second)
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			site, err := fixture.Start(filepath.Join(signalsDir, name))
			if err != nil {
				t.Fatal(err)
			}
			defer site.Close()
			var events []engine.Event
			res, stats, err := sc.ScanWithStats(context.Background(), site.URL, func(e engine.Event) { events = append(events, e) })
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, s := range res.Signals {
				ids = append(ids, s.ID)
				w := want[s.ID]
				if s.Status != w.status || !strings.Contains(s.Message+"|"+findingsOf(s.Details), w.says) {
					t.Errorf("%s: %s %q (details %q), want %s saying %q", s.ID, s.Status, s.Message, s.Details, w.status, w.says)
				}
				assertSignalRules(t, s)
			}
			if !reflect.DeepEqual(ids, signalOrder) {
				t.Errorf("signals %v, want %v", ids, signalOrder)
			}
			assertSignalEvents(t, events, res)
			assertSignalRequests(t, site.Hits(), stats)
		})
	}
}

// assertSignalRules holds every entry to the rules of the report: passed
// means pass, a recommendation only on partial, foundAt never on na, a
// signal never fails, and no library text reaches a user.
func assertSignalRules(t *testing.T, s report.Signal) {
	t.Helper()
	if s.Group != signalGroups[s.ID] || s.Name == "" || s.Message == "" {
		t.Errorf("%s: group %q name %q message %q", s.ID, s.Group, s.Name, s.Message)
	}
	if s.Passed != (s.Status == report.Pass) {
		t.Errorf("%s: passed %v with status %s", s.ID, s.Passed, s.Status)
	}
	switch s.Status {
	case report.Pass, report.NA:
		if s.Recommendation != "" {
			t.Errorf("%s: recommendation %q on %s", s.ID, s.Recommendation, s.Status)
		}
	case report.Partial:
		if s.Recommendation == "" {
			t.Errorf("%s: partial without a recommendation", s.ID)
		}
	default:
		t.Errorf("%s: status %q; a signal is pass, partial or na", s.ID, s.Status)
	}
	if s.Status == report.NA && s.FoundAt != "" {
		t.Errorf("%s: na found at %q", s.ID, s.FoundAt)
	}
	if s.Status == report.Pass && s.FoundAt == "" {
		t.Errorf("%s: pass without foundAt", s.ID)
	}
	for _, txt := range []string{s.Message, s.Recommendation, findingsOf(s.Details)} {
		if p := signal.RawText(txt); p != "" {
			t.Errorf("%s: library text %q in %q", s.ID, p, txt)
		}
	}
}

// One signal event per entry, in report order, after the last check.
func assertSignalEvents(t *testing.T, events []engine.Event, res *report.Result) {
	t.Helper()
	lastCheck, n := -1, 0
	for i, e := range events {
		switch e.Kind {
		case engine.EventCheckFinished:
			lastCheck = i
		case engine.EventSignalFinished:
			if n >= len(res.Signals) || !reflect.DeepEqual(e.Signal, res.Signals[n]) {
				t.Errorf("signal event %d: %+v", n, e.Signal)
			}
			if lastCheck > i {
				t.Errorf("signal event %d before a check event", n)
			}
			n++
		}
	}
	if n != len(res.Signals) {
		t.Errorf("%d signal events for %d signals", n, len(res.Signals))
	}
}

// The signals cost one request per well-known document, all in the first
// round; ap2 and mpp ask for nothing.
func assertSignalRequests(t *testing.T, hits []fixture.Hit, stats *engine.Stats) {
	t.Helper()
	for _, p := range signalPaths {
		n := 0
		for _, h := range hits {
			if h.Path == p {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s requested %d times, want once", p, n)
		}
		for _, r := range stats.Records {
			if strings.HasSuffix(r.URL, p) && r.Round != 1 {
				t.Errorf("%s in round %d, want the first", p, r.Round)
			}
		}
	}
	assertNoDuplicateFetch(t, hits)
}

// A site that publishes every signal document (all three pass) gets exactly
// the checks, score, levels and badge level of the same site without them:
// signals are never scored.
func TestSignalsAreNotScored(t *testing.T) {
	sc := loopbackScanner(20 * time.Second)
	scan := func(name string) *report.Result {
		site, err := fixture.Start(filepath.Join(signalsDir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer site.Close()
		res, err := sc.Scan(context.Background(), site.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	without := scan("none")
	// The paywall site answers every signal document with 402, x402
	// requirements, rate-limit headers and a Payment challenge: the scored
	// checks that read every response (rate limits, 402 answers) must not
	// see requests made only for the signals.
	if paywall := scan("paywall"); paywall.Score != without.Score || !reflect.DeepEqual(paywall.Levels, without.Levels) {
		t.Errorf("score %+v with 402s on the signal documents, %+v without", paywall.Score, without.Score)
	} else {
		for i, c := range paywall.Checks {
			if w := without.Checks[i]; c.ID != w.ID || c.Status != w.Status {
				t.Errorf("%s: %s with 402s on the signal documents, %s without: %s", c.ID, c.Status, w.Status, c.Message)
			}
		}
	}
	with := scan("docs")
	passed := 0
	for _, s := range with.Signals {
		if s.Passed {
			passed++
		}
	}
	if passed != 3 {
		t.Fatalf("the docs site passes %d signals, want 3: %+v", passed, with.Signals)
	}
	if with.Score != without.Score || with.CurrentLevel != without.CurrentLevel || !reflect.DeepEqual(with.Levels, without.Levels) {
		t.Errorf("score %+v level %d with the signal documents, %+v level %d without", with.Score, with.CurrentLevel, without.Score, without.CurrentLevel)
	}
	for i, c := range with.Checks {
		if w := without.Checks[i]; c.ID != w.ID || c.Status != w.Status {
			t.Errorf("%s: %s with the signal documents, %s without", c.ID, c.Status, w.Status)
		}
	}
}

// findingsOf joins a signal's findings ({"findings": […]}) with "; ".
func findingsOf(d report.Details) string {
	var v struct{ Findings []string }
	json.Unmarshal(d, &v)
	return strings.Join(v.Findings, "; ")
}
