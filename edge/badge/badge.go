// Package badge renders shields.io-style SVG badges ("flat" and
// "flat-square") with real Verdana 11px advance widths, so text fits the way
// it does on shields.io. Dependency-free, for the WebAssembly edge.
package badge

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"
	"unicode/utf8"
)

// textWidth is the width of text in Verdana 11px, truncated and rounded up to
// an odd number as shields.io does (so the text centres on a whole pixel).
func textWidth(s string) int {
	w := 0.0
	for _, r := range s {
		w += charWidth(r)
	}
	n := int(w)
	if n%2 == 0 {
		n++
	}
	return n
}

func charWidth(r rune) float64 {
	c := uint32(r)
	i := sort.Search(len(verdana11), func(i int) bool { return verdana11[i][1] >= c })
	if i < len(verdana11) && verdana11[i][0] <= c {
		return float64(verdana11[i][2]) / 100
	}
	return 7 // unknown glyphs: an average Verdana width
}

// Badge is one badge.
type Badge struct {
	Label, Message string
	Color          string // message background, e.g. #4c1
	LabelColor     string // default LabelColor
	Square         bool   // flat-square style
}

// LevelColors are the colours of levels 0 to 3, from red (not ready) to
// bright green (optimized). With LabelColor they are agentready's one visual
// identity: the report page's gauge and ladder (edge/site/app.css) and the
// icon (edge/icon.go) use the same values, and edge's tests hold them to it.
var LevelColors = [4]string{"#e05d44", "#dfb317", "#97ca00", "#4c1"}

// LabelColor is the badge's label background, the ink of the icon.
const LabelColor = "#555"

// Unknown is the grey badge for a site that could not be scanned.
const Unknown = "#9f9f9f"

// ForScore is the badge of a scanned site.
func ForScore(score, level int, levelName string) Badge {
	if level < 0 {
		level = 0
	}
	if level >= len(LevelColors) {
		level = len(LevelColors) - 1
	}
	return Badge{Label: "agent readiness", Message: fmt.Sprintf("%d/100 · L%d %s", score, level, levelName), Color: LevelColors[level]}
}

// ForUnknown is the badge of a site that could not be scanned.
func ForUnknown(reason string) Badge {
	if reason == "" {
		reason = "unknown"
	}
	return Badge{Label: "agent readiness", Message: reason, Color: Unknown}
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")

// escape makes s safe as XML text and attribute value: invalid UTF-8 and
// characters XML 1.0 forbids become U+FFFD, so the SVG is always well-formed.
func escape(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || (r >= 0xD800 && r <= 0xDFFF) || r == 0xFFFE || r == 0xFFFF {
			return '\uFFFD'
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	return xmlEscaper.Replace(s)
}

// rgb parses #rgb or #rrggbb; anything else is black.
func rgb(hex string) color.RGBA {
	h := strings.TrimPrefix(hex, "#")
	if len(h) == 3 {
		h = string([]byte{h[0], h[0], h[1], h[1], h[2], h[2]})
	}
	c := color.RGBA{A: 255}
	if _, err := fmt.Sscanf(h, "%02x%02x%02x", &c.R, &c.G, &c.B); err != nil {
		return color.RGBA{A: 255}
	}
	return c
}

// luminance is WCAG 2's relative luminance of c.
func luminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	lin := func(v uint32) float64 {
		s := float64(v>>8) / 255
		if s <= 0.03928 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
}

// darkText says whether #333 contrasts more with bg than white does. shields.io
// puts white on its green and yellow (about 2:1); we pick the legible one.
func darkText(bg string) bool {
	l := luminance(rgb(bg))
	return (l+0.05)/(0.033+0.05) > 1.05/(l+0.05)
}

// SVG renders the badge.
func (b Badge) SVG() []byte {
	labelColor := b.LabelColor
	if labelColor == "" {
		labelColor = LabelColor
	}
	lw, mw := textWidth(b.Label), textWidth(b.Message)
	left, right := lw+10, mw+10
	total := left + right
	title := escape(b.Label + ": " + b.Message)
	text := func(s string, x, w int, bg string) string {
		fill, shadow := "#fff", "#010101"
		if darkText(bg) {
			fill, shadow = "#333", "#ccc"
		}
		e := escape(s)
		return fmt.Sprintf(`<text aria-hidden="true" x="%d" y="150" fill="%s" fill-opacity=".3" transform="scale(.1)" textLength="%d">%s</text><text x="%d" y="140" transform="scale(.1)" fill="%s" textLength="%d">%s</text>`,
			x, shadow, w*10, e, x, fill, w*10, e)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="20" role="img" aria-label="%s"><title>%s</title>`, total, title, title)
	if b.Square {
		fmt.Fprintf(&sb, `<g shape-rendering="crispEdges"><rect width="%d" height="20" fill="%s"/><rect x="%d" width="%d" height="20" fill="%s"/></g>`, left, labelColor, left, right, b.Color)
	} else {
		fmt.Fprintf(&sb, `<linearGradient id="s" x2="0" y2="100%%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>`)
		fmt.Fprintf(&sb, `<clipPath id="r"><rect width="%d" height="20" rx="3" fill="#fff"/></clipPath>`, total)
		fmt.Fprintf(&sb, `<g clip-path="url(#r)"><rect width="%d" height="20" fill="%s"/><rect x="%d" width="%d" height="20" fill="%s"/><rect width="%d" height="20" fill="url(#s)"/></g>`,
			left, labelColor, left, right, b.Color, total)
	}
	sb.WriteString(`<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" text-rendering="geometricPrecision" font-size="110">`)
	sb.WriteString(text(b.Label, 10*(1+lw/2+5)-0, lw, labelColor))
	sb.WriteString(text(b.Message, 10*(left-1+mw/2+5), mw, b.Color))
	sb.WriteString(`</g></svg>`)
	return []byte(sb.String())
}
