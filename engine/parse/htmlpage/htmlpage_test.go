package htmlpage

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentready/agentready/internal/testing/testenv"
)

const corpus = "../../../../shared/corpus/html/" // fuzz seeds only; tests use testenv.Shared

func TestExtraction(t *testing.T) {
	base, _ := url.Parse("https://example.com/dir/page")
	p := Parse([]byte(`<!doctype html><html lang="en"><head>
<meta content="Site for agents" name="LLMS:DESCRIPTION">
<base href="https://example.com/">
<link href="/" rel="Canonical  alternate">
<link rel="alternate" type="Application/RSS+XML" href="feed.xml">
<script type="application/ld+json; charset=utf-8">{"@type":"Organization"}</script>
<script>var x = "<h1>not a heading</h1>";</script>
<style>.a{color:red}</style>
</head><body>
<nav>Menu words here</nav>
<h1>Title</h1><h3>Skip</h3>
<svg><text>drawing text</text></svg>
<img src="a.png" alt=""><img src="b.png">
<form toolname="search" tooldescription="Search the site"></form>
<p>Main content  words.</p>
<footer>Footer words</footer>
</body></html>`), base)
	if v, ok := p.MetaNamed("llms:description"); !ok || v != "Site for agents" {
		t.Errorf("meta in any attribute order and case: %q %v", v, ok)
	}
	if len(p.Links) != 2 || !p.Links[0].HasRel("canonical") || p.Links[0].Href != "https://example.com/" {
		t.Errorf("rel is a token list, hrefs resolve: %+v", p.Links)
	}
	if p.Links[1].Href != "https://example.com/feed.xml" || p.Links[1].Type != "application/rss+xml" {
		t.Errorf("<base href> and lower-cased type: %+v", p.Links[1])
	}
	if len(p.JSONLD) != 1 || len(p.Headings) != 2 || p.Headings[1].Level != 3 {
		t.Errorf("json-ld %d, headings %+v", len(p.JSONLD), p.Headings)
	}
	if p.Images != 2 || p.ImagesWithAlt != 1 || p.ToolForms != 1 {
		t.Errorf("images %d/%d, tool forms %d", p.ImagesWithAlt, p.Images, p.ToolForms)
	}
	if p.MainWords != 5 || strings.Contains(p.MainText, "Menu") || strings.Contains(p.MainText, "drawing") || strings.Contains(p.MainText, "color") {
		t.Errorf("main text %q (%d words)", p.MainText, p.MainWords)
	}
}

func TestCountWords(t *testing.T) {
	cases := map[string]int{
		"one two  three":     3,
		"日本語のテキスト":           4, // 8 CJK characters, two a word
		"Go 言語":              2,
		"don't stop-me now.": 3,
		"한국어 문장도 띄어쓰기를 합니다": 4, // Hangul is space-separated
	}
	for s, want := range cases {
		if got := CountWords(s); got != want {
			t.Errorf("CountWords(%q) = %d, want %d", s, got, want)
		}
	}
}

// The real pages of the corpus, with what a careful reader would count.
func TestCorpus(t *testing.T) {
	dir := testenv.Shared(t, "corpus/html")
	read := func(name string) *Page {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return Parse(b, nil)
	}
	p := read("hukumusume-aesop.html")
	if len(p.Headings) != 0 || p.Images != 17 || p.ImagesWithAlt != 6 || p.MainWords < 300 {
		t.Errorf("hukumusume: headings %d images %d/%d words %d", len(p.Headings), p.ImagesWithAlt, p.Images, p.MainWords)
	}
	p = read("tumblr-minecraft.html")
	if len(p.JSONLD) != 1 || p.Images != 2 || p.ImagesWithAlt != 0 {
		t.Errorf("tumblr: jsonld %d images %d/%d", len(p.JSONLD), p.ImagesWithAlt, p.Images)
	}
	p = read("v8-blog-standalone-wasm.html")
	h1 := 0
	for _, h := range p.Headings {
		if h.Level == 1 {
			h1++
		}
	}
	if h1 != 2 {
		t.Errorf("v8: %d h1, want 2 (site header + article)", h1)
	}
	if _, ok := p.MetaNamed("viewport"); !ok {
		t.Error("v8: viewport meta")
	}
	p = read("ebb-org-blog-post.html")
	feeds := 0
	for _, l := range p.Links {
		if l.HasRel("alternate") && strings.Contains(l.Type, "rss") {
			feeds++
		}
	}
	if feeds != 3 {
		t.Errorf("ebb: %d RSS alternates, want 3", feeds)
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(corpus + "*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(strings.Repeat("<div>", 10000)))
	f.Fuzz(func(t *testing.T, body []byte) {
		p := Parse(body, nil)
		if p.ImagesWithAlt > p.Images || len(p.Links) > maxItems || len(p.Anchors) > maxItems {
			t.Fatalf("inconsistent page: %d/%d images, %d links", p.ImagesWithAlt, p.Images, len(p.Links))
		}
		if data, total := p.DataBytes(); len(p.Data) > maxItems || data < 0 || total < p.VisibleBytes {
			t.Fatalf("inconsistent data: %d elements, %d of %d bytes", len(p.Data), data, total)
		}
	})
}
