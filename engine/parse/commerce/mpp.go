package commerce

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/agentready/agentready/engine/clip"
	"github.com/agentready/agentready/engine/internal/signal"
	"github.com/agentready/agentready/engine/parse/openapi"
)

// PaymentScheme is the auth-scheme of draft-ryan-httpauth-payment.
const PaymentScheme = "Payment"

// PaymentChallenge is a Payment challenge checked against the draft.
type PaymentChallenge struct {
	ID       string   `json:"id,omitempty"`
	Realm    string   `json:"realm,omitempty"`
	Method   string   `json:"method,omitempty"`
	Intent   string   `json:"intent,omitempty"`
	Expires  string   `json:"expires,omitempty"`
	Problems []string `json:"problems,omitempty"` // empty when well-formed
}

// WellFormed reports a challenge with every required parameter in its
// required form.
func (c PaymentChallenge) WellFormed() bool { return len(c.Problems) == 0 }

var lowerMethod = regexp.MustCompile(`^[a-z0-9][a-z0-9._:-]*$`)

// CheckPayment validates one parsed challenge of scheme Payment: the required
// id, realm, method (lower-case ASCII), intent and request (base64url JSON
// without padding), and the optional expires (RFC 3339), header (only
// "Payment-Authorization") and opaque (base64url JSON object of strings).
func CheckPayment(ch Challenge) PaymentChallenge {
	p := ch.Params
	c := PaymentChallenge{ID: clip.To(p["id"], maxQuoted), Realm: clip.To(p["realm"], maxQuoted), Method: clip.To(p["method"], maxQuoted), Intent: clip.To(p["intent"], maxQuoted), Expires: clip.To(p["expires"], maxQuoted)}
	c.Problems = append(c.Problems, ch.Problems...)
	if ch.Token68 != "" {
		c.Problems = append(c.Problems, "the challenge carries a token68 instead of parameters")
	}
	for _, req := range []string{"id", "realm", "method", "intent", "request"} {
		if p[req] == "" {
			c.Problems = append(c.Problems, fmt.Sprintf("required parameter `%s` is missing or empty", req))
		}
	}
	if m := p["method"]; m != "" && !lowerMethod.MatchString(m) {
		c.Problems = append(c.Problems, fmt.Sprintf("`method` %q must be a lower-case ASCII identifier", clip.To(m, maxQuoted)))
	}
	if r := p["request"]; r != "" {
		if why := b64JSON(r, false); why != "" {
			c.Problems = append(c.Problems, "`request` "+why)
		}
	}
	if e, ok := p["expires"]; ok {
		if _, err := time.Parse(time.RFC3339, e); err != nil {
			c.Problems = append(c.Problems, fmt.Sprintf("`expires` %q is not an RFC 3339 date-time", clip.To(e, maxQuoted)))
		}
	}
	if h, ok := p["header"]; ok && h != "Payment-Authorization" {
		c.Problems = append(c.Problems, fmt.Sprintf("`header` is %q; the only allowed value is \"Payment-Authorization\"", clip.To(h, maxQuoted)))
	}
	if o, ok := p["opaque"]; ok {
		if why := b64JSON(o, true); why != "" {
			c.Problems = append(c.Problems, "`opaque` "+why)
		}
	}
	return c
}

// b64JSON checks base64url (no padding) wrapping JSON; flat requires an
// object whose values are all strings.
func b64JSON(v string, flat bool) string {
	if strings.Contains(v, "=") {
		return "carries base64 padding (`=`), which the draft forbids"
	}
	raw, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return "is not base64url"
	}
	if flat {
		var m map[string]string
		if json.Unmarshal(raw, &m) != nil {
			return "does not decode to a JSON object of strings"
		}
		return ""
	}
	if !json.Valid(raw) {
		return "does not decode to JSON"
	}
	return ""
}

