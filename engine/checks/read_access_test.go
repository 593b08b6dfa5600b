package checks

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/report"
)

// dataTable is a table of n rows of three cells, about 30 bytes of text a row.
func dataTable(n int) string {
	var b strings.Builder
	b.WriteString("<table><tr><th>code</th><th>name</th><th>rate</th></tr>")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "<tr><td>C%05d</td><td>Carrier zone %d</td><td>%d.%02d</td></tr>", i, i, i%90, i%100)
	}
	b.WriteString("</table>")
	return b.String()
}

// DataProblem: machine data fails a page when it is half or more of a
// page over MaxDataTokens, and not otherwise.
func TestDataProblem(t *testing.T) {
	prose := func(words int) string { return "<p>" + nWords(words, "w") + "</p>" }
	// ~30 bytes a row: 3,000 rows are ~90 KB, ~22,000 tokens.
	cases := []struct {
		name string
		html string
		want string // part of the reason; "" for none
	}{
		{"no data", "<main><h1>Guide</h1>" + prose(20000) + "</main>", ""},
		{"a big table is the page", "<main><h1>Rates</h1>" + prose(200) + dataTable(3000) + "</main>", "3,000-row table"},
		{"a big table on a small page", "<main><h1>Rates</h1>" + prose(200) + dataTable(300) + "</main>", ""},
		{"a big table beside more prose", "<main><h1>Rates</h1>" + prose(25000) + dataTable(2000) + "</main>", ""},
		{"a base64 image is the page", "<main><h1>Chart</h1>" + prose(100) + `<img alt=chart src="data:image/png;base64,` + strings.Repeat("QUJD", 20000) + `"></main>`, "data: URI"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := DataProblem(readPage("https://a.example/docs/rates", 200, c.html))
			if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
				t.Errorf("DataProblem = %q, want %q", got, c.want)
			}
		})
	}
}

// SignInWall names how a page keeps its content behind a sign-in, and
// nothing for an open page, a missing one or a bot challenge (R.8's).
func TestSignInWall(t *testing.T) {
	login := `<main><h1>Sign in</h1><form><input name=email><input type=password name=pw></form></main>`
	cases := []struct {
		name string
		p    *gather.ReadPage
		want string
	}{
		{"401", readPage("https://a.example/docs/private", 401, "<title>Unauthorized</title>"), "answers 401"},
		{"403", readPage("https://a.example/docs/private", 403, "<title>Forbidden</title>"), "answers 403"},
		{"a bot challenge answered 403", readPage("https://a.example/docs/a", 403, "<title>Just a moment...</title>"), ""},
		{"a sign-in form answered 200", readPage("https://a.example/docs/reference", 200, login), "answers 200 with a sign-in form"},
		{"redirected to a sign-in page", readPage("https://a.example/docs/private", 200, "<main><h1>Welcome</h1></main>", "https://a.example/login?next=/docs/private"), "redirects to a sign-in page"},
		{"the sign-in page itself", readPage("https://a.example/signin", 200, login), ""},
		{"an open page", readPage("https://a.example/docs/a", 200, "<main><h1>Guide</h1><p>"+nWords(300, "w")+"</p></main>"), ""},
		{"a missing page", readPage("https://a.example/docs/gone", 404, "<title>Not found</title>"), ""},
		{"no answer", &gather.ReadPage{URL: "https://a.example/x", HTML: &fetch.Response{Err: fmt.Errorf("refused")}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := SignInWall(c.p); c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
				t.Errorf("SignInWall = %q, want %q", got, c.want)
			}
		})
	}
}

// markdownAnswer gives p a public .md twin with body.
func markdownAnswer(p *gather.ReadPage, body string) *gather.ReadPage {
	p.Twin = &fetch.Response{RequestURL: p.TwinURL, FinalURL: p.TwinURL, Status: 200, Body: []byte(body),
		Header: http.Header{"Content-Type": {"text/markdown; charset=utf-8"}}}
	return p
}

// R.19 and R.20 over a sample: each counts the pages it applies to, and
// R.20 is not applicable when no page is behind a sign-in.
func TestReadAccessChecks(t *testing.T) {
	open := func(path string) *gather.ReadPage {
		return readPage("https://a.example"+path, 200, "<main><h1>Guide</h1><p>"+nWords(300, "w")+"</p></main>")
	}
	walled := func(path string) *gather.ReadPage {
		return readPage("https://a.example"+path, 401, "<title>Sign in</title>")
	}
	rates := readPage("https://a.example/docs/rates", 200, "<main><h1>Rates</h1><p>Every rate.</p>"+dataTable(3000)+"</main>")
	cases := []struct {
		name   string
		pages  []*gather.ReadPage
		id     string
		status report.Status
		ok, of int
	}{
		{"R.19: no data", []*gather.ReadPage{open("/a"), open("/b")}, "R.19", report.Pass, 2, 2},
		{"R.19: one page of data", []*gather.ReadPage{open("/a"), rates}, "R.19", report.Partial, 1, 2},
		{"R.19: walled pages are not read", []*gather.ReadPage{walled("/a"), open("/b")}, "R.19", report.Pass, 1, 1},
		{"R.20: nothing walled", []*gather.ReadPage{open("/a"), open("/b")}, "R.20", report.NA, 0, 0},
		{"R.20: walled without markdown", []*gather.ReadPage{walled("/a"), open("/b")}, "R.20", report.Fail, 0, 1},
		{"R.20: walled with public markdown", []*gather.ReadPage{markdownAnswer(walled("/a"), "# Guide\n\n"+nWords(150, "m")+"\n"), walled("/b"), open("/c")}, "R.20", report.Partial, 1, 2},
		{"R.20: markdown that is a sign-in page too", []*gather.ReadPage{markdownAnswer(walled("/a"), "# Sign in\n\nEnter your email.\n")}, "R.20", report.Fail, 0, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc, ok := ReadByID(c.id)
			if !ok {
				t.Fatalf("no %s", c.id)
			}
			res, n := rc.Judge(sampleSet(&gather.ReadDoc{Limit: 10, Pages: c.pages}, false))
			if res.Status != c.status || n.OK != c.ok || n.Of != c.of {
				t.Errorf("%s %d/%d, want %s %d/%d: %s", res.Status, n.OK, n.Of, c.status, c.ok, c.of, res.Message)
			}
		})
	}
}
