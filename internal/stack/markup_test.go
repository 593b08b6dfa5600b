package stack_test

import (
	"bytes"
	"net/url"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	xhtml "golang.org/x/net/html"

	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/testenv"
)

// testdata/sites/markup names its documents with markdown links and images,
// <img onerror>, <script>, an autolink, a reference-style definition, HTML
// entities, backticks and U+202E (its README says where). Scanned through
// the whole service, the report's markdown twin, rendered with a GitHub
// Flavored Markdown library that lets raw HTML through, has no link to the
// site's attacker, no image, script or other element the site wrote, and
// still reads the site's titles; the report page's Evidence blocks show the
// bidi and zero-width characters as \u escapes.
func TestMarkupSiteReportStaysText(t *testing.T) {
	svc := start(t, stack.Options{Env: reportEnv})
	s := site(t, "markup")
	scanSite(t, svc, s.URL, false)
	q := url.QueryEscape(s.URL)

	_, md := testenv.Get(t, svc.URL+"/report?url="+q, "Accept", "text/markdown")
	var rendered bytes.Buffer
	gfm := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(gmhtml.WithUnsafe()))
	if err := gfm.Convert(md, &rendered); err != nil {
		t.Fatal(err)
	}
	doc, err := xhtml.Parse(&rendered)
	if err != nil {
		t.Fatal(err)
	}
	ours := map[string]bool{"html": true, "head": true, "body": true, "h1": true, "h2": true, "p": true, "ul": true, "ol": true, "li": true, "strong": true, "code": true, "pre": true, "a": true}
	var visible strings.Builder
	var walk func(*xhtml.Node)
	walk = func(n *xhtml.Node) {
		switch n.Type {
		case xhtml.CommentNode:
			t.Errorf("raw HTML from the site in the rendered markdown: <!--%s-->", n.Data)
		case xhtml.TextNode:
			visible.WriteString(n.Data)
		case xhtml.ElementNode:
			if !ours[n.Data] {
				t.Errorf("a <%s> from the site in the rendered markdown", n.Data)
			}
			for _, a := range n.Attr {
				if n.Data != "a" || a.Key != "href" || strings.Contains(a.Val, "attacker") {
					t.Errorf("<%s %s=%q> in the rendered markdown", n.Data, a.Key, a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	for _, title := range []string{"[click](https://attacker.example) ![x](https://attacker.example/p.png) <img src=x onerror=alert(1)>",
		"<script>alert(1)</script> <https://attacker.example> &lt;script&gt;", "[a]: https://attacker.example [a] <img src=x onerror=alert(3)> \\u202Eevil"} {
		if !strings.Contains(visible.String(), title) {
			t.Errorf("the rendered markdown does not read %q:\n%s", title, md)
		}
	}
	if bytes.ContainsAny(md, "\u202E\u202C\u200B\uFEFF") {
		t.Errorf("a raw bidi or zero-width character in the markdown twin")
	}

	_, page := testenv.Get(t, svc.URL+"/report?url="+q, "Accept", "text/html")
	root, err := xhtml.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var evidence []string
	var find func(*xhtml.Node)
	find = func(n *xhtml.Node) {
		if n.Type == xhtml.ElementNode && n.Data == "pre" && n.PrevSibling != nil && strings.Contains(markupText(n.PrevSibling), "Evidence:") {
			evidence = append(evidence, markupText(n))
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			find(c)
		}
	}
	find(root)
	joined := strings.Join(evidence, "\n")
	if len(evidence) == 0 || strings.ContainsAny(joined, "\u202E\u202C\u200B\uFEFF") || !strings.Contains(joined, `Acme Agent \u202Egnp.exe\u202C`) {
		t.Errorf("the Evidence blocks (%d) do not show the agent card's bidi and zero-width characters as escapes: %.1500q", len(evidence), joined)
	}
}

func markupText(n *xhtml.Node) string {
	var b strings.Builder
	var walk func(*xhtml.Node)
	walk = func(n *xhtml.Node) {
		if n.Type == xhtml.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}
