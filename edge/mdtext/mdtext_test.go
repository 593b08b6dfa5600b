package mdtext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	gmhtml "github.com/yuin/goldmark/renderer/html"
)

// Real CommonMark renderers, raw HTML allowed as many renderers allow it:
// plain CommonMark, and GitHub Flavored Markdown with autolinked bare URLs,
// footnotes, definition lists and heading attributes on top.
var renderers = map[string]goldmark.Markdown{
	"commonmark": goldmark.New(goldmark.WithRendererOptions(gmhtml.WithUnsafe())),
	"gfm": goldmark.New(goldmark.WithExtensions(extension.GFM, extension.Footnote, extension.DefinitionList),
		goldmark.WithParserOptions(parser.WithAttribute()), goldmark.WithRendererOptions(gmhtml.WithUnsafe())),
}

// jsonRenderers leave out GFM's autolinking of bare URLs: JSON leaves a URL
// as it is, and an autolinked one shows itself as its text.
var jsonRenderers = map[string]goldmark.Markdown{
	"commonmark": renderers["commonmark"],
	"gfm-without-autolinks": goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList, extension.Footnote),
		goldmark.WithRendererOptions(gmhtml.WithUnsafe())),
}

var tag = regexp.MustCompile(`^</?([a-z0-9]+)>`)

