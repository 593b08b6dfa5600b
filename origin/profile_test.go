package origin_test

import (
	"bytes"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/agentready/agentready/edge/scanreq"
	"github.com/agentready/agentready/engine/advice"
	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/profile"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/origin"
)

// profile= judges the report as another kind of site, on every way of
// asking for it (JSON, the event stream, /api/report), from the one cached
// scan: the profile block changes, the checks and the score do not, and no
// request reaches the site again. An unknown profile is refused before
// anything is scanned, and never repeated back.
func TestProfileParameter(t *testing.T) {
	o := startOrigin(t, origin.Config{}, nil)
	s := site(t, "full")
	resp, own := get(t, scanURL(o, s.URL, "&format=json"))
	if resp.StatusCode != 200 {
		t.Fatalf("scan: %d %s", resp.StatusCode, own)
	}
	var base report.Result
	if err := json.Unmarshal(own, &base); err != nil || base.Profile == nil || base.Read == nil || len(base.Read.Checks) != len(checks.Read()) {
		t.Fatalf("the report lacks its profile or read suite: %v", err)
	}
	if base.Profile.Source == "requested" {
		t.Fatalf("a report nobody asked a profile of says %q", base.Profile.Source)
	}
	// A profile the scan did not pick, so that the answer must differ.
	as := "commerce"
	if base.Profile.ID == as {
		as = "docs"
	}
	hits := len(s.Hits())
	check := func(name string, body []byte) {
		t.Helper()
		var r report.Result
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatalf("%s: %v: %.200s", name, err, body)
		}
		if r.Profile == nil || r.Profile.ID != as || r.Profile.Source != "requested" || r.Profile.Detected != base.Profile.Detected {
			t.Errorf("%s: profile %+v, want %s requested (detected %s)", name, r.Profile, as, base.Profile.Detected)
		}
		if r.Score != base.Score || len(r.Checks) != 48 || r.Read == nil || r.Read.Score != base.Read.Score {
			t.Errorf("%s: the score or the read suite changed with the profile", name)
		}
		for _, o := range r.Profile.Others {
			if o.ID == as {
				t.Errorf("%s: others lists the profile judged as", name)
			}
		}
	}
	resp, body := get(t, scanURL(o, s.URL, "&format=json&profile="+as))
	if resp.StatusCode != 200 || resp.Header.Get("X-Cache") != "HIT" {
		t.Fatalf("profile=%s: %d X-Cache %q (the cache does not key on the profile)", as, resp.StatusCode, resp.Header.Get("X-Cache"))
	}
	check("JSON", body)

	evs := readStream(t, scanURL(o, s.URL, "&profile="+as))
	check("scan.completed", []byte(checkSequence(t, evs, true)))

	resp, body = get(t, o.URL+"/api/report?url="+url.QueryEscape(s.URL)+"&profile="+as)
	if resp.StatusCode != 200 {
		t.Fatalf("/api/report profile=%s: %d %s", as, resp.StatusCode, body)
	}
	check("/api/report", body)
	var extra struct {
		Plan    json.RawMessage `json:"plan"`
		History json.RawMessage `json:"history"`
	}
	if json.Unmarshal(body, &extra) != nil || len(extra.Plan) == 0 || len(extra.History) == 0 {
		t.Error("/api/report with a profile lost its plan or history")
	}
	// Without it, the cached bytes are served as they are.
	if _, again := get(t, scanURL(o, s.URL, "&format=json")); !bytes.Equal(again, own) {
		t.Error("a report asked for without a profile differs from the scan's")
	}
	if len(s.Hits()) != hits {
		t.Errorf("judging as another profile touched the site (%d requests)", len(s.Hits())-hits)
	}

	const bogus = "zz-prof-9c1e"
	for _, u := range []string{
		scanURL(o, s.URL, "&format=json&profile="+bogus),
		scanURL(o, s.URL, "&profile="+bogus), // the stream's, answered as JSON before it starts
		o.URL + "/api/report?url=" + url.QueryEscape(s.URL) + "&profile=" + bogus,
		scanURL(o, s.URL, "&format=json&profile=Docs"),
	} {
		resp, b := get(t, u, "Accept", "application/json")
		if e := envelope(t, b); resp.StatusCode != 400 || e.Code != "invalid_profile" {
			t.Errorf("%s: %d %s, want 400 invalid_profile", u, resp.StatusCode, b)
		}
		if strings.Contains(string(b), bogus) || strings.Contains(string(b), "Docs") {
			t.Errorf("%s: the refusal repeats the value: %s", u, b)
		}
	}
	if len(s.Hits()) != hits {
		t.Error("a refused profile scanned the site")
	}
}

