package stack_test

import (
	"bytes"
	"encoding/json"
	"html"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/fixture"
	"github.com/agentready/agentready/internal/testing/testenv"
)

// The report page and its markdown twin show the report's blocks beside
// the 48 checks: the findings across checks above the checks, the profile
// by the score and in a section of its own, and the read suite with its
// sampled pages; ?profile= judges the same report as another kind of site
// (through the origin's /api/report), and an unknown one is refused in
// the page's own words, never shown back. So is /api/scan's profile=, at
// the edge, before it charges.
func TestReportPageProfileAndReadSuite(t *testing.T) {
	svc := start(t, stack.Options{Env: reportEnv})
	// The site declares one waiver that counts and one the scan skips.
	dir := siteCopy(t, "read-api")
	if err := os.MkdirAll(filepath.Join(dir, ".well-known"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".well-known", "agentready.json"),
		[]byte(`{"waivers": [{"check": "1.14", "reason": "We publish no feed."}, {"check": "R.5", "reason": " "}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := fixture.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	r := scanSite(t, svc, s.URL, false)
	if r.Profile == nil || r.Read == nil || len(r.Interactions) == 0 || len(r.Read.Pages) == 0 {
		t.Fatalf("the read-api fixture's report lacks a block: profile %v, read %v, %d interactions", r.Profile, r.Read, len(r.Interactions))
	}
	const skipped = "waiver 2 (check R.5) gives no reason"
	if len(r.Profile.Waivers) != 1 || !slices.Equal(r.Profile.DeclarationProblems, []string{skipped}) {
		t.Fatalf("the declaration's waivers %+v, problems %q", r.Profile.Waivers, r.Profile.DeclarationProblems)
	}
	q := url.QueryEscape(s.URL)
	resp, page := testenv.Get(t, svc.URL+"/report?url="+q, "Accept", "text/html")
	if resp.StatusCode != 200 {
		t.Fatalf("the page: %d", resp.StatusCode)
	}
	text := html.UnescapeString(string(page))
	in := r.Interactions[0]
	for _, want := range []string{
		`id="profile-line">Judged as <strong>`,
		`id="interactions"`, `data-id="` + in.ID + `"`,
		`id="profile"`, `id="profile-others"`,
		`id="read"`, `id="read-checks"`, `id="check-R.1"`, `id="read-pages"`,
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if got := lineOf(page, `id="declaration-problems"`); !strings.Contains(got, skipped) {
		t.Errorf("the page does not say what the declaration skipped: %q", got)
	}
	// Its link says how to write the file.
	if how := hrefsIn(page, `id="declaration-problems"`, `</p>`); len(how) != 1 {
		t.Errorf("the declaration's problems link %q, want one link", how)
	} else if resp, doc := testenv.Get(t, svc.URL+how[0]); resp.StatusCode != 200 || !bytes.Contains(doc, []byte(`id="`+how[0][strings.IndexByte(how[0], '#')+1:]+`"`)) {
		t.Errorf("%s: %d, or no such anchor", how[0], resp.StatusCode)
	}
	for _, want := range []string{in.Title, in.Fix, r.Profile.Evidence[0], r.Read.Checks[0].Message} {
		if !strings.Contains(text, want) {
			t.Errorf("the page does not say %q", want)
		}
	}
	// Across checks comes before the checks, the read suite after them.
	if i, j, k := bytes.Index(page, []byte(`id="interactions"`)), bytes.Index(page, []byte(`id="checks"`)), bytes.Index(page, []byte(`id="read"`)); i < 0 || j < i || k < j {
		t.Errorf("the sections are out of order: interactions %d, checks %d, read %d", i, j, k)
	}
	// One row per sampled page, with its path and status.
	table := string(page[bytes.Index(page, []byte(`id="read-pages"`)):])
	table = table[:strings.Index(table, "</table>")]
	if n := strings.Count(table, "<tr><td"); n != len(r.Read.Pages) {
		t.Errorf("%d rows in the sampled pages' table, want %d", n, len(r.Read.Pages))
	}
	p0, _ := url.Parse(r.Read.Pages[0].URL)
	if !strings.Contains(table, ">"+html.EscapeString(p0.Path)+"</a></td><td>"+strconv.Itoa(r.Read.Pages[0].Status)+"</td>") {
		t.Errorf("the table lacks the first page %s (%d)", p0.Path, r.Read.Pages[0].Status)
	}

	// As another kind: the line by the score says it was asked for.
	as := "commerce"
	resp, page = testenv.Get(t, svc.URL+"/report?url="+q+"&profile="+as, "Accept", "text/html")
	if resp.StatusCode != 200 || !bytes.Contains(page, []byte(`id="profile-line">Judged as <strong>a shop</strong> (as asked; detected: `+r.Profile.Detected+`)`)) {
		t.Errorf("?profile=%s: %d, the line reads %q", as, resp.StatusCode, lineOf(page, `id="profile-line"`))
	}
	// Its links keep the profile asked for, but the one back to the site's own kind.
	if !bytes.Contains(page, []byte(`&amp;profile=`+as+`&amp;filter=failed#checks"`)) {
		t.Errorf("?profile=%s: the filter links drop the profile: %q", as, lineOf(page, `data-filter="failed"`))
	}
	if got := hrefsIn(page, `id="profile-h"`, `See it as its own kind`); len(got) != 1 || strings.Contains(got[0], "profile=") {
		t.Errorf("?profile=%s: the link back to the site's own kind is %q", as, got)
	}
	// A permanent link's links stay on its scan.
	at := "&at=" + strconv.FormatInt(r.Timestamp.Unix(), 10)
	page = keptPage(t, svc.URL+"/report?url="+q+at, "Accept", "text/html")
	others := hrefsIn(page, `id="profile-others"`, `</ul>`)
	if len(others) != len(r.Profile.Others) {
		t.Fatalf("the permanent link: %d links to other kinds, want %d", len(others), len(r.Profile.Others))
	}
	for _, h := range others {
		if !strings.Contains(h, at+"&profile=") {
			t.Errorf("on the permanent link, %q leaves its scan", h)
		}
	}
	if !bytes.Contains(page, []byte(strings.ReplaceAll(at, "&", "&amp;")+`&amp;filter=failed#checks"`)) {
		t.Errorf("on the permanent link, the filter links leave its scan: %q", lineOf(page, `data-filter="failed"`))
	}
	var served struct {
		Profile struct{ ID, Source string }
	}
	if _, b := testenv.Get(t, svc.URL+"/api/report?url="+q+"&profile="+as); json.Unmarshal(b, &served) != nil || served.Profile.ID != as || served.Profile.Source != "requested" {
		t.Errorf("/api/report profile=%s through the edge: %+v", as, served.Profile)
	}
	resp, md := testenv.Get(t, svc.URL+"/report?url="+q, "Accept", "text/markdown")
	for _, want := range []string{"## Across checks", "## Profile: ", "## Read suite (", "The sampled pages:\n\n- ", "Judged as ", "Skipped in the site's /.well-known/agentready.json: " + skipped} {
		if resp.StatusCode != 200 || !bytes.Contains(md, []byte(want)) {
			t.Errorf("the markdown twin lacks %q", want)
		}
	}

	const bogus = "zz-prof-9c1e"
	for _, u := range []string{"/report?url=" + q + "&profile=" + bogus, "/api/scan?format=json&url=" + q + "&profile=" + bogus, "/api/report?url=" + q + "&profile=" + bogus} {
		resp, b := testenv.Get(t, svc.URL+u)
		if resp.StatusCode != 400 || bytes.Contains(b, []byte(bogus)) {
			t.Errorf("%s: %d, echoes the value: %v", u, resp.StatusCode, bytes.Contains(b, []byte(bogus)))
		}
		if strings.HasPrefix(u, "/api/") {
			var e struct{ Code string }
			if json.Unmarshal(b, &e) != nil || e.Code != "invalid_profile" {
				t.Errorf("%s: %s, want invalid_profile", u, b)
			}
		} else if !bytes.Contains(b, []byte("profile must be content, docs, api, commerce or application")) {
			t.Errorf("%s: the page does not say what profile must be", u)
		}
	}
}

// hrefsIn is every link's address (unescaped) in page between the first
// from and the first to after it.
func hrefsIn(page []byte, from, to string) []string {
	s := string(page)
	i := strings.Index(s, from)
	if i < 0 {
		return nil
	}
	s = s[i:]
	if j := strings.Index(s, to); j >= 0 {
		s = s[:j+len(to)]
	}
	var out []string
	for _, part := range strings.Split(s, `href="`)[1:] {
		out = append(out, html.UnescapeString(part[:strings.IndexByte(part, '"')]))
	}
	return out
}

// lineOf is the line of page holding s, for a failure's message.
func lineOf(page []byte, s string) string {
	for _, l := range strings.Split(string(page), "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}
