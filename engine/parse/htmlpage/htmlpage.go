package htmlpage

import (
	"bytes"
	"net/url"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/agentready/agentready/engine/clip"
)

// Caps keep a hostile page's extraction bounded.
const (
	maxItems      = 2000    // links, anchors, metas, headings, scripts kept
	maxInlineJS   = 1 << 20 // inline script bytes kept in total
	maxJSONLDSize = 1 << 20 // JSON-LD bytes kept in total
)

type Meta struct {
	Name, Property, HTTPEquiv, Content string
}

type Link struct {
	Rels  []string // lower-cased tokens
	Href  string   // resolved
	Type  string   // lower-cased
	Title string
}

// HasRel reports whether the link carries rel token r.
func (l Link) HasRel(r string) bool {
	for _, x := range l.Rels {
		if x == r {
			return true
		}
	}
	return false
}

type Anchor struct {
	Href string
	Text string
	Rels []string
}

type Heading struct {
	Level int
	Text  string
}

type Script struct {
	Src    string // resolved; empty for inline
	Type   string
	Inline string
}

// Page is the extraction result.
type Page struct {
	Title         string
	Lang          string
	Metas         []Meta
	Links         []Link
	Anchors       []Anchor
	JSONLD        []string
	Headings      []Heading
	Images        int
	ImagesWithAlt int
	Scripts       []Script
	ToolForms     int // elements carrying WebMCP's declarative toolname attribute
	VisibleBytes  int // text bytes outside script/style/svg/noscript/template, whitespace collapsed
	MainWords     int // words of main content (also without nav/header/footer/aside)
	MainText      string
	HasBody       bool
	// MainStart is how many bytes of visible text come before the main
	// content begins (the first <main>, <article> or role="main" element,
	// else the first <h1>); -1 when the page marks none.
	MainStart int
	// PasswordInputs counts <input type="password">: a sign-in form.
	PasswordInputs int
	// TabPanels is the text of each role="tabpanel" element (the first
	// maxItems, each cut at 4 KB): tabbed content a reader may miss.
	TabPanels []string
	// Data is the machine-generated data in the visible content (large
	// uniform tables, JSON blocks, base64), the first maxItems, in
	// document order (see DataBytes).
	Data []Data
}

// MetaNamed returns the content of the first <meta name=…> (case-insensitive), if any.
func (p *Page) MetaNamed(name string) (string, bool) {
	for _, m := range p.Metas {
		if strings.EqualFold(m.Name, name) {
			return m.Content, true
		}
	}
	return "", false
}

var skipVisible = map[atom.Atom]bool{atom.Script: true, atom.Style: true, atom.Svg: true, atom.Noscript: true, atom.Template: true}
var skipMain = map[atom.Atom]bool{atom.Nav: true, atom.Header: true, atom.Footer: true, atom.Aside: true}

