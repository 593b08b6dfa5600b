package profile_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentready/agentready/engine/profile"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/checktest"
)

const sites = "../../testdata/sites/"

// Each read-* fixture site is detected as the profile its _expect.json names.
func TestDetectFixtureSites(t *testing.T) {
	dirs, _ := filepath.Glob(sites + "read-*")
	if len(dirs) < 5 {
		t.Fatalf("%d read-* sites, want 5", len(dirs))
	}
	seen := map[string]bool{}
	for _, dir := range dirs {
		want := string(checktest.Expect(t, dir)[checktest.ProfileKey])
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			res := checktest.Scan(t, dir)
			p := res.Profile
			if p == nil {
				t.Fatal("no profile")
			}
			if p.Detected != want || p.ID != want || p.Source != "detected" || p.Declared != "" || len(p.Evidence) == 0 {
				t.Errorf("detected %q (%s) id %q source %q declared %q, want %q", p.Detected, strings.Join(p.Evidence, "; "), p.ID, p.Source, p.Declared, want)
			}
			if len(p.Others) != 4 || p.Waivers == nil {
				t.Errorf("others %d waivers %v", len(p.Others), p.Waivers)
			}
		})
		seen[want] = true
	}
	// Between them the sites cover every profile.
	for _, id := range report.Profiles {
		if !seen[id] {
			t.Errorf("no read-* site is %s", id)
		}
	}
}

func docsSite(declaration string) map[string]string {
	files := map[string]string{
		"index.html":          checktest.ProsePage("Lantern", `<a href="/blog/one">Blog</a>`),
		"blog/one/index.html": checktest.ProsePage("One", ""),
		"blog/two/index.html": checktest.ProsePage("Two", ""),
		"sitemap.xml":         `<urlset><url><loc>{{ORIGIN}}/blog/one</loc></url><url><loc>{{ORIGIN}}/blog/two</loc></url></urlset>`,
	}
	if declaration != "" {
		files[".well-known/agentready.json"] = declaration
	}
	return files
}

// A site that declares its profile and waivers in
// /.well-known/agentready.json is judged as it says; what it says wrong
// is dropped.
func TestDetectDeclaration(t *testing.T) {
	res := checktest.Scan(t, checktest.WriteSite(t, docsSite(`{"profile": "Docs", "waivers": [
		{"check": "1.14", "reason": "we publish no feed"},
		{"check": "R.13", "reason": "our pages are generated"},
		{"check": "9.9", "reason": "no such check"},
		{"check": "1.15", "reason": ""}]}`)))
	p := res.Profile
	if p == nil || p.Declared != "docs" || p.ID != "docs" || p.Source != "declared" || p.Detected != "content" {
		t.Fatalf("profile %+v", p)
	}
	var got []string
	for _, w := range p.Waivers {
		got = append(got, w.Check+":"+w.From+":"+w.Reason)
	}
	if !slices.Equal(got, []string{"1.14:site:we publish no feed", "R.13:site:our pages are generated"}) {
		t.Errorf("waivers %v", got)
	}
	// What was dropped is said, so the owner sees why it does not count.
	dropped := []string{"waiver 3 names no known check", "waiver 4 (check 1.15) gives no reason"}
	if !slices.Equal(p.DeclarationProblems, dropped) {
		t.Errorf("declaration problems %q, want %q", p.DeclarationProblems, dropped)
	}
	c, _ := res.Check("1.14")
	if c.Status == report.NA {
		t.Fatal("1.14 is na on this site: the waiver it declares cannot be seen")
	}
	{
		found := false
		for _, n := range p.NotApplicable {
			if n.ID == "1.14" {
				found = n.By == "waiver" && n.Reason == "we publish no feed" && n.Status == c.Status
			}
		}
		if !found {
			t.Errorf("1.14 (%s) is not waived: %+v", c.Status, p.NotApplicable)
		}
	}
	// A caller's request still beats the declaration, and keeps the site's waivers.
	if err := profile.Apply(res, "api", []report.Waiver{{Check: "1.5", Reason: "ci"}}); err != nil {
		t.Fatal(err)
	}
	if res.Profile.ID != "api" || res.Profile.Source != "requested" || res.Profile.Declared != "docs" || len(res.Profile.Waivers) != 3 ||
		!slices.Equal(res.Profile.DeclarationProblems, dropped) {
		t.Errorf("requested: %+v", res.Profile)
	}
}

// An unknown declared profile, or a declaration that is not JSON, changes
// nothing: the detection stands. The report says why the file was not
// followed, unless the answer was a page (a site answering every path).
func TestDetectBadDeclaration(t *testing.T) {
	for name, c := range map[string]struct{ body, problem string }{
		"unknown profile": {`{"profile": "blog"}`, `"profile" names no known profile`},
		"not json":        {`profile: docs`, `the file is not a JSON object with "profile" and "waivers"`},
		"html":            {`<!doctype html><title>Not found</title>`, ""},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res := checktest.Scan(t, checktest.WriteSite(t, docsSite(c.body)))
			if p := res.Profile; p.Declared != "" || p.Source != "detected" || p.ID != p.Detected || len(p.Waivers) != 0 {
				t.Errorf("profile %+v", p)
			}
			var want []string
			if c.problem != "" {
				want = []string{c.problem}
			}
			if got := res.Profile.DeclarationProblems; !slices.Equal(got, want) {
				t.Errorf("declaration problems %q, want %q", got, want)
			}
		})
	}
}
