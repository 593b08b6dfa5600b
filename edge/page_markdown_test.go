package edge

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	xhtml "golang.org/x/net/html"

	"github.com/agentready/agentready/edge/mdtext"
)

// hostileTitles are what sites have put in the titles of their llms.txt,
// OpenAPI documents, agent cards and OAuth metadata to reach whoever
// renders a report.
var hostileTitles = []string{
	"[click](https://attacker.example)",
	"![x](https://attacker.example/p.png)",
	"<img src=x onerror=alert(1)>",
	"<script>alert(1)</script>",
	"<https://attacker.example>",
	"[a]\n\n[a]: https://attacker.example",
	"&lt;script&gt;alert(1)&lt;/script&gt;",
	"`</code><img src=x onerror=alert(1)>`",
	"Invoice\u202Egnp.exe\u202C and \u200Bhidden\uFEFF",
	"x\n\n# Heading\n\n<iframe src=https://attacker.example>",
}

// markdownElements are the elements the report's own markdown makes; a
// link is ours only if it leads to our base.
var markdownElements = map[string]bool{"h1": true, "h2": true, "p": true, "ul": true, "ol": true, "li": true, "strong": true, "code": true, "pre": true, "a": true}

// renderMarkdown renders md as GitHub Flavored Markdown, raw HTML allowed,
// and fails on any element, attribute or comment the report does not write
// itself. It returns the visible text.
func renderMarkdown(t *testing.T, md []byte, base string) string {
	t.Helper()
	var buf bytes.Buffer
	r := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(gmhtml.WithUnsafe()))
	if err := r.Convert(md, &buf); err != nil {
		t.Fatal(err)
	}
	doc, err := xhtml.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	body := all(doc, tagClass("body", ""))[0]
	for _, n := range all(body, func(*xhtml.Node) bool { return true }) {
		switch {
		case n.Type == xhtml.CommentNode:
			t.Errorf("raw HTML reached the rendering: <!--%s-->", n.Data)
		case n.Type != xhtml.ElementNode || n == body:
		case !markdownElements[n.Data]:
			t.Errorf("a <%s> from a site in the rendered report", n.Data)
		case n.Data == "a":
			if href, _ := attr(n, "href"); len(n.Attr) != 1 || !strings.HasPrefix(href, base+"/") {
				t.Errorf("a link to %q in the rendered report", href)
			}
		case len(n.Attr) != 0:
			t.Errorf("<%s> has attributes %v", n.Data, n.Attr)
		}
	}
	return text(body)
}

func collapsedVisible(s string) string { return mdtext.Visible(strings.Join(strings.Fields(s), " ")) }

// The markdown twin quotes sites as text. Every place a site's string
// reaches it (a check's name, message and recommendation, quoted with %q or
// embedded as is, a signal, a step of the plan, a change since the last scan)
// carries a hostile title; rendered with a GFM library, the report has no
// link but ours, no image, script or other element a site wrote, and reads
// the titles as they were written, invisible characters shown as escapes.
func TestReportMarkdownQuotesSitesAsText(t *testing.T) {
	const base = "https://agentready.example"
	for _, title := range hostileTitles {
		t.Run(title, func(t *testing.T) {
			_, rep := fixtureReport(t, "peer")
			rep.Checks[0].Message = fmt.Sprintf("llms.txt is valid: %q with 1 section and 2 links.", title)
			rep.Checks[1].Name = title
			rep.Checks[1].Message = "Authorization-server metadata names token endpoint " + title + "."
			rep.Checks[1].Recommendation = "Replace " + title + " with `application/json`."
			rep.Signals[0].Name, rep.Signals[0].Message = title, title
			rep.Plan.Steps[0].Name, rep.Plan.Steps[0].Fix = title, "Publish "+title+"."
			rep.Previous.Changed[0].Name, rep.Previous.Changed[0].Message = title, title
			md := reportMarkdown(base, rep.URL, rep, "")
			if bytes.ContainsAny(md, "\u202E\u200B\uFEFF") {
				t.Error("a raw bidi or zero-width character in the markdown")
			}
			visible := renderMarkdown(t, md, base)
			wants := []string{fmt.Sprintf("%q", title), collapsedVisible(title)}
			if strings.Contains(title, "`") {
				wants = wants[1:] // a message's backticks are code spans
			}
			for _, want := range wants {
				if !strings.Contains(visible, want) {
					t.Errorf("the rendered report does not read %q:\n%s", want, md)
				}
			}
			if !strings.Contains(visible, "Replace") || !strings.Contains(string(md), "`application/json`") {
				t.Errorf("our own code span in a recommendation is lost:\n%s", md)
			}
		})
	}
}

// Evidence blocks on the report page show bidi and zero-width characters as
// escapes, in details written as words and in plain ones.
func TestEvidenceShowsInvisibleCharacters(t *testing.T) {
	_, rep := fixtureReport(t, "peer")
	rep.Checks[0].Details = "{\"pageTitle\":\"Invoice\u202Egnp.exe\u202C\",\"note\":\"a\u200Bb\u2066c\u2069\uFEFF\",\"tried\":[\"/a\",\"/b\"],\"ok\":false}"
	rep.Checks[1].Details = "plain\u200E text\u061C \u200D"
	page := reportHTML("https://agentready.example", rep.URL, rep, "", "")
	var evidence []string
	for _, d := range all(parsePage(t, page).root, tagClass("div", "snippet")) {
		if strings.HasPrefix(text(d), "Evidence:") {
			evidence = append(evidence, text(all(d, tagClass("code", ""))[0]))
		}
	}
	if len(evidence) < 2 {
		t.Fatalf("%d evidence blocks", len(evidence))
	}
	joined := strings.Join(evidence, "\n")
	for _, r := range "\u202E\u202C\u200B\u2066\u2069\uFEFF\u200E\u061C\u200D" {
		if strings.ContainsRune(joined, r) {
			t.Errorf("U+%04X raw in an evidence block", r)
		}
		if !strings.Contains(joined, fmt.Sprintf(`\u%04X`, r)) {
			t.Errorf("U+%04X is not shown as an escape in the evidence", r)
		}
	}
	// Details are words: one "name: value" line per member, in order.
	if !strings.Contains(joined, `page title: Invoice\u202Egnp.exe\u202C note: a`) || !strings.Contains(joined, "tried: /a, /b ok: no") {
		t.Errorf("the evidence is not the details in words, with escapes: %s", joined)
	}
}
