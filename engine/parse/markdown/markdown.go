// Package markdown reads what the read suite judges in a page's markdown:
// its headings, the destinations of its links, whether every code fence
// closes, and whether it names llms.txt. Headings and links come from
// goldmark's CommonMark parser; fences are checked line by line, because a
// CommonMark parser closes an unclosed fence at the end of the document and
// so cannot say that it was left open.
package markdown

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// MaxBytes is how much of a document is read.
const MaxBytes = 2 << 20

const maxItems = 2000

// Heading is one ATX or setext heading.
type Heading struct {
	Level int
	Text  string
}

// Doc is what was read.
type Doc struct {
	Headings []Heading
	Links    []string // link and image destinations, as written
	// UnclosedFence is the 1-based line of a code fence that never closes
	// (0 when every fence closes); Fences counts the fences that open.
	UnclosedFence int
	Fences        int
	NamesLlms     bool // mentions llms.txt (a directive agents can follow)
}

var llms = regexp.MustCompile(`(?i)llms(-full)?\.txt`)

// Parse reads body (at most MaxBytes of it).
func Parse(body []byte) *Doc {
	if len(body) > MaxBytes {
		body = body[:MaxBytes]
	}
	body = bytes.ToValidUTF8(body, []byte("\uFFFD"))
	d := &Doc{NamesLlms: llms.Match(body)}
	d.Fences, d.UnclosedFence = fences(body)
	root := goldmark.New().Parser().Parse(text.NewReader(body))
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch x := n.(type) {
		case *ast.Heading:
			if len(d.Headings) < maxItems {
				d.Headings = append(d.Headings, Heading{Level: x.Level, Text: strings.TrimSpace(string(plain(x, body)))})
			}
		case *ast.Link:
			if len(d.Links) < maxItems {
				d.Links = append(d.Links, string(x.Destination))
			}
		case *ast.AutoLink:
			if len(d.Links) < maxItems {
				d.Links = append(d.Links, string(x.URL(body)))
			}
		}
		return ast.WalkContinue, nil
	})
	return d
}

// plain is a node's text without markup.
func plain(n ast.Node, src []byte) []byte {
	var b bytes.Buffer
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if t, ok := c.(*ast.Text); ok {
			b.Write(t.Segment.Value(src))
			if t.SoftLineBreak() {
				b.WriteByte(' ')
			}
			continue
		}
		b.Write(plain(c, src))
	}
	return b.Bytes()
}

// fences counts the code fences that open and finds one that never closes:
// a line of three or more backticks or tildes (indented at most three
// spaces) opens a fence, which a line of at least as many of the same
// character, with nothing after them, closes.
func fences(body []byte) (opened, unclosed int) {
	var char byte
	width, openLine := 0, 0
	for i, line := range bytes.Split(body, []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		trimmed := bytes.TrimLeft(line, " ")
		if len(line)-len(trimmed) > 3 || len(trimmed) < 3 || (trimmed[0] != '`' && trimmed[0] != '~') {
			continue
		}
		c := trimmed[0]
		n := 0
		for n < len(trimmed) && trimmed[n] == c {
			n++
		}
		if n < 3 {
			continue
		}
		rest := trimmed[n:]
		switch {
		case width == 0:
			if c == '`' && bytes.IndexByte(rest, '`') >= 0 { // an info string may not hold a backtick
				continue
			}
			char, width, openLine = c, n, i+1
			opened++
		case c == char && n >= width && len(bytes.TrimSpace(rest)) == 0:
			width = 0
		}
	}
	if width > 0 {
		return opened, openLine
	}
	return opened, 0
}
