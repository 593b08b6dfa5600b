package edge

// agentready's mark is a readiness gauge on the badge's label colour, its
// four segments the badge's level colours (red, not ready, to green,
// optimized) and its needle in the green. icon_gen.go holds it twice, as
// SVG (/assets/icon.svg) and rasterised (/favicon.ico), both generated from
// one geometry in icon_test.go (go test ./edge -run TestIcons -update), so
// that the module carries bytes, not the code that draws them.

// The icon is a site document like the others: ETag, 304, cached a day.
func init() {
	siteDocs["/assets/icon.svg"] = doc{gen: func(string, Config) []byte { return []byte(iconSVG) }, contentType: "image/svg+xml", maxAge: 86400}
	siteDocs["/favicon.ico"] = doc{gen: func(string, Config) []byte { return []byte(faviconICO) }, contentType: "image/x-icon", maxAge: 86400}
}
