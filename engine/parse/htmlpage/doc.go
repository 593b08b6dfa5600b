// Package htmlpage extracts, in one walk over a real HTML5 parse tree, what the
// checks need from a page: meta tags, link and anchor relations, JSON-LD blocks,
// headings, images, scripts, WebMCP form attributes, and text measures.
package htmlpage
