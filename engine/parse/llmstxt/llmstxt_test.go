package llmstxt

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentready/agentready/internal/testing/testenv"
)

const corpus = "../../../../shared/corpus/llms/"

// Every published llms.txt in the corpus has its row; the quirks show up as findings.
func TestCorpus(t *testing.T) {
	want := map[string]struct {
		title    string
		sections int
		minLinks int
	}{
		"claudette.txt":       {"Claudette", 2, 5},
		"fastcore.txt":        {"fastcore", 2, 19},
		"fasthtml-sample.txt": {"FastHTML", 3, 5},
		"llmstxt-org.txt":     {"llms.txt", 1, 3},
		"mui.txt":             {"MUI", 4, 14},
		"pnpm.txt":            {"pnpm", 8, 100},
		"shadcn-ui.txt":       {"shadcn/ui", 9, 100},
		"lamatic-docs.txt":    {"Lamatic.ai Documentation", 17, 112},
		// prose-only sections and plain bullets: valid, with warnings
		"laisky-blog.txt": {"Laisky's Blog", 6, 18},
	}
	dir := testenv.Shared(t, "corpus/llms") + "/"
	files, _ := filepath.Glob(dir + "*.txt")
	// copilotkit-docs.txt is one flat list of links with no H2 section: it
	// breaks the structure (docs/check-rules.md, 1.1 partial), and says so by count.
	const flat = "copilotkit-docs.txt"
	if len(files) != len(want)+1 {
		t.Fatalf("corpus has %d files, table %d", len(files), len(want)+1)
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		r := Validate(b, nil)
		if filepath.Base(f) == flat {
			if r.Valid || r.Title != "http://docs.copilotkit.ai llms.txt" || !hasFinding(r, Error, "the 99 links form one list") {
				t.Errorf("%s: valid=%v title=%q findings=%v", flat, r.Valid, r.Title, r.Findings)
			}
			continue
		}
		w := want[filepath.Base(f)]
		if !r.Valid || r.Title != w.title || len(r.Sections) != w.sections || r.Links < w.minLinks {
			t.Errorf("%s: valid=%v title=%q sections=%d links=%d findings=%v", filepath.Base(f), r.Valid, r.Title, len(r.Sections), r.Links, r.Findings)
		}
	}
	b, _ := os.ReadFile(dir + "mui.txt")
	if r := Validate(b, nil); r.Summary != "" || !hasFinding(r, Warning, "no blockquote summary") {
		t.Errorf("mui has no blockquote summary: %+v", r.Findings)
	}
	b, _ = os.ReadFile(dir + "fastcore.txt")
	if r := Validate(b, nil); !hasFinding(r, Warning, "is not a link") {
		t.Errorf("fastcore has a list item that is not a link: %+v", r.Findings)
	}
}

func hasFinding(r *Report, s Severity, substr string) bool {
	for _, f := range r.Findings {
		if f.Severity == s && strings.Contains(f.Message, substr) {
			return true
		}
	}
	return false
}

