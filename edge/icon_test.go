package edge

import (
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/agentready/agentready/edge/badge"
)

var updateIcon = flag.Bool("update", false, "rewrite icon_gen.go from the icon's geometry")

// The mark's geometry, the one source of both renderings of the icon.
const (
	iconSize      = 32.0 // the viewBox is iconSize × iconSize
	iconCorner    = 7.0  // corner radius of the rounded square
	iconCX        = 16.0 // centre of the gauge
	iconCY        = 21.0
	iconArcR      = 10.0 // mid-line radius of the gauge's band
	iconArcWidth  = 5.0
	iconGap       = 5.0  // degrees between two segments
	iconNeedleDeg = 28.0 // where the needle points (0° is right, 90° up)
	iconNeedleLen = 9.0
	iconNeedleW   = 2.4
	iconHubR      = 2.6
	iconInk       = "#fff" // needle and hub
)

// iconSegment is one of the gauge's four bands, from angle from down to to
// (degrees, counter-clockwise from the right, so from > to).
type iconSegment struct {
	from, to float64
	color    string
}

// iconSegments are the four bands, level 0 on the left to level 3 on the right.
func iconSegments() [4]iconSegment {
	var s [4]iconSegment
	for i := range s {
		from, to := 180-45*float64(i), 135-45*float64(i)
		if i > 0 {
			from -= iconGap / 2
		}
		if i < 3 {
			to += iconGap / 2
		}
		s[i] = iconSegment{from, to, badge.LevelColors[i]}
	}
	return s
}

// iconPoint is the point at angle deg (counter-clockwise from the right) and
// distance r from the gauge's centre, in SVG coordinates (y grows down).
func iconPoint(deg, r float64) (x, y float64) {
	rad := deg * math.Pi / 180
	return iconCX + r*math.Cos(rad), iconCY - r*math.Sin(rad)
}

func svgNum(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }

// renderSVG draws the mark as an SVG document.
func renderSVG() string {
	var b strings.Builder
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32" width="32" height="32"><title>agentready</title>`)
	b.WriteString(`<rect width="32" height="32" rx="` + svgNum(iconCorner) + `" fill="` + badge.LabelColor + `"/>`)
	b.WriteString(`<g fill="none" stroke-width="` + svgNum(iconArcWidth) + `">`)
	for _, s := range iconSegments() {
		x1, y1 := iconPoint(s.from, iconArcR)
		x2, y2 := iconPoint(s.to, iconArcR)
		b.WriteString(`<path stroke="` + s.color + `" d="M` + svgNum(x1) + ` ` + svgNum(y1) + `A` + svgNum(iconArcR) + ` ` + svgNum(iconArcR) + ` 0 0 1 ` + svgNum(x2) + ` ` + svgNum(y2) + `"/>`)
	}
	b.WriteString(`</g>`)
	nx, ny := iconPoint(iconNeedleDeg, iconNeedleLen)
	b.WriteString(`<path d="M` + svgNum(iconCX) + ` ` + svgNum(iconCY) + `L` + svgNum(nx) + ` ` + svgNum(ny) + `" stroke="` + iconInk + `" stroke-width="` + svgNum(iconNeedleW) + `" stroke-linecap="round"/>`)
	b.WriteString(`<circle cx="` + svgNum(iconCX) + `" cy="` + svgNum(iconCY) + `" r="` + svgNum(iconHubR) + `" fill="` + iconInk + `"/></svg>` + "\n")
	return b.String()
}

// icoSizes are the images favicon.ico holds: the tab (16), the taskbar and
// high-density tabs (32), and desktop shortcuts (48).
var icoSizes = []int{16, 32, 48}

func hexColor(s string) color.NRGBA {
	s = strings.TrimPrefix(s, "#")
	if len(s) == 3 {
		s = string([]byte{s[0], s[0], s[1], s[1], s[2], s[2]})
	}
	v, _ := strconv.ParseUint(s, 16, 32)
	return color.NRGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 255}
}