// renderedText renders one line of markdown and returns the text a reader
// sees. Every element must be among allowed and carry no attribute: the
// renderer escapes < in text, so any other < in its output is markup that
// came from the input.
func renderedText(t *testing.T, md goldmark.Markdown, line string, allowed ...string) string {
	t.Helper()
	text, err := render(md, line, allowed...)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

func render(md goldmark.Markdown, line string, allowed ...string) (string, error) {
	var buf bytes.Buffer
	if err := md.Convert([]byte(line), &buf); err != nil {
		return "", fmt.Errorf("render %q: %v", line, err)
	}
	out := buf.String()
	var text strings.Builder
	for {
		i := strings.IndexByte(out, '<')
		if i < 0 {
			text.WriteString(out)
			break
		}
		text.WriteString(out[:i])
		m := tag.FindStringSubmatch(out[i:])
		if m == nil || !contains(allowed, m[1]) {
			return "", fmt.Errorf("%q renders markup of its own:\n%s", line, buf.String())
		}
		out = out[i+len(m[0]):]
	}
	return strings.TrimSuffix(html.UnescapeString(text.String()), "\n"), nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func collapsed(s string) string { return strings.Join(strings.Fields(s), " ") }

// wantMessage is what a reader sees of Message(s): paired backticks gone
// (they made code spans), an unpaired one kept.
func wantMessage(s string) string {
	parts := strings.Split(collapsed(s), "`")
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 && i == len(parts)-1 {
			b.WriteString("`")
		}
		b.WriteString(Visible(p))
	}
	return b.String()
}

// assertInert checks the escaped forms of s where the report puts them,
// after our own words, at the end of a line and at its start: one paragraph
// with no element but code spans, showing exactly the text.
func assertInert(t *testing.T, s string) {
	t.Helper()
	for name, md := range renderers {
		for _, c := range []struct {
			kind, escaped, want string
		}{
			{"Text", Text(s), Visible(collapsed(s))},
			{"Message", Message(s), wantMessage(s)},
		} {
			if got, want := renderedText(t, md, "Site said: "+c.escaped+" (end)", "p", "code"), "Site said: "+c.want+" (end)"; got != want {
				t.Fatalf("%s, %s(%q) = %q after our words reads\n %q, want\n %q", name, c.kind, s, c.escaped, got, want)
			}
			if got, want := renderedText(t, md, "Site said: "+c.escaped+"\nnext line", "p", "code"), "Site said: "+c.want+"\nnext line"; got != want && c.escaped != "" {
				t.Fatalf("%s, %s(%q) = %q at a line end reads\n %q, want\n %q", name, c.kind, s, c.escaped, got, want)
			}
			want := c.want + " (end)"
			if c.escaped == "" {
				want = "(end)" // a paragraph's leading space is not text
			}
			if got := renderedText(t, md, c.escaped+" (end)", "p", "code"); got != want {
				t.Fatalf("%s, %s(%q) = %q at a line start reads\n %q, want\n %q", name, c.kind, s, c.escaped, got, want)
			}
		}
	}
}

var hostile = []string{
	"[click](https://attacker.example)",
	"![x](https://attacker.example/p.png)",
	"<img src=x onerror=alert(1)>",
	"<script>alert(1)</script>",
	"<https://attacker.example>",
	"[a]: https://attacker.example",
	"[a]\n\n[a]: https://attacker.example",
	"&lt;script&gt; &#60;b&#62; &amp;",
	"`code` ``two`` ```",
	"a\u202Egnp.exe\u202C and \u2066isolated\u2069 \u200Bzero\u200Dwidth\uFEFF \u061C \u200E\u200F",
	"# Heading",
	"- item",
	"1. item",
	"2) item",
	"> quote",
	"***",
	"    indented code",
	"```js\nalert(1)\n```",
	"<!-- comment --> <?php ?> <![CDATA[x]]>",
	"**bold** _em_ ~~del~~ snake_case_name",
	"| a | b |\n|---|---|\n| c | d |",
	"[^1]\n\n[^1]: https://attacker.example",
	"term\n: definition",
	"Title {#id onclick=alert(1)}",
	"www.attacker.example and mailto:x@attacker.example and ftp://attacker.example/f",
	"(https://attacker.example/a_(b)).",
	"`https://attacker.example`x`",
	"\\[not a link\\](https://attacker.example) \\",
	"a\x00b \x1b[31mred\x1b[0m \x7f",
	"\xff\xfe invalid \xc3",
	"tag \U000E0041\U000E0042 smuggled",
	"$x$ and $$y$$",
	"line one\nline two\r\n\tline three",
	"",
	"   ",
}

// Hostile titles stay text, at a line start or after our own words, in
// CommonMark and in GitHub Flavored Markdown.
func TestHostileStringsStayText(t *testing.T) {
	for _, s := range hostile {
		assertInert(t, s)
	}
}

// The check above can fail: the strings as sites sent them, unescaped, do
// render links, images and HTML (the report did that before mdtext).
func TestRenderCheckSeesMarkup(t *testing.T) {
	for _, raw := range hostile[:5] {
		for name, md := range renderers {
			if _, err := render(md, "Site said: "+strings.ReplaceAll(raw, "\n", " ")+" (end)", "p", "code"); err == nil {
				t.Errorf("%s: %q unescaped passes the check", name, raw)
			}
		}
	}
	if _, err := render(renderers["gfm"], "Site said: www.attacker.example (end)", "p", "code"); err == nil {
		t.Error("gfm does not autolink a bare www. address")
	}
}

// What is plain stays plain: the report must read well as markdown source.
func TestOrdinaryTextIsLeftReadable(t *testing.T) {
	for _, c := range []struct{ in, text, message string }{
		{"llms.txt is valid: \"Acme\" with 2 sections (3 links).", "llms.txt is valid: \"Acme\" with 2 sections (3 links).", ""},
		{"client_credentials and error_description", "client_credentials and error_description", ""},
		{"Start the file with `# Title`.", "Start the file with &#96;\\# Title&#96;.", "Start the file with `# Title`."},
		{"Found via https://example.com/openapi.json.", "Found via `https://example.com/openapi.json`.", ""},
		{"Acme [beta]", "Acme \\[beta\\]", ""},
		{"a\u202Eb", "a\\u202Eb", ""},
	} {
		if got := Text(c.in); got != c.text {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.text)
		}
		want := c.message
		if want == "" {
			want = c.text
		}
		if got := Message(c.in); got != want {
			t.Errorf("Message(%q) = %q, want %q", c.in, got, want)
		}
	}
}

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"plain text\n\twith lines": "plain text\n\twith lines",
		"a\u202Eb\u202Cc":          `a\u202Eb\u202Cc`,
		"\u2066\u2069\u200E\u200F\u061C\u200B\u200C\u200D\u2060\uFEFF": `\u2066\u2069\u200E\u200F\u061C\u200B\u200C\u200D\u2060\uFEFF`,
		"\U000E0041":   `\uDB40\uDC41`,
		"\x00\x1b\x7f": `\u0000\u001B\u007F`,
		"\xff":         "\uFFFD",
		"é ✓ 😀":        "é ✓ 😀",
	} {
		if got := Visible(in); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
	}
	// Evidence that is JSON stays JSON with the same meaning.
	raw, _ := json.Marshal(map[string]string{"name": "a\u202Eb\U000E0041"})
	var back map[string]string
	if err := json.Unmarshal([]byte(Visible(string(raw))), &back); err != nil || back["name"] != "a\u202Eb\U000E0041" {
		t.Errorf("Visible(%s) = %s: %v %q", raw, Visible(string(raw)), err, back["name"])
	}
}