// Observed is a response seen during the scan that carried WWW-Authenticate.
type Observed struct {
	URL             string
	Status          int
	WWWAuthenticate []string
}

// PaymentIn returns the Payment challenges among a response's challenges.
func PaymentIn(fields []string) []PaymentChallenge {
	var out []PaymentChallenge
	for _, ch := range ParseChallenges(fields) {
		if strings.EqualFold(ch.Scheme, PaymentScheme) {
			out = append(out, CheckPayment(ch))
		}
	}
	return out
}

// DeclaresPayment reports a security scheme of HTTP type `Payment` in an
// OpenAPI description, and names it. A bare documented 402 is not enough: x402
// and others use 402 too, and the Spec model does not expose a response's
// headers, so the scheme is the only declaration that names MPP.
func DeclaresPayment(spec *openapi.Spec) (string, bool) {
	if spec == nil {
		return "", false
	}
	for _, s := range spec.Schemes {
		if strings.EqualFold(s.Type, "http") && strings.EqualFold(s.Scheme, PaymentScheme) {
			return s.Name, true
		}
	}
	return "", false
}

// GradeMPP decides the `mpp` signal from what the scan already saw: responses
// carrying WWW-Authenticate and the OpenAPI description, if any. No request of
// its own.
func GradeMPP(seen []Observed, spec *openapi.Spec) signal.Verdict {
	var good, bad *PaymentChallenge
	var goodAt, badAt string
	var details []string
	saw402 := ""
	for _, o := range seen {
		cs := PaymentIn(o.WWWAuthenticate)
		if o.Status == 402 && len(cs) == 0 && saw402 == "" {
			saw402 = o.URL
		}
		for i := range cs {
			c := cs[i]
			if o.Status != 402 {
				c.Problems = append(c.Problems, fmt.Sprintf("the challenge came with status %d; the draft sends it with 402", o.Status))
			}
			if c.WellFormed() && good == nil {
				good, goodAt = &c, o.URL
			}
			if !c.WellFormed() && bad == nil {
				bad, badAt = &c, o.URL
			}
		}
	}
	name, declared := DeclaresPayment(spec)
	if declared {
		details = append(details, fmt.Sprintf("OpenAPI security scheme %q is HTTP `Payment`", clip.To(name, maxQuoted)))
	}
	if spec != nil && spec.Declares402() {
		details = append(details, "the OpenAPI description documents a 402 response")
	}
	describe := func(c *PaymentChallenge) []string {
		d := []string{fmt.Sprintf("challenge: method %q, intent %q, realm %q", c.Method, c.Intent, c.Realm)}
		if c.Expires != "" {
			d = append(d, "expires "+c.Expires)
		}
		return append(d, c.Problems...)
	}
	switch {
	case good != nil:
		v := signal.Pass(fmt.Sprintf("A 402 response carries a well-formed Payment challenge (method %s, intent %s).", good.Method, good.Intent),
			append(describe(good), details...)...)
		v.FoundAt = goodAt
		return v
	case bad != nil:
		v := signal.Partial("A Payment challenge was seen but it is malformed: "+strings.Join(bad.Problems, "; ")+".",
			`Send 402 with WWW-Authenticate: Payment id="…", realm="…", method="<lower-case method>", intent="charge", request="<base64url JSON, no padding>" as draft-ryan-httpauth-payment specifies.`,
			append(describe(bad), details...)...)
		v.FoundAt = badAt
		return v
	case declared:
		return signal.Partial("The OpenAPI description declares the Payment authentication scheme, but no Payment challenge was seen during the scan.",
			"Answer unpaid requests to the paid operations with 402 and a WWW-Authenticate: Payment challenge.", details...)
	}
	if saw402 != "" {
		details = append(details, "a 402 response was seen without a Payment challenge (another payment protocol, such as x402, may be in use)")
	}
	return signal.NA("No Machine Payments Protocol (Payment authentication scheme) challenge or declaration was seen.", details...)
}