// iconLayers are the mark's shapes in painting order, as coverage tests in
// viewBox coordinates: the same geometry icon.go writes as SVG.
func iconLayers() []struct {
	c  color.NRGBA
	in func(x, y float64) bool
} {
	type layer = struct {
		c  color.NRGBA
		in func(x, y float64) bool
	}
	out := []layer{{hexColor(badge.LabelColor), func(x, y float64) bool {
		// the rounded square: inside unless in a corner beyond its radius
		cx := math.Max(iconCorner-x, x-(iconSize-iconCorner))
		cy := math.Max(iconCorner-y, y-(iconSize-iconCorner))
		if cx <= 0 || cy <= 0 {
			return x >= 0 && y >= 0 && x <= iconSize && y <= iconSize
		}
		return cx*cx+cy*cy <= iconCorner*iconCorner
	}}}
	for _, s := range iconSegments() {
		out = append(out, layer{hexColor(s.color), func(x, y float64) bool {
			// a stroked arc with butt ends: a band of the annulus between two radii
			d := math.Hypot(x-iconCX, y-iconCY)
			a := math.Atan2(iconCY-y, x-iconCX) * 180 / math.Pi
			return math.Abs(d-iconArcR) <= iconArcWidth/2 && a <= s.from && a >= s.to
		}})
	}
	nx, ny := iconPoint(iconNeedleDeg, iconNeedleLen)
	ink := hexColor(iconInk)
	out = append(out, layer{ink, func(x, y float64) bool {
		// a stroked line with round caps: within half the width of the segment
		dx, dy := nx-iconCX, ny-iconCY
		t := math.Max(0, math.Min(1, ((x-iconCX)*dx+(y-iconCY)*dy)/(dx*dx+dy*dy)))
		return math.Hypot(x-(iconCX+t*dx), y-(iconCY+t*dy)) <= iconNeedleW/2
	}}, layer{ink, func(x, y float64) bool { return math.Hypot(x-iconCX, y-iconCY) <= iconHubR }})
	return out
}

// rasterise paints the mark at n×n pixels, 8×8 samples a pixel.
func rasterise(n int) *image.NRGBA {
	const ss = 8
	img := image.NewNRGBA(image.Rect(0, 0, n, n))
	layers := iconLayers()
	scale := iconSize / float64(n)
	for py := 0; py < n; py++ {
		for px := 0; px < n; px++ {
			var r, g, b, a float64 // premultiplied, 0–1
			for sy := 0; sy < ss; sy++ {
				for sx := 0; sx < ss; sx++ {
					x, y := (float64(px)+(float64(sx)+.5)/ss)*scale, (float64(py)+(float64(sy)+.5)/ss)*scale
					var c color.NRGBA
					for _, l := range layers {
						if l.in(x, y) {
							c = l.c
						}
					}
					f := float64(c.A) / 255 / (ss * ss)
					r, g, b, a = r+float64(c.R)/255*f, g+float64(c.G)/255*f, b+float64(c.B)/255*f, a+f
				}
			}
			if a > 0 {
				img.SetNRGBA(px, py, color.NRGBA{uint8(math.Round(r / a * 255)), uint8(math.Round(g / a * 255)), uint8(math.Round(b / a * 255)), uint8(math.Round(a * 255))})
			}
		}
	}
	return img
}

// encodeICO packs PNG images into an ICO file (PNG entries: Windows Vista
// and every browser read them).
func encodeICO(imgs []*image.NRGBA) []byte {
	var pngs [][]byte
	for _, img := range imgs {
		var b bytes.Buffer
		png.Encode(&b, img)
		pngs = append(pngs, b.Bytes())
	}
	var out bytes.Buffer
	binary.Write(&out, binary.LittleEndian, [3]uint16{0, 1, uint16(len(imgs))})
	offset := 6 + 16*len(imgs)
	for i, img := range imgs {
		w := img.Bounds().Dx()
		binary.Write(&out, binary.LittleEndian, struct {
			W, H, Colors, Reserved uint8
			Planes, BPP            uint16
			Size, Offset           uint32
		}{uint8(w), uint8(w), 0, 0, 1, 32, uint32(len(pngs[i])), uint32(offset)})
		offset += len(pngs[i])
	}
	for _, p := range pngs {
		out.Write(p)
	}
	return out.Bytes()
}

