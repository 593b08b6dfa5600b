package edge

import "net/http"

// ContentSecurityPolicy is what every HTML page may load: its own scripts,
// stylesheet, images and API, nothing inline and nothing from elsewhere. The
// pages are written for it: no inline script, no style attribute (the
// ladder's bars are SVG rectangles, whose width is an attribute, not a
// style), and JSON-LD is a data block, which the policy does not govern.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// ReferrerPolicy keeps the scanned site's address (in a report page's query)
// from leaving with a visitor's requests to other origins. It is not
// no-referrer: under that policy a browser sends "Origin: null" with a
// form's POST, and the page's Scan button is refused as cross-site
// (scanForPage compares the Origin with the service's own).
const ReferrerPolicy = "strict-origin-when-cross-origin"

// pageHeaders gives an HTML answer its security headers. Every handler that
// answers HTML calls it (pages, their error notes and redirects, the site
// documents that are HTML), so one list is the policy of the whole site;
// X-Frame-Options repeats frame-ancestors for browsers without CSP 2.
func pageHeaders(hdr http.Header) {
	hdr.Set("Content-Security-Policy", ContentSecurityPolicy)
	hdr.Set("Referrer-Policy", ReferrerPolicy)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("X-Frame-Options", "DENY")
}
