package htmlpage

import (
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"testing"
)

func rows(n, cells int, tag string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString("<tr>")
		for c := 0; c < cells; c++ {
			fmt.Fprintf(&b, "<%s>cell %d.%d</%s>", tag, i, c, tag)
		}
		b.WriteString("</tr>")
	}
	return b.String()
}

func jsonBlob(keys int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < keys; i++ {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `  "field_%03d": {"type": "string", "example": "value %d"}`, i, i)
	}
	b.WriteString("}")
	return b.String()
}

// Data finds the machine-generated data an agent would read as text:
// large uniform tables, JSON blocks and base64, and nothing in prose,
// code or small tables.
func TestPageData(t *testing.T) {
	prose := strings.Repeat("Agents read the page as text, and a person reads it as prose. ", 60)
	code := strings.Repeat("for i := 0; i < n; i++ { total += weights[i] * values[i] }\n", 60)
	b64 := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("\x00\x01binary payload\xff", 200)))
	commented := strings.Replace(jsonBlob(60), `"field_001"`, `// the first field
  "field_001"`, 1) // not valid JSON, but dense with keys
	cases := []struct {
		name string
		html string
		want string // kind:rows per element, space-separated
	}{
		{"a large uniform table", "<table>" + rows(25, 4, "td") + "</table>", "table:25"},
		{"its header row is not data", "<table>" + rows(1, 4, "th") + rows(20, 4, "td") + "</table>", "table:20"},
		{"a thead is not data", "<table><thead>" + rows(3, 4, "td") + "</thead><tbody>" + rows(19, 4, "td") + "</tbody></table>", ""},
		{"a small table", "<table>" + rows(19, 4, "td") + "</table>", ""},
		{"rows of uneven width", "<table>" + rows(12, 4, "td") + rows(12, 2, "td") + "</table>", ""},
		{"a table in a layout table", "<table><tr><td><table>" + rows(30, 3, "td") + "</table></td></tr></table>", "table:30"},
		{"a JSON block", "<pre><code>" + jsonBlob(60) + "</code></pre>", "json:0"},
		{"JSON with a comment", "<pre>" + commented + "</pre>", "json:0"},
		{"a small JSON block", "<pre>" + jsonBlob(5) + "</pre>", ""},
		{"code", "<pre><code>" + code + "</code></pre>", ""},
		{"prose in a code block", "<pre>" + prose + "</pre>", ""},
		{"base64 in a code block", "<pre>" + b64 + "</pre>", "base64:0"},
		{"a line of dashes is not base64", "<pre>" + strings.Repeat("-", 2500) + "\n" + strings.Repeat("a", 2500) + "</pre>", ""},
		{"JSON by its declared language", `<pre><code class="hljs language-json">` + strings.Repeat("{\"a\": 1}\n", 300) + "…</code></pre>", "json:0"},
		{"an image's data URI", `<img alt="chart" src="data:image/png;base64,` + b64 + `">`, "base64:0"},
		{"a small data URI", `<img alt="dot" src="data:image/png;base64,iVBORw0KGgo=">`, ""},
		{"JSON in a hidden script is not read", `<script type="application/json">` + jsonBlob(60) + `</script>`, ""},
		{"prose", "<p>" + prose + "</p>", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := parseRead("<main>" + c.html + "</main>")
			defer func() {
				if t.Failed() {
					t.Logf("%+v", p.Data)
				}
			}()
			var got []string
			for _, d := range p.Data {
				got = append(got, fmt.Sprintf("%s:%d", d.Kind, d.Rows))
				if d.Bytes < DataMinBytes && d.Kind != DataTable {
					t.Errorf("%s of %d bytes", d.Kind, d.Bytes)
				}
			}
			if g := strings.Join(got, " "); g != c.want {
				t.Errorf("data %q, want %q", g, c.want)
			}
		})
	}
}

// A base64 run counts for itself, not for the code sample around it.
func TestBase64CountsTheRun(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("\x00\x01binary payload\xff", 150)))
	code := strings.Repeat("for i := 0; i < n; i++ { total += weights[i] * values[i] }\n", 300)
	p := parseRead("<main><pre>" + code + "const key = \"" + b64 + "\"\n" + code + "</pre></main>")
	if len(p.Data) != 1 || p.Data[0].Bytes != len(b64) {
		t.Errorf("%+v, want one base64 run of %d bytes", p.Data, len(b64))
	}
}

// DataBytes weighs the data against what an agent reads of the page: the
// visible text, plus the data: URIs a converter keeps.
func TestDataBytes(t *testing.T) {
	prose := "<p>" + strings.Repeat("word ", 400) + "</p>" // 1,999 bytes of text
	table := "<table>" + rows(100, 3, "td") + "</table>"   // ~3,000 bytes
	p := parseRead("<main>" + prose + table + "</main>")
	data, total := p.DataBytes()
	if len(p.Data) != 1 || data != p.Data[0].Bytes || total != p.VisibleBytes || data <= total/2 || data >= total {
		t.Errorf("table: data %d of %d (visible %d, %+v)", data, total, p.VisibleBytes, p.Data)
	}
	uri := strings.Repeat("A", 5000)
	p = parseRead(`<main>` + prose + `<img alt=x src="data:image/png;base64,` + uri + `"></main>`)
	data, total = p.DataBytes()
	if data != len("data:image/png;base64,")+len(uri) || total != p.VisibleBytes+data {
		t.Errorf("data URI: data %d of %d (visible %d)", data, total, p.VisibleBytes)
	}
}

// Nested tables and code blocks are measured once each: a data table
// inside 100 layout tables is one table, a JSON block inside 150 nested
// code blocks is one block, not one per level. (The HTML parser refuses
// pages nested past 512 elements, so the nesting stays under it.)
func TestPageDataNested(t *testing.T) {
	tables := strings.Repeat("<table><tr><td>", 100) + "<table>" + rows(30, 3, "td") + "</table>"
	code := strings.Repeat("<pre><span>", 150) + jsonBlob(60)
	for name, c := range map[string]struct {
		html, kind string
	}{"tables": {tables, DataTable}, "code": {code, DataJSON}} {
		p := Parse([]byte("<main>"+c.html), nil)
		if len(p.Data) != 1 || p.Data[0].Kind != c.kind {
			t.Errorf("%s: %+v, want one %s", name, p.Data, c.kind)
		}
	}
}

// BenchmarkParse parses the read-content fixture's timetable story (145 KB,
// a 1,600-row table) and a 40 KB blog post of the corpus: the read suite
// parses up to 50 such pages a scan.
func BenchmarkParse(b *testing.B) {
	for _, c := range []struct{ name, path string }{
		{"timetable-145KB", "../../../testdata/sites/read-content/stories/ferry-timetable-changes/index.html"},
		{"blog-40KB", corpus + "ebb-org-blog-post.html"},
	} {
		body, err := os.ReadFile(c.path)
		if err != nil {
			b.Skipf("%s: %v", c.path, err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				Parse(body, nil)
			}
		})
	}
}
