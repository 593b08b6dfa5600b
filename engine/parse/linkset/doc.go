// Package linkset parses RFC 9264 linksets (application/linkset+json), the
// format of RFC 9727 API catalogs, and RFC 8288 Link header fields.
package linkset