// Parse extracts a Page from body; base resolves relative URLs (a <base href> overrides it).
func Parse(body []byte, base *url.URL) *Page {
	doc, err := html.Parse(bytes.NewReader(body))
	p := &Page{MainStart: -1}
	if err != nil {
		return p
	}
	if base == nil {
		base = &url.URL{}
	}
	resolve := func(ref string) string {
		ref = strings.TrimSpace(ref)
		if ref == "" {
			return ""
		}
		u, err := url.Parse(ref)
		if err != nil {
			return ""
		}
		return base.ResolveReference(u).String()
	}
	var visible, main strings.Builder
	inlineJS, ldBytes := 0, 0
	mainMarked := 0 // 1: an h1 set MainStart, 2: a main element did

	type frame struct {
		n               *html.Node
		hidden, nonMain bool
		inData          bool // under a table or code block already measured
	}
	stack := []frame{{n: doc}}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := f.n
		hidden, nonMain, inData := f.hidden, f.nonMain, f.inData
		switch n.Type {
		case html.TextNode:
			if !hidden {
				appendText(&visible, n.Data)
				if !nonMain {
					appendText(&main, n.Data)
				}
			}
		case html.ElementNode:
			a := n.DataAtom
			if skipVisible[a] && n.Namespace == "" || a == atom.Svg {
				hidden = true
			}
			if skipMain[a] {
				nonMain = true
			}
			if _, ok := attr(n, "toolname"); ok {
				p.ToolForms++
			}
			if !hidden && n.Namespace == "" {
				role, _ := attr(n, "role")
				switch {
				case a == atom.Main || a == atom.Article || strings.EqualFold(strings.TrimSpace(role), "main"):
					if mainMarked < 2 { // a main element beats an earlier h1 (a site header's)
						p.MainStart, mainMarked = visible.Len(), 2
					}
				case a == atom.H1 && mainMarked == 0:
					p.MainStart, mainMarked = visible.Len(), 1
				}
				if strings.EqualFold(strings.TrimSpace(role), "tabpanel") && len(p.TabPanels) < maxItems {
					p.TabPanels = append(p.TabPanels, strings.Join(strings.Fields(textOf(n, 4096)), " "))
				}
				if !inData && len(p.Data) < maxItems {
					var d Data
					var ok bool
					switch a {
					case atom.Table: // a layout table may hold data below it
						d, ok = tableData(n)
						inData = ok
					case atom.Pre, atom.Code: // read once, with what it holds
						d, ok = blockData(n)
						inData = true
					case atom.Img:
						src, _ := attr(n, "src")
						d, ok = uriData(src)
					}
					if ok {
						p.Data = append(p.Data, d)
					}
				}
				if a == atom.Input {
					if typ, _ := attr(n, "type"); strings.EqualFold(strings.TrimSpace(typ), "password") {
						p.PasswordInputs++
					}
				}
			}
			switch a {
			case atom.Html:
				p.Lang, _ = attr(n, "lang")
			case atom.Body:
				p.HasBody = true
			case atom.Base:
				if h, ok := attr(n, "href"); ok {
					if u, err := url.Parse(strings.TrimSpace(h)); err == nil {
						base = base.ResolveReference(u)
					}
				}
			case atom.Title:
				if p.Title == "" && n.Parent != nil && n.Namespace == "" {
					p.Title = strings.TrimSpace(textOf(n, 500))
				}
			case atom.Meta:
				if len(p.Metas) < maxItems {
					m := Meta{}
					m.Name, _ = attr(n, "name")
					m.Property, _ = attr(n, "property")
					m.HTTPEquiv, _ = attr(n, "http-equiv")
					m.Content, _ = attr(n, "content")
					m.Name = strings.ToLower(strings.TrimSpace(m.Name))
					p.Metas = append(p.Metas, m)
				}
			case atom.Link:
				if len(p.Links) < maxItems {
					rel, _ := attr(n, "rel")
					href, _ := attr(n, "href")
					typ, _ := attr(n, "type")
					title, _ := attr(n, "title")
					p.Links = append(p.Links, Link{Rels: relTokens(rel), Href: resolve(href), Type: strings.ToLower(strings.TrimSpace(typ)), Title: title})
				}
			case atom.A:
				if href, ok := attr(n, "href"); ok && len(p.Anchors) < maxItems {
					rel, _ := attr(n, "rel")
					p.Anchors = append(p.Anchors, Anchor{Href: resolve(href), Text: strings.TrimSpace(textOf(n, 200)), Rels: relTokens(rel)})
				}
			case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
				if len(p.Headings) < maxItems {
					p.Headings = append(p.Headings, Heading{Level: int(n.Data[1] - '0'), Text: strings.TrimSpace(textOf(n, 200))})
				}
			case atom.Img:
				p.Images++
				if _, ok := attr(n, "alt"); ok {
					p.ImagesWithAlt++
				}
			case atom.Script:
				typ, _ := attr(n, "type")
				typ = strings.ToLower(strings.TrimSpace(typ))
				if mt, _, _ := strings.Cut(typ, ";"); strings.TrimSpace(mt) == "application/ld+json" {
					t := textOf(n, maxJSONLDSize)
					if ldBytes+len(t) <= maxJSONLDSize {
						ldBytes += len(t)
						p.JSONLD = append(p.JSONLD, t)
					}
				} else if len(p.Scripts) < maxItems {
					s := Script{Type: typ}
					if src, ok := attr(n, "src"); ok {
						s.Src = resolve(src)
					} else if inlineJS < maxInlineJS {
						s.Inline = textOf(n, maxInlineJS-inlineJS)
						inlineJS += len(s.Inline)
					}
					p.Scripts = append(p.Scripts, s)
				}
			}
		}
		for c := n.LastChild; c != nil; c = c.PrevSibling {
			stack = append(stack, frame{n: c, hidden: hidden, nonMain: nonMain, inData: inData})
		}
	}
	p.VisibleBytes = visible.Len()
	p.MainText = main.String()
	p.MainWords = CountWords(p.MainText)
	return p
}

func appendText(b *strings.Builder, s string) {
	for _, f := range strings.Fields(s) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f)
	}
}

// CountWords counts whitespace-separated words, and Han, Hiragana and Katakana
// text (written without spaces) at two characters a word, the typical length of
// a Chinese or Japanese word.
func CountWords(s string) int {
	words, cjk := 0, 0
	inWord := false
	for _, r := range s {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana):
			cjk++
			inWord = false
		case unicode.IsSpace(r) || unicode.IsPunct(r) && r != '\'' && r != '-':
			inWord = false
		default:
			if !inWord {
				words++
				inWord = true
			}
		}
	}
	return words + (cjk+1)/2
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, key) {
			return a.Val, true
		}
	}
	return "", false
}

func relTokens(rel string) []string {
	f := strings.Fields(strings.ToLower(rel))
	return f
}

// textOf concatenates the text under n, up to max bytes.
func textOf(n *html.Node, max int) string {
	var b strings.Builder
	stack := []*html.Node{n}
	for len(stack) > 0 && b.Len() < max {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
		for k := c.LastChild; k != nil; k = k.PrevSibling {
			stack = append(stack, k)
		}
	}
	return clip.Bytes(b.String(), max)
}
