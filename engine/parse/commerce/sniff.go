package commerce

import (
	"encoding/json"
	"strings"
)

// Kind is what a commerce document turns out to be.
type Kind string

const (
	KindUnknown   Kind = ""
	KindUCP       Kind = "ucp"         // a `ucp` object
	KindACP       Kind = "acp"         // an ACP discovery document (`protocol` object)
	KindACPDraft  Kind = "acp-prespec" // an ACP document predating the discovery RFC
	KindX402      Kind = "x402"        // an x402 discovery document (`x402Version`)
	KindAgentCard Kind = "a2a-card"    // an A2A agent card
	KindJWKS      Kind = "jwks"        // a key set
	KindOpenAPI   Kind = "openapi"     // an OpenAPI/Swagger description
	KindNotJSON   Kind = "not-json"    // not a JSON object
)

// Describe names the kind for a message.
func (k Kind) Describe() string {
	switch k {
	case KindUCP:
		return "a UCP business profile"
	case KindACP:
		return "an ACP discovery document"
	case KindACPDraft:
		return "an ACP document in a pre-specification shape"
	case KindX402:
		return "an x402 discovery document, which describes paid resources, not UCP or ACP"
	case KindAgentCard:
		return "an A2A agent card"
	case KindJWKS:
		return "a JSON Web Key Set"
	case KindOpenAPI:
		return "an OpenAPI description"
	case KindNotJSON:
		return "not a JSON object"
	}
	return "an unrecognised JSON document"
}

// Sniff classifies a document by the members each format is defined by, so a
// look-alike (an x402 discovery document at a commerce path, an agent card) is
// named for what it is rather than graded as a broken UCP or ACP document.
func Sniff(body []byte) Kind {
	m, err := object(body)
	if err != nil {
		return KindNotJSON
	}
	has := func(k string) bool { _, ok := m[k]; return ok }
	switch {
	case sub(m, "ucp") != nil:
		return KindUCP
	case sub(m, "protocol") != nil && (has("api_base_url") || has("transports") || strings.EqualFold(str(sub(m, "protocol"), "name"), "acp")):
		return KindACP
	case has("x402Version"):
		return KindX402
	case has("keys") && !has("protocol") && len(m) <= 2:
		return KindJWKS
	case has("openapi") || has("swagger"):
		return KindOpenAPI
	case has("skills") && (has("supportedInterfaces") || has("url") || has("capabilities")) && has("name"):
		return KindAgentCard
	case acpDraft(m):
		return KindACPDraft
	}
	return KindUnknown
}

// acpDraft recognises the shapes merchants published before the discovery
// RFC: a `protocol` string naming ACP, or an `endpoints` map with checkout.
func acpDraft(m map[string]json.RawMessage) bool {
	if p := str(m, "protocol"); strings.Contains(strings.ToLower(p), "acp") {
		return true
	}
	ep := sub(m, "endpoints")
	for k := range ep {
		if strings.HasPrefix(strings.ToLower(k), "checkout") {
			return true
		}
	}
	return false
}
