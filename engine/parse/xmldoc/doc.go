// Package xmldoc classifies feed and sitemap documents by their root element
// (RSS, Atom, sitemaps.org urlset/sitemapindex) and recognises JSON Feed, with a
// streaming XML decoder so a large or hostile file costs only its first tokens.
package xmldoc
