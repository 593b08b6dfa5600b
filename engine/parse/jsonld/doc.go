// Package jsonld parses JSON-LD blocks and walks the whole node graph: top-level
// arrays, @graph members and nodes nested in any property, so an Organization
// that is only the publisher of an Article is still found.
package jsonld