// decodeICO reads back what encodeICO writes.
func decodeICO(t *testing.T, b []byte) []image.Image {
	t.Helper()
	var head [3]uint16
	r := bytes.NewReader(b)
	if binary.Read(r, binary.LittleEndian, &head) != nil || head[0] != 0 || head[1] != 1 {
		t.Fatalf("favicon.ico does not start with an ICO header: % x", b[:min(6, len(b))])
	}
	var out []image.Image
	for i := 0; i < int(head[2]); i++ {
		var e struct {
			W, H, Colors, Reserved uint8
			Planes, BPP            uint16
			Size, Offset           uint32
		}
		if binary.Read(r, binary.LittleEndian, &e) != nil || int(e.Offset)+int(e.Size) > len(b) {
			t.Fatalf("favicon.ico entry %d is cut", i)
		}
		img, err := png.Decode(bytes.NewReader(b[e.Offset : e.Offset+e.Size]))
		if err != nil || img.Bounds().Dx() != int(e.W) || img.Bounds().Dy() != int(e.H) {
			t.Fatalf("favicon.ico entry %d (%dx%d): %v", i, e.W, e.H, err)
		}
		out = append(out, img)
	}
	return out
}

// icon_gen.go is the geometry above drawn twice: the SVG icon as
// renderSVG writes it, and favicon.ico with the pixels rasterise paints, so
// the two icons cannot drift apart. -update rewrites it.
func TestIcons(t *testing.T) {
	var want []*image.NRGBA
	for _, n := range icoSizes {
		want = append(want, rasterise(n))
	}
	svg := renderSVG()
	if *updateIcon {
		ico := encodeICO(want)
		src := "// Code generated by go test ./edge -run TestIcons -update; DO NOT EDIT.\n\npackage edge\n\n" +
			"// iconSVG is /assets/icon.svg: the mark of icon_test.go as SVG.\n" +
			"const iconSVG = " + strconv.Quote(svg) + "\n\n" +
			"// faviconICO is /favicon.ico: the same mark rasterised at " + fmt.Sprint(icoSizes) + " pixels, PNG in ICO.\n" +
			"const faviconICO = " + strconv.Quote(string(ico)) + "\n"
		if err := os.WriteFile("icon_gen.go", []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote icon_gen.go (%d bytes of SVG, %d of ICO)", len(svg), len(ico))
		return
	}
	if iconSVG != svg {
		t.Errorf("icon_gen.go's SVG is not the geometry's: run go test ./edge -run TestIcons -update")
	}
	got := decodeICO(t, []byte(faviconICO))
	if len(got) != len(want) {
		t.Fatalf("favicon.ico holds %d images, want %d: run go test ./edge -run TestIcons -update", len(got), len(want))
	}
	for i, img := range got {
		for y := 0; y < want[i].Bounds().Dy(); y++ {
			for x := 0; x < want[i].Bounds().Dx(); x++ {
				if g, w := color.NRGBAModel.Convert(img.At(x, y)), want[i].At(x, y); g != w {
					t.Fatalf("favicon.ico %dpx differs from the icon's geometry at (%d,%d): %v, want %v; run go test ./edge -run TestIcons -update", icoSizes[i], x, y, g, w)
				}
			}
		}
	}
	if len(faviconICO) > 4<<10 {
		t.Errorf("favicon.ico is %d bytes; keep it under 4 KiB (it is embedded in the edge module)", len(faviconICO))
	}
}

// The SVG icon is well-formed and uses exactly the badge's colours.
func TestIconSVG(t *testing.T) {
	d := xml.NewDecoder(strings.NewReader(iconSVG))
	fills := map[string]bool{}
	for {
		tok, err := d.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("icon.svg is not well-formed: %v", err)
			}
			break
		}
		if se, ok := tok.(xml.StartElement); ok {
			for _, a := range se.Attr {
				if a.Name.Local == "fill" || a.Name.Local == "stroke" {
					fills[a.Value] = true
				}
			}
		}
	}
	want := map[string]bool{badge.LabelColor: true, iconInk: true, "none": true}
	for _, c := range badge.LevelColors {
		want[c] = true
	}
	if fmt.Sprint(fills) != fmt.Sprint(want) {
		t.Errorf("icon.svg paints with %v, want the badge's colours %v", fills, want)
	}
}