// The stream of a fresh scan sends each read check as it is judged, as
// read_check, before the signals; scan.completed carries the same.
func TestStreamSendsReadChecks(t *testing.T) {
	o := startOrigin(t, origin.Config{}, nil)
	s := site(t, "docsdrip")
	evs := readStream(t, scanURL(o, s.URL, ""))
	checkSequence(t, evs, false)
	var names []string
	for _, e := range evs {
		if e.Name == origin.EventReadCheck {
			var c report.Check
			if err := json.Unmarshal([]byte(e.Data), &c); err != nil || c.ID == "" {
				t.Fatalf("read_check: %v %s", err, e.Data)
			}
			names = append(names, c.ID)
		}
	}
	if n := len(checks.Read()); len(names) != n || names[0] != "R.1" || names[n-1] != checks.Read()[n-1].ID {
		t.Errorf("read_check events: %v", names)
	}
}

// The edge refuses an unknown profile before it charges, from its own
// list (it cannot import the engine): the list must be the engine's.
func TestEdgeKnowsTheProfiles(t *testing.T) {
	if !slices.Equal(scanreq.Profiles, report.Profiles) {
		t.Errorf("edge/scanreq.Profiles %v, engine/report.Profiles %v", scanreq.Profiles, report.Profiles)
	}
	for _, p := range report.Profiles {
		if !scanreq.ValidProfile(p) || !profile.Known(p) {
			t.Errorf("%s: valid at the edge %v, known to the engine %v", p, scanreq.ValidProfile(p), profile.Known(p))
		}
	}
}

// /api/report's plan is the plan of the report judged as the profile asked
// for: the checks that do not apply to that kind come last, with the reason,
// and never block the next level.
func TestReportPlanFollowsTheProfile(t *testing.T) {
	o := startOrigin(t, origin.Config{}, nil)
	s := site(t, "partial") // an API site that fails several API checks
	if resp, body := get(t, scanURL(o, s.URL, "&format=json")); resp.StatusCode != 200 {
		t.Fatalf("scan: %d %s", resp.StatusCode, body)
	}
	const as = "content"
	resp, body := get(t, o.URL+"/api/report?url="+url.QueryEscape(s.URL)+"&profile="+as)
	if resp.StatusCode != 200 {
		t.Fatalf("/api/report profile=%s: %d %s", as, resp.StatusCode, body)
	}
	var extra struct {
		Plan advice.Plan `json:"plan"`
	}
	if err := json.Unmarshal(body, &extra); err != nil {
		t.Fatal(err)
	}
	plan := extra.Plan
	asides, seenAside := 0, false
	for _, st := range plan.Steps {
		switch {
		case st.NotApplicable != "":
			asides++
			seenAside = true
			if st.Blocking {
				t.Errorf("%s does not apply to %s but blocks the next level", st.ID, as)
			}
		case seenAside:
			t.Errorf("%s applies to %s but is advised after one that does not", st.ID, as)
		}
	}
	if asides == 0 {
		t.Errorf("no step of the plan as %s says it does not apply (%d steps)", as, len(plan.Steps))
	}
	// Asked without a profile, the same report's plan advises them in place.
	_, body = get(t, o.URL+"/api/report?url="+url.QueryEscape(s.URL))
	if err := json.Unmarshal(body, &extra); err != nil {
		t.Fatal(err)
	}
	for _, st := range extra.Plan.Steps {
		if st.NotApplicable != "" && extra.Plan.Steps[0].ID == st.ID {
			t.Errorf("the detected profile's plan starts with %s, which it says does not apply", st.ID)
		}
	}
}
