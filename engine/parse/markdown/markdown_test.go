package markdown

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name      string
		body      string
		headings  []string
		links     []string
		fences    int
		unclosed  int
		namesLlms bool
	}{
		{"headings and links", "# Title\n\nSee [the API](/docs/api.md) and <https://example.com/x>.\n\n## Setup\n\nText\n===\n",
			[]string{"1 Title", "2 Setup", "1 Text"}, []string{"/docs/api.md", "https://example.com/x"}, 0, 0, false},
		{"closed fences", "```go\nfmt.Println()\n```\n\n~~~~\n```\nstill inside\n~~~~\n", nil, nil, 2, 0, false},
		{"unclosed fence", "# A\n\ntext\n\n```bash\nrun\n", []string{"1 A"}, nil, 1, 5, false},
		{"a shorter fence does not close", "````\n```\n", nil, nil, 1, 1, false},
		{"a fence with text after it does not close", "```\n``` not a close\n", nil, nil, 1, 1, false},
		{"indented four spaces is code, not a fence", "    ```\n", nil, nil, 0, 0, false},
		{"link inside a fence is not a link", "```\n[x](/y)\n```\n", nil, nil, 1, 0, false},
		{"directive", "> For agents: the map is at /llms.txt\n\n# Page\n", []string{"1 Page"}, nil, 0, 0, true},
		{"emphasis in a heading", "## The *fast* path\n", []string{"2 The fast path"}, nil, 0, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Parse([]byte(c.body))
			var hs []string
			for _, h := range d.Headings {
				hs = append(hs, string(rune('0'+h.Level))+" "+h.Text)
			}
			if !slices.Equal(hs, c.headings) || !slices.Equal(d.Links, c.links) || d.Fences != c.fences || d.UnclosedFence != c.unclosed || d.NamesLlms != c.namesLlms {
				t.Errorf("got headings %q links %q fences %d unclosed %d llms %v", hs, d.Links, d.Fences, d.UnclosedFence, d.NamesLlms)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	// The corpus's llms.txt files are markdown too.
	files, _ := filepath.Glob("../../../../shared/corpus/llms*/*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("# T\n\n```go\nx\n```\n[a](/b) <https://c>\n~~~\n"))
	f.Add([]byte("Setext\n===\n\n- [x](y \"t\")\n\n````\n```\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		d := Parse(body)
		if len(d.Headings) > maxItems || len(d.Links) > maxItems {
			t.Fatalf("%d headings, %d links", len(d.Headings), len(d.Links))
		}
		if d.UnclosedFence > 0 && d.Fences == 0 {
			t.Fatalf("an unclosed fence at line %d but no fence opened", d.UnclosedFence)
		}
		for _, h := range d.Headings {
			if h.Level < 1 || h.Level > 6 {
				t.Fatalf("heading level %d", h.Level)
			}
		}
	})
}
