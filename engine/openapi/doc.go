// Package openapi loads OpenAPI 3.x and Swagger 2.0 documents, JSON or YAML,
// with kin-openapi (Swagger 2.0 is converted to 3.0 by its openapi2conv), and
// flattens them into the operation model the [spec] checks grade: methods,
// parameter names, request and response shapes, security schemes and scopes.
// Documents that real publishers get slightly wrong still load, with findings.
package openapi
