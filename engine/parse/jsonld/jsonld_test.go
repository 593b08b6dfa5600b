package jsonld

import (
	"strings"
	"testing"

	"github.com/agentready/agentready/engine/internal/signal"
)

func TestGraphWalk(t *testing.T) {
	g := Parse([]string{
		`{"@context":"https://schema.org","@type":"Article","headline":"x","publisher":{"@type":"NewsMediaOrganization","name":"Daily","url":"https://d.example/"}}`,
		`[{"@type":["Thing","schema:WebSite"],"name":"S"}]`,
		`{"@graph":[{"@type":"https://schema.org/Corporation","name":"C","url":{"@id":"https://c.example/"}}]}`,
		`{"@type": "Organization", "name": "broken",}`,
		`<!-- {"@type":"Person","name":"P"} -->`,
	})
	if g.Blocks != 5 || g.Parsed != 4 || len(g.Errors) != 1 {
		t.Fatalf("blocks %d parsed %d errors %v", g.Blocks, g.Parsed, g.Errors)
	}
	ents := g.Entities()
	if len(ents) != 3 {
		t.Fatalf("entities %d, want the nested publisher, the WebSite and the Corporation", len(ents))
	}
	if ents[0].Str("name") != "Daily" || ents[2].Str("url") != "https://c.example/" {
		t.Errorf("entities %+v", ents)
	}
}

// A block that does not parse is explained in words, by block and position,
// never with encoding/json's own text.
func TestErrorsInWords(t *testing.T) {
	g := Parse([]string{
		`{"@type":"Organization","name":"ok"}`,
		"{\n  \"@type\": \"BlogPosting\",\n  \"author\": {\"name\": \"A\",},\n}",
		`{"@type":"Article","headline":"cut`,
		`{"@type":"Article"} trailing`,
		"",
	})
	want := []string{
		"block 2: line 3, column 26: trailing comma before `}`",
		"block 3: line 1, column 34: the document ends before its last value is closed",
		"block 5: the document is empty",
	}
	if strings.Join(g.Errors, "|") != strings.Join(want, "|") {
		t.Errorf("errors\n%q\nwant\n%q", g.Errors, want)
	}
	for _, e := range g.Errors {
		if p := signal.RawText(e); p != "" {
			t.Errorf("library text %q in %q", p, e)
		}
	}
}

func TestDepthAndCountCaps(t *testing.T) {
	deep := strings.Repeat(`{"@type":"Thing","a":`, 200) + "1" + strings.Repeat("}", 200)
	g := Parse([]string{deep})
	if !g.Clipped || len(g.Nodes) > MaxDepth+1 {
		t.Errorf("deep nesting: clipped=%v nodes=%d", g.Clipped, len(g.Nodes))
	}
	many := "[" + strings.Repeat(`{"@type":"Thing"},`, MaxNodes+10) + `{"@type":"Thing"}]`
	if g := Parse([]string{many}); len(g.Nodes) != MaxNodes || !g.Clipped {
		t.Errorf("many nodes: %d clipped=%v", len(g.Nodes), g.Clipped)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(`{"@graph":[{"@type":"Organization","name":"A","url":"https://a"}]}`)
	f.Add(`[[[[{"@type":["a","b"]}]]]]`)
	f.Fuzz(func(t *testing.T, block string) {
		g := Parse([]string{block})
		if len(g.Nodes) > MaxNodes || g.Parsed > 1 {
			t.Fatal("bounds")
		}
		for _, e := range g.Errors {
			if p := signal.RawText(e); p != "" {
				t.Fatalf("library text %q in %q", p, e)
			}
		}
		for _, n := range g.Entities() {
			_ = n.Str("name")
		}
	})
}
