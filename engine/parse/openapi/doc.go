// Package openapi loads OpenAPI 3.x and Swagger 2.0 documents, JSON or YAML,
// with kin-openapi (Swagger 2.0 is converted to 3.0 by its openapi2conv), and
// flattens them into the operation model the [spec] checks grade: methods,
// parameter names, request and response shapes, security schemes and scopes.
// It is the one reader of a description: the deep scan's API and OAuth probes
// take its servers (as a client reaches them), whether an operation is
// secured, and its documented error responses from here, never from a
// reading of their own. Documents that real publishers get slightly wrong
// still load, with findings; one that does not load gets an error in words
// (the line and what is wrong, or the $ref that points nowhere), never the
// YAML parser's or kin-openapi's own text.
package openapi
