package htmlpage

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Machine-generated data in a page's content: what an agent reads as text
// but a person would read as a download. The thresholds are where such an
// element starts to weigh on a page (AFDocs's embedded-data-serialization
// uses the same ones, from the Agent-Friendly Documentation Spec).
const (
	// DataMinRows is the data rows from which a table with uniform rows
	// counts as data.
	DataMinRows = 20
	// DataMinBytes is the size from which a JSON block or a base64 run
	// counts as data.
	DataMinBytes = 2000
	// uniformShare is the share of data rows (percent) that must have the
	// most common cell count for a table to be uniform.
	uniformShare = 80
	// maxDataText bounds the text of one block read to tell JSON.
	maxDataText = 4 << 20
)

// Data kinds.
const (
	DataTable  = "table"
	DataJSON   = "json"
	DataBase64 = "base64"
)

// Data is one element of machine-generated data in the visible content.
type Data struct {
	Kind string
	// Bytes is its size as an agent reads it: a table's or block's text
	// (whitespace collapsed), or a data: URI's length.
	Bytes int
	Rows  int  // a table's data rows
	URI   bool // an image's data: URI, which VisibleBytes does not count
}

// base64Runs is the length of the runs of DataMinBytes or more base64
// characters in s (0 when none): no prose or code goes 2,000 characters
// without a space or punctuation outside that set, and a run holds both
// letters and digits (a line of one repeated letter is a rule, not data).
// Only the runs count, not the code block around them. (RE2 caps a repeat
// at 1,000, so they are counted here.)
func base64Runs(s string) int {
	total, run := 0, 0
	letters, digits := false, false
	end := func() {
		if run >= DataMinBytes && letters && digits {
			total += run
		}
		run, letters, digits = 0, false, false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z':
			run++
			letters = true
		case '0' <= c && c <= '9':
			run++
			digits = true
		case c == '+' || c == '/' || c == '=':
			run++
		default:
			end()
		}
	}
	end()
	return total
}

// tableData measures a table (not one inside another: the walk reads the
// outermost only, so a page of nested tables costs one pass): its data rows
// (rows outside <thead>, less a first row of <th> only) and whether they
// are uniform; it is data from DataMinRows uniform rows.
func tableData(t *html.Node) (Data, bool) {
	var counts []int
	headerRows := 0
	var walk func(n *html.Node, inHead bool)
	walk = func(n *html.Node, inHead bool) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch c.DataAtom {
			case atom.Table: // a nested table's rows are its own
				continue
			case atom.Thead:
				walk(c, true)
			case atom.Tr:
				cells, heads := 0, 0
				for d := c.FirstChild; d != nil; d = d.NextSibling {
					if d.Type == html.ElementNode && (d.DataAtom == atom.Td || d.DataAtom == atom.Th) {
						cells++
						if d.DataAtom == atom.Th {
							heads++
						}
					}
				}
				if inHead || len(counts) == 0 && headerRows == 0 && cells > 0 && heads == cells {
					headerRows++
					continue
				}
				counts = append(counts, cells)
			default:
				walk(c, inHead)
			}
		}
	}
	walk(t, false)
	if len(counts) < DataMinRows {
		return Data{}, false
	}
	tally := map[int]int{}
	modal := 0
	for _, n := range counts {
		tally[n]++
		modal = max(modal, tally[n])
	}
	if 100*modal < uniformShare*len(counts) {
		return Data{}, false
	}
	return Data{Kind: DataTable, Bytes: visibleLen(t), Rows: len(counts)}, true
}

// blockData tells whether a <pre> or <code> block is data: JSON, or a
// base64 run, of DataMinBytes or more.
func blockData(n *html.Node) (Data, bool) {
	text := strings.TrimSpace(textOf(n, maxDataText))
	if len(text) < DataMinBytes {
		return Data{}, false
	}
	if declaredJSON(n) || LooksJSON(text) {
		return Data{Kind: DataJSON, Bytes: collapsedLen(text)}, true
	}
	if runs := base64Runs(text); runs > 0 {
		return Data{Kind: DataBase64, Bytes: runs}, true
	}
	return Data{}, false
}

