// Package webbotauth reads a Web Bot Auth key directory, the JWKS a bot
// operator serves at /.well-known/http-message-signatures-directory
// (draft-meunier-webbotauth-httpsig-directory) so sites can verify the HTTP
// Message Signatures (RFC 9421) its crawlers send, and grades it for the
// `webbotauth` identity signal.
//
// It checks what a verifier relies on: each key's type and curve against the
// algorithms RFC 9421 registers, the public coordinate lengths (32 bytes of
// base64url `x` for Ed25519), the nbf/exp validity window, whether `kid` is
// the RFC 7638 thumbprint the draft asks signatures to name, the media type,
// and whether the response carries a directory signature. Private material
// (`d`, RSA primes, an `oct` secret) in a public directory, and example keys
// whose private half is printed in an RFC, are reported loudly: anyone can
// sign as the operator.
//
// Absence (404, an HTML soft 404) is `na`, never a failure: the standard is
// opt-in. The package does not verify signatures.
package webbotauth
