// Package commerce reads the agentic-commerce documents behind the four
// commerce signals and grades each one (pass, partial or na; never fail, as
// these are opt-in standards and nothing here is scored):
//
//   - ucp: a Universal Commerce Protocol business profile at /.well-known/ucp.
//     Three schema generations are read: 2026-01-11 (`services` map of
//     objects with rest/mcp/a2a/embedded bindings, `capabilities` array,
//     `payment.handlers[]`), and 2026-01-01/2026-04-08 (`services` and
//     `capabilities` maps of arrays keyed by reverse-domain names,
//     `payment_handlers` map, `signing_keys[]` or `keys[]`).
//   - acp: an Agentic Commerce Protocol discovery document at
//     /.well-known/acp.json (the discovery RFC: `protocol.name` "acp" with a
//     version, `api_base_url`, `transports`); pre-specification shapes are
//     recognised and graded partial with what they lack.
//   - ap2: the Agent Payments Protocol extension of an A2A agent card
//     (`capabilities.extensions[].uri`), exact spec URI or not.
//   - mpp: the Machine Payments Protocol's `Payment` HTTP authentication
//     scheme (draft-ryan-httpauth-payment): WWW-Authenticate challenges seen on
//     402 responses, parsed per RFC 9110 §11, or a Payment security scheme in
//     the site's OpenAPI description.
//
// Sniff tells these documents apart from look-alikes such as an x402
// discovery document, which is neither UCP nor ACP.
//
// Every parser tolerates members it does not need; a member of an unexpected
// type is a finding, never a rejection, and no message carries a library's
// error text.
package commerce
