package commerce

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentready/agentready/engine/clip"
	"github.com/agentready/agentready/engine/internal/signal"
)

// AP2ExtensionURI is the URI the AP2 specification (docs/a2a-extension.md in
// google-agentic-commerce/AP2) says agents supporting it MUST declare.
const AP2ExtensionURI = "https://github.com/google-agentic-commerce/ap2/tree/v0.1"

// ap2Roles are the roles the extension's params schema enumerates.
var ap2Roles = map[string]bool{"merchant": true, "shopper": true, "credentials-provider": true,
	"payment-processor": true, "micropayment-provider": true, "streaming-payment-consumer": true}

// AP2Extension is the AP2 entry of a card's capabilities.extensions.
type AP2Extension struct {
	URI      string   `json:"uri"`
	Exact    bool     `json:"exact"` // the spec's URI, byte for byte
	Required bool     `json:"required"`
	Roles    []string `json:"roles,omitempty"`
	Findings []string `json:"findings,omitempty"`
}

// namesAP2 recognises a URI meant to name AP2 in another form (case, version,
// path), so a near miss is reported as such rather than ignored.
func namesAP2(uri string) bool {
	u := strings.ToLower(uri)
	if strings.Contains(u, "google-agentic-commerce/ap2") || strings.Contains(u, "agent-payments-protocol") {
		return true
	}
	for _, seg := range strings.FieldsFunc(u, func(r rune) bool { return r == '/' || r == ':' || r == '#' || r == '?' }) {
		if seg == "ap2" {
			return true
		}
	}
	return false
}

// FindAP2 reads an A2A agent card and returns its AP2 extension: the exact
// spec URI when declared, else the first URI that names AP2; nil when none.
// err is set only when the card is not a JSON object.
func FindAP2(card []byte) (*AP2Extension, error) {
	m, err := object(card)
	if err != nil {
		return nil, err
	}
	var found *AP2Extension
	for _, raw := range list(sub(m, "capabilities")["extensions"]) {
		var e map[string]json.RawMessage
		if json.Unmarshal(raw, &e) != nil {
			continue
		}
		uri := str(e, "uri")
		if !namesAP2(uri) {
			continue
		}
		x := &AP2Extension{URI: clip.To(uri, maxQuoted), Exact: uri == AP2ExtensionURI}
		_ = json.Unmarshal(e["required"], &x.Required)
		params := sub(e, "params")
		for _, r := range strings1(params["roles"]) {
			x.Roles = append(x.Roles, r)
			if !ap2Roles[r] {
				x.Findings = append(x.Findings, fmt.Sprintf("role %q is not one the AP2 extension defines", r))
			}
		}
		if len(x.Roles) == 0 {
			x.Findings = append(x.Findings, "no `params.roles`; the extension requires at least one role (merchant, shopper, credentials-provider, payment-processor)")
		}
		if !x.Exact {
			x.Findings = append(x.Findings, fmt.Sprintf("the URI is %q; the AP2 specification fixes it to %q", x.URI, AP2ExtensionURI))
		}
		if found == nil || (x.Exact && !found.Exact) {
			found = x
		}
	}
	return found, nil
}

// GradeAP2 decides the `ap2` signal from the A2A card already fetched for
// check 1.2 (cardURL empty and card nil when there was none): no request of
// its own.
func GradeAP2(cardURL string, card []byte) signal.Verdict {
	if len(card) == 0 {
		return signal.NA("No A2A agent card was found, so there is no AP2 extension to read.")
	}
	x, err := FindAP2(card)
	if err != nil {
		return signal.NA("The A2A agent card could not be read (" + err.Error() + "), so there is no AP2 extension to read.")
	}
	if x == nil {
		return signal.NA("The A2A agent card declares no AP2 (Agent Payments Protocol) extension.")
	}
	details := []string{"extension URI: " + x.URI, fmt.Sprintf("required: %v", x.Required)}
	if len(x.Roles) > 0 {
		details = append(details, "roles: "+strings.Join(x.Roles, ", "))
	}
	details = append(details, x.Findings...)
	v := signal.Pass("The A2A agent card declares the AP2 extension.", details...)
	if !x.Exact {
		v = signal.Partial(fmt.Sprintf("The A2A agent card names AP2 with %q, not the URI the AP2 specification gives.", x.URI),
			"Declare the extension as {\"uri\": \""+AP2ExtensionURI+"\", \"params\": {\"roles\": [\"merchant\"]}} in capabilities.extensions.",
			details...)
	}
	v.FoundAt = cardURL
	return v
}
