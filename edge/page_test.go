package edge

import (
	"encoding/json"
	"html"
	"strings"
	"testing"
)

// A report the origin sends and the url a visitor typed are data, never
// markup: whatever they hold, the page keeps exactly its own two scripts
// (JSON-LD and app.js) and its one h1, and rendering never panics.
func FuzzReportPage(f *testing.F) {
	f.Add([]byte(`{"url":"https://example.com/","score":{"value":90,"grade":"A","levelName":"Optimized"},"currentLevel":3,"levels":[{"level":{"number":1,"name":"Discoverable"},"passed":1,"total":1}],"checks":[{"id":"1.1","name":"llms.txt","status":"fail","level":1,"message":"m","recommendation":"add `+"`llms.txt`"+`","details":"{\"a\":1}"}]}`), "example.com")
	f.Add([]byte(`{"url":"</script><script>alert(1)</script>","checks":[{"id":"\"><h1>x","name":"<script>","status":"<b>","level":1,"message":"`+"`</code><script>`"+`","foundAt":"<img src=x onerror=alert(1)>","details":"</pre><script>"}],"levels":[{"level":{"number":1,"name":"<h1>"}}]}`), `"><script>alert(1)</script>`)
	f.Fuzz(func(t *testing.T, raw []byte, target string) {
		var rep pageReport
		if json.Unmarshal(raw, &rep) != nil || len(rep.Checks) == 0 {
			return
		}
		page := strings.ToLower(string(reportHTML("https://agentready.example", target, &rep, "")))
		if n := strings.Count(page, "<script"); n != 2 {
			t.Fatalf("%d script elements in the page, want 2", n)
		}
		if n := strings.Count(page, "<h1"); n != 1 {
			t.Fatalf("%d h1 elements, want 1", n)
		}
		if n := strings.Count(page, "</script>"); n != 2 {
			t.Fatalf("%d script end tags, want 2", n)
		}
		empty := strings.ToLower(string(reportHTML("https://agentready.example", target, nil, "note")))
		if strings.Count(empty, "<script") != 2 || strings.Count(empty, "<h1") != 1 {
			t.Fatal("the no-report page lets markup through")
		}
		reportMarkdown("https://agentready.example", target, &rep, "")
	})
}

// Starter fills placeholders in one pass and refuses what is not a website.
func TestStarter(t *testing.T) {
	for _, c := range []struct{ snippet, site, want string }{
		{"Sitemap: {origin}/sitemap.xml", "https://www.acme.example:8443/x", "Sitemap: https://www.acme.example:8443/sitemap.xml"},
		{"{name} {slug} {reverse}", "https://www.acme.example/", "acme.example acme-example example.acme"},
		{"{reverse}", "http://127.0.0.1:8080", "127.0.0.1"},
		{"{name}", "https://{origin}.example/", ""},
		{"{name}", "ftp://x.example/", ""},
		{"no placeholders", "not a url", "no placeholders"},
	} {
		if got := Starter(c.snippet, c.site); got != c.want {
			t.Errorf("Starter(%q, %q) = %q, want %q", c.snippet, c.site, got, c.want)
		}
	}
}

// esc is html.EscapeString without the package (see htmlEscaper).
func FuzzEscape(f *testing.F) {
	f.Add(`<a href="x">'&'</a>`)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := esc(s), html.EscapeString(s); got != want {
			t.Fatalf("esc(%q) = %q, html.EscapeString gives %q", s, got, want)
		}
	})
}