func TestStructureErrors(t *testing.T) {
	cases := []struct {
		name, body, finding string
		line                int
	}{
		{"no title", "Just text\n\n## Docs\n- [a](https://a.example/)\n", "must start with an H1", 1},
		{"no sections", "# T\n\n> s\n\nSome text with [a link](https://a.example/).\n", "no H2 sections", 0},
		{"no links", "# T\n\n> s\n\n## Docs\n- plain item\n", "no markdown links", 0},
		{"html", "<!DOCTYPE html><html><body>x</body></html>", "HTML page", 1},
		{"h2 first", "## Docs\n- [a](https://a.example/)\n", "must start with an H1", 1},
		// Links written without the list marker: the finding says so, at
		// the first of them, rather than that there are no links.
		{"links without list markers", "# T\n\n> s\n\n## Docs\n[A](https://a.example/a): one\n[B](https://a.example/b)\n\n## API\n[C](https://a.example/c): three\n",
			"the 3 links in the sections are not list items: start each line with `- `", 6},
	}
	for _, c := range cases {
		r := Validate([]byte(c.body), nil)
		if r.Valid {
			t.Errorf("%s: valid", c.name)
		}
		found := false
		for _, f := range r.Findings {
			if f.Severity == Error && strings.Contains(f.Message, c.finding) && f.Line == c.line {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: want error %q on line %d, got %+v", c.name, c.finding, c.line, r.Findings)
		}
	}
}

// Some links listed, some not: valid, with a warning at the first bare one
// and no "section has no links" for a section of bare links.
func TestSomeLinksWithoutListMarkers(t *testing.T) {
	r := Validate([]byte("# T\n\n> s\n\n## Docs\n- [A](https://a.example/a)\n\n## More\n[B](https://a.example/b): two\n"), nil)
	if !r.Valid || r.Links != 1 {
		t.Fatalf("valid %v, %d links: %+v", r.Valid, r.Links, r.Findings)
	}
	var warned bool
	for _, f := range r.Findings {
		warned = warned || f.Severity == Warning && f.Line == 9 && strings.Contains(f.Message, "1 link in sections is not a list item")
		if strings.Contains(f.Message, "has no links") {
			t.Errorf("unexpected %q", f.Message)
		}
	}
	if !warned {
		t.Errorf("no warning for the bare link: %+v", r.Findings)
	}
}

func TestMinimalValidFileAndFindings(t *testing.T) {
	base, _ := url.Parse("https://example.com/llms.txt")
	r := Validate([]byte("\ufeff# Site\n\n> Summary\n\n### Stray\n\n## Docs\n\n- [A](/a.md): notes\n- [A again](https://example.com/a.md)\n\n## Optional\n\n- [B](b.md)\n"), base)
	if !r.Valid || r.Title != "Site" || r.Summary != "Summary" || r.Links != 3 {
		t.Fatalf("%+v", r)
	}
	if !hasFinding(r, Info, "duplicate link (also on line 9)") || !hasFinding(r, Warning, "headings other than H2") || !hasFinding(r, Info, "Optional") {
		t.Errorf("findings %+v", r.Findings)
	}
}

func FuzzValidate(f *testing.F) {
	files, _ := filepath.Glob(corpus + "*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("# t\n```\n## not a section\n```\n## s\n- [x](::bad)\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		r := Validate(body, nil)
		if r.Valid && (r.Title == "" || r.Links == 0) {
			t.Fatalf("valid without a title or links: %+v", r)
		}
		if len(r.Findings) > 200 {
			t.Fatal("findings are unbounded")
		}
		base, _ := url.Parse("https://example.com/docs/")
		links := Links(body, base, 20)
		if len(links) > 20 {
			t.Fatalf("%d links, max 20", len(links))
		}
		for _, l := range links {
			if u, err := url.Parse(l); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
				t.Fatalf("link %q is not an http(s) URL", l)
			}
		}
	})
}

func TestLinks(t *testing.T) {
	body := "# Docs\n\n> s\n\n## Guides\n\n- [Intro](/docs/intro.md): start\n- [Intro again](/docs/intro.md)\n```\n- [In a fence](/fenced)\n```\n[Not a list item](/loose)\n- [Mail](mailto:a@b.c)\n- [Other](https://other.example/x \"t\")\n"
	base, _ := url.Parse("https://example.com/llms.txt")
	got := Links([]byte(body), base, 10)
	want := []string{"https://example.com/docs/intro.md", "https://other.example/x"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := Links([]byte(body), base, 1); len(got) != 1 {
		t.Fatalf("max 1 gave %d", len(got))
	}
}

// A long name quoted in a finding is cut by runes: a section named in
// Japanese (3 bytes a character) is never cut inside a character.
func TestFindingQuotesCutByRunes(t *testing.T) {
	name := strings.Repeat("日本語", 30)
	r := Validate([]byte("# Site\n\n> Summary\n\n## "+name+"\n\nJust text, no links.\n"), nil)
	found := false
	for _, f := range r.Findings {
		if strings.Contains(f.Message, "has no links") {
			found = true
			if !utf8.ValidString(f.Message) || !strings.Contains(f.Message, "\""+strings.Repeat("日本語", 19)+"日本…\"") {
				t.Errorf("finding %q", f.Message)
			}
		}
	}
	if !found {
		t.Fatalf("no finding for the empty section: %+v", r.Findings)
	}
}