// declaredJSON reports a code block whose class names JSON as its
// language (language-json, lang-ndjson…, as syntax highlighters mark it),
// on it or on the <code> inside a <pre>.
func declaredJSON(n *html.Node) bool {
	if jsonClass(n) {
		return true
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			return c.DataAtom == atom.Code && jsonClass(c)
		}
	}
	return false
}

// jsonClass reports a class attribute naming JSON as the language.
func jsonClass(n *html.Node) bool {
	class, _ := attr(n, "class")
	for _, f := range strings.Fields(strings.ToLower(class)) {
		lang, ok := strings.CutPrefix(f, "language-")
		if !ok {
			lang, ok = strings.CutPrefix(f, "lang-")
		}
		switch lang {
		case "json", "jsonc", "json5", "jsonl", "ndjson", "geojson":
			return ok
		}
	}
	return false
}

// uriData tells whether an image's src is a base64 data: URI of
// DataMinBytes or more, which a converter to markdown keeps whole.
func uriData(src string) (Data, bool) {
	if len(src) < DataMinBytes || !strings.HasPrefix(strings.ToLower(strings.TrimSpace(src[:min(len(src), 64)])), "data:") ||
		!strings.Contains(strings.ToLower(src[:min(len(src), 200)]), ";base64,") {
		return Data{}, false
	}
	return Data{Kind: DataBase64, Bytes: len(src), URI: true}, true
}

// LooksJSON reports whether text (trimmed) is a JSON object or array:
// valid JSON, or, since documentation's JSON often has comments, trailing
// commas or "…" elisions, braces around at least 10 quoted keys, one per
// 150 bytes or denser (prose and code that start with a brace have far
// fewer). Written here because no JSON library judges "nearly JSON".
func LooksJSON(text string) bool {
	if len(text) < 2 {
		return false
	}
	first, last := text[0], text[len(text)-1]
	if !(first == '{' && last == '}' || first == '[' && last == ']') {
		return false
	}
	if json.Valid([]byte(text)) {
		return true
	}
	keys := quotedKeys(text)
	return keys >= 10 && keys*150 >= len(text)
}

// quotedKeys counts `"key":` in s (a key of 1–200 bytes on one line).
func quotedKeys(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(s) && j-i <= 201 && s[j] != '"' && s[j] != '\n' {
			j++
		}
		if j >= len(s) || s[j] != '"' || j == i+1 || j-i > 201 {
			continue
		}
		k := j + 1
		for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
			k++
		}
		if k < len(s) && s[k] == ':' {
			n++
		}
		i = j
	}
	return n
}

// visibleLen is the length of n's visible text with whitespace collapsed,
// as Page.VisibleBytes counts it.
func visibleLen(n *html.Node) int {
	size, words := 0, 0
	stack := []*html.Node{n}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch c.Type {
		case html.TextNode:
			s, w := fields(c.Data)
			size, words = size+s, words+w
		case html.ElementNode:
			if skipVisible[c.DataAtom] && c.Namespace == "" || c.DataAtom == atom.Svg {
				continue
			}
		}
		for k := c.LastChild; k != nil; k = k.PrevSibling {
			stack = append(stack, k)
		}
	}
	return size + max(0, words-1)
}

// collapsedLen is len(s) with each run of whitespace counted as one space
// and none at the ends.
func collapsedLen(s string) int {
	size, words := fields(s)
	return size + max(0, words-1)
}

// fields is the bytes and the number of strings.Fields(s), without
// building them: a data table is thousands of text nodes.
func fields(s string) (size, words int) {
	in := false
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		if unicode.IsSpace(r) {
			in = false
			continue
		}
		if !in {
			words++
			in = true
		}
		size += w
	}
	return size, words
}

// DataBytes is the size of the page's data elements, and the size of what
// an agent reads of the page: its visible text plus the data: URIs a
// converter to markdown keeps.
func (p *Page) DataBytes() (data, total int) {
	total = p.VisibleBytes
	for _, d := range p.Data {
		data += d.Bytes
		if d.URI {
			total += d.Bytes
		}
	}
	return data, total
}
