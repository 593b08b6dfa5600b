package badge

import (
	"encoding/xml"
	"strings"
	"testing"
)

// Widths match shields.io's reference: "build" 27 px and "passing" 41 px → an 88×20 badge.
func TestReferenceGeometry(t *testing.T) {
	if textWidth("build") != 27 || textWidth("passing") != 41 {
		t.Fatalf("build %d, passing %d", textWidth("build"), textWidth("passing"))
	}
	svg := string(Badge{Label: "build", Message: "passing", Color: "#4c1"}.SVG())
	if !strings.Contains(svg, `width="88" height="20"`) || !strings.Contains(svg, `textLength="270"`) || !strings.Contains(svg, `textLength="410"`) {
		t.Errorf("%s", svg)
	}
}

func TestAccessibleAndEscaped(t *testing.T) {
	b := Badge{Label: "a<b", Message: `"x" & 'y'`, Color: "#4c1"}
	svg := b.SVG()
	var doc struct {
		XMLName xml.Name
		Role    string `xml:"role,attr"`
		Label   string `xml:"aria-label,attr"`
		Title   string `xml:"title"`
	}
	if err := xml.Unmarshal(svg, &doc); err != nil {
		t.Fatalf("not well-formed XML: %v", err)
	}
	if doc.Role != "img" || doc.Label != `a<b: "x" & 'y'` || doc.Title != doc.Label {
		t.Errorf("%+v", doc)
	}
	sq := string(Badge{Label: "l", Message: "m", Color: "#4c1", Square: true}.SVG())
	if strings.Contains(sq, "rx=") || !strings.Contains(sq, "crispEdges") {
		t.Error("flat-square has no rounded corners")
	}
}

func TestColoursAndText(t *testing.T) {
	if ForScore(91, 3, "Optimized").Color != "#4c1" || ForScore(10, 0, "Not Ready").Color != "#e05d44" || ForUnknown("").Color != Unknown {
		t.Error("level colours")
	}
	if !strings.Contains(string(Badge{Label: "l", Message: "m", Color: "#fff"}.SVG()), `fill="#333"`) {
		t.Error("dark text on a bright background")
	}
	if textWidth("日本") == 0 {
		t.Error("unknown glyphs get a width")
	}
}

func FuzzSVG(f *testing.F) {
	f.Add("agent readiness", "98/100 · L3 Optimized")
	f.Fuzz(func(t *testing.T, l, m string) {
		if err := xml.Unmarshal(Badge{Label: l, Message: m, Color: "#4c1"}.SVG(), new(struct{})); err != nil {
			t.Fatalf("SVG is not well-formed: %v", err)
		}
	})
}
