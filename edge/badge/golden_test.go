package badge

import (
	"bytes"
	"context"
	"flag"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/testing/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current renderer")

// goldens are the badges users see; testdata/golden holds their SVGs.
var goldens = []struct {
	name  string
	badge Badge
}{
	{"level0", ForScore(12, 0, "Not Ready")},
	{"level1", ForScore(47, 1, "Discoverable")},
	{"level2", ForScore(73, 2, "Callable")},
	{"level3", ForScore(98, 3, "Optimized")},
	{"unknown", ForUnknown("")},
	{"unreachable", ForUnknown("site unreachable")},
	{"square", Badge{Label: "agent readiness", Message: "98/100 · L3 Optimized", Color: "#4c1", Square: true}},
}

func TestGoldenSVGs(t *testing.T) {
	for _, g := range goldens {
		path := filepath.Join("testdata", "golden", g.name+".svg")
		got := g.badge.SVG()
		if *update {
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s (go test ./edge/badge -run Golden -update rewrites it after review): %v", g.name, path, err)
		}
	}
}

// Each golden SVG, rendered by headless Chromium at 2× into a PNG, is the
// size the SVG claims, has its two colours where they belong, and shows text
// that contrasts with its background and spans the width the Verdana metrics
// reserved for it: neither clipped nor overflowing into the other half.
func TestGoldenBadgesRenderInChromium(t *testing.T) {
	bin := testenv.Chromium(t)
	dir := t.TempDir()
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			src, _ := filepath.Abs(filepath.Join("testdata", "golden", g.name+".svg"))
			lw, mw := textWidth(g.badge.Label), textWidth(g.badge.Message)
			left, right := lw+10, mw+10
			out := filepath.Join(dir, g.name+".png")
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
				"--user-data-dir="+filepath.Join(dir, "profile-"+g.name), "--force-device-scale-factor=2",
				"--window-size="+strconv.Itoa(left+right+40)+",40", "--screenshot="+out, "file://"+src)
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("chromium: %v\n%s", err, msg)
			}
			f, err := os.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			img, err := png.Decode(f)
			if err != nil {
				t.Fatal(err)
			}
			checkRendering(t, img, g.badge, left, right)
		})
	}
}

func checkRendering(t *testing.T, img image.Image, b Badge, left, right int) {
	const scale = 2
	isPage := func(c color.Color) bool { r, g, bl, _ := c.RGBA(); return r>>8 >= 250 && g>>8 >= 250 && bl>>8 >= 250 }
	// Size: the painted area is exactly the SVG's width × 20 (at 2×).
	maxX, maxY := -1, -1
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			if !isPage(img.At(x, y)) {
				maxX, maxY = max(maxX, x), max(maxY, y)
			}
		}
	}
	if w, h := maxX+1, maxY+1; abs(w-scale*(left+right)) > 1 || abs(h-scale*20) > 1 {
		t.Errorf("painted %d×%d px, want %d×%d", w, h, scale*(left+right), scale*20)
	}
	labelColor := b.LabelColor
	if labelColor == "" {
		labelColor = "#555"
	}
	for _, seg := range []struct {
		name       string
		bg         string
		x0, x1     int // in SVG px
		textWidth  int
		textLength int
	}{
		{"label", labelColor, 0, left, left - 10, len([]rune(b.Label))},
		{"message", b.Color, left, left + right, right - 10, len([]rune(b.Message))},
	} {
		want := rgb(seg.bg)
		// The background, sampled above the text (the gradient shades it by up to 10%).
		if got := img.At(scale*(seg.x0+seg.x1)/2, scale*2); distance(got, want) > 40 {
			t.Errorf("%s background is %v, want about %s", seg.name, got, seg.bg)
		}
		// The text: pixels far from the background within the text band.
		first, last, ink := -1, -1, 0
		var inkLum float64
		for y := scale * 4; y < scale*16; y++ {
			for x := scale * seg.x0; x < scale*seg.x1; x++ {
				c := img.At(x, y)
				if distance(c, want) > 120 {
					ink++
					if first < 0 || x < first {
						first = x
					}
					last = max(last, x)
					if l := luminance(c); ink == 1 || math.Abs(l-luminance(want)) > math.Abs(inkLum-luminance(want)) {
						inkLum = l
					}
				}
			}
		}
		if ink < 6*seg.textLength {
			t.Errorf("%s: %d text pixels for %d characters: not legible", seg.name, ink, seg.textLength)
			continue
		}
		span := float64(last-first+1) / scale
		if span < 0.85*float64(seg.textWidth) || span > float64(seg.textWidth)+2 {
			t.Errorf("%s text spans %.1f px, the metrics reserved %d px", seg.name, span, seg.textWidth)
		}
		if first < scale*(seg.x0+3) || last > scale*(seg.x1-3) {
			t.Errorf("%s text runs into the edge: x %d–%d of %d–%d", seg.name, first, last, scale*seg.x0, scale*seg.x1)
		}
		// WCAG's 3:1 at least (shields.io's white on green or yellow is about 2:1).
		if r := contrast(inkLum, luminance(want)); r < 3 {
			t.Errorf("%s text contrast %.2f:1", seg.name, r)
		}
	}
}

func distance(a, b color.Color) float64 {
	ar, ag, ab, _ := a.RGBA()
	br, bg, bb, _ := b.RGBA()
	d := func(x, y uint32) float64 { return float64(int(x>>8) - int(y>>8)) }
	return math.Sqrt(d(ar, br)*d(ar, br) + d(ag, bg)*d(ag, bg) + d(ab, bb)*d(ab, bb))
}

func contrast(a, b float64) float64 { return (max(a, b) + 0.05) / (min(a, b) + 0.05) }

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