// assertInertJSON: the text decodes to the same value, is one line, and
// renders no element but emphasis.
func assertInertJSON(t *testing.T, in []byte) []byte {
	t.Helper()
	out := JSON(in)
	if !json.Valid(in) {
		if !bytes.Equal(out, in) {
			t.Fatalf("JSON changed invalid JSON %q into %q", in, out)
		}
		return out
	}
	if !json.Valid(out) || bytes.ContainsAny(out, "\n\r") {
		t.Fatalf("JSON(%q) = %q: not one line of valid JSON", in, out)
	}
	if a, b := decode(t, in), decode(t, out); !reflect.DeepEqual(a, b) {
		t.Fatalf("JSON(%q) = %q decodes to %#v, not %#v", in, out, b, a)
	}
	for _, md := range jsonRenderers {
		renderedText(t, md, string(out), "p", "em", "strong", "del")
	}
	return out
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return v
}

// An MCP tool result's text: the same JSON, no markup from a site.
func TestJSONKeepsTheValueAndNoMarkup(t *testing.T) {
	v := map[string]any{"url": "https://example.com/", "checks": []any{}}
	for i, s := range hostile {
		v["s"+string(rune('a'+i))] = s
	}
	in, _ := json.MarshalIndent(v, "", "  ")
	out := assertInertJSON(t, in)
	if bytes.ContainsAny(out, "`") || bytes.Contains(out, []byte("\u202E")) || !bytes.Contains(out, []byte(`\u202E`)) {
		t.Errorf("JSON left a backtick or a raw bidi control: %s", out)
	}
	for _, in := range []string{`[["a"],[]]`, `"[x](y)"`, `{"a":"\u005b"}`, "{\"a\":\"\xff\"}", `nope`, ``} {
		assertInertJSON(t, []byte(in))
	}
}

// maxFuzzInput keeps the fuzzers fast: goldmark takes seconds on some long
// runs of delimiters, while the escaping works rune by rune and gains
// nothing from length.
const maxFuzzInput = 2000

// For any string a site could send: escaped as Text or Message, after our
// own words or at a line start, CommonMark and GFM render one paragraph with
// no element but code spans (so no link, image or HTML), and its text is
// exactly the string's, whitespace runs collapsed to one space and invisible
// characters shown as \u escapes (Visible).
func FuzzMarkdownEscape(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > maxFuzzInput {
			return
		}
		assertInert(t, s)
	})
}

// For any JSON text: JSON keeps its value on one line and renders no link,
// image, code span or HTML.
func FuzzInertJSON(f *testing.F) {
	f.Add(`{"title":"[click](https://attacker.example) <img src=x onerror=alert(1)> ` + "`x`" + ` a\u202eb"}`)
	f.Add(`[{"a":[1,2.5e3,true,null]},"![x](y)"]`)
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > maxFuzzInput {
			return
		}
		assertInertJSON(t, []byte(s))
	})
}
