package x402

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Header names of both protocol generations.
const (
	HeaderRequired   = "PAYMENT-REQUIRED"   // v2: the requirements, base64 JSON
	HeaderSignature  = "PAYMENT-SIGNATURE"  // v2: the payment, base64 JSON
	HeaderResponse   = "PAYMENT-RESPONSE"   // v2: the settlement, base64 JSON
	HeaderPaymentV1  = "X-PAYMENT"          // v1: the payment
	HeaderResponseV1 = "X-PAYMENT-RESPONSE" // v1: the settlement
)

// Networks the gateway can take payment on.
const (
	SolanaDevnet         = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"
	SolanaDevnetV1       = "solana-devnet"
	USDCMintDevnet       = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"
	maxPaymentHeaderSize = 16 << 10
)

// Payment is a client's payment (a PaymentPayload of either version) as
// the gateway read it. v1 names its scheme and network at the top; v2
// repeats the requirement it accepted and the resource it pays for. The
// transaction is the one member of an SVM exact payload, decoded.
type Payment struct {
	X402Version int
	Scheme      string       // v1
	Network     string       // v1
	Resource    *Resource    // v2
	Accepted    *Requirement // v2
	Transaction []byte       // payload.transaction, decoded from base64
}

// ErrMalformed is a payment header that cannot be read at all.
var ErrMalformed = errors.New("malformed payment header")

// The members each version's envelope may carry, spelled exactly. Anything
// else is refused: a member the gateway ignored could be read by a
// facilitator, and what it reads must be what the gateway identified.
var (
	envelopeV1  = []string{"x402Version", "scheme", "network", "payload"}
	envelopeV2  = []string{"x402Version", "resource", "accepted", "payload", "extensions"}
	payloadSVM  = []string{"transaction"}
	resourceV2  = []string{"url", "description", "mimeType"}
	requirement = []string{"scheme", "network", "amount", "asset", "payTo", "maxTimeoutSeconds", "extra"}
)

// DecodePayment reads the payment a request carries: v2's PAYMENT-SIGNATURE
// or v1's X-PAYMENT, base64 JSON. ok is false when neither is present.
//
// It reads strictly, so that what the gateway identifies (PaymentID) is
// exactly what the facilitator verifies (Forward): the header and the
// transaction in standard base64 with canonical padding and no whitespace;
// the JSON with no member named twice in any letter case (Go's decoder
// matches names case-insensitively and keeps the last, a case-sensitive
// facilitator reads the other); and only the members x402 defines for the
// version, spelled exactly. encoding/json can do neither of the last two,
// hence the walk in strictObject.
func DecodePayment(v2, v1 string) (p Payment, ok bool, err error) {
	h, want := v2, 2
	if h == "" {
		h, want = v1, 1
	}
	if strings.TrimSpace(h) == "" {
		return Payment{}, false, nil
	}
	if len(h) > maxPaymentHeaderSize {
		return Payment{}, true, fmt.Errorf("%w: longer than %d bytes", ErrMalformed, maxPaymentHeaderSize)
	}
	raw, err := strictBase64(h)
	if err != nil {
		return Payment{}, true, fmt.Errorf("%w: the header is not standard base64 (RFC 4648 alphabet, canonical padding, no spaces)", ErrMalformed)
	}
	if err := noDuplicateNames(raw); err != nil {
		return Payment{}, true, err
	}
	var version struct {
		X402Version int `json:"x402Version"`
	}
	if json.Unmarshal(raw, &version) != nil {
		return Payment{}, true, fmt.Errorf("%w: not a JSON payment payload", ErrMalformed)
	}
	if version.X402Version != want {
		return Payment{}, true, fmt.Errorf("%w: x402Version %d in the header of version %d", ErrMalformed, version.X402Version, want)
	}
	envelope := envelopeV1
	if want == 2 {
		envelope = envelopeV2
	}
	members, err := strictObject(raw, "the payment", envelope)
	if err != nil {
		return Payment{}, true, err
	}
	p.X402Version = want
	if want == 1 {
		if err := stringMember(members, "scheme", &p.Scheme); err != nil {
			return Payment{}, true, err
		}
		if err := stringMember(members, "network", &p.Network); err != nil {
			return Payment{}, true, err
		}
	} else {
		if r, present := members["resource"]; present {
			var res Resource
			if err := decodeStrict(r, "resource", resourceV2, &res); err != nil {
				return Payment{}, true, err
			}
			p.Resource = &res
		}
		if a, present := members["accepted"]; present {
			var req Requirement
			if err := decodeStrict(a, "accepted", requirement, &req); err != nil {
				return Payment{}, true, err
			}
			p.Accepted = &req
		}
	}
	body, present := members["payload"]
	if !present || string(body) == "null" {
		return Payment{}, true, fmt.Errorf("%w: no payload", ErrMalformed)
	}
	inner, err := strictObject(body, "payload", payloadSVM)
	if err != nil {
		return Payment{}, true, err
	}
	var tx string
	if err := stringMember(inner, "transaction", &tx); err != nil || tx == "" {
		return Payment{}, true, fmt.Errorf("%w: payload.transaction is missing (the gateway takes Solana exact payments: payload is {\"transaction\": base64})", ErrMalformed)
	}
	if p.Transaction, err = strictBase64(tx); err != nil {
		return Payment{}, true, fmt.Errorf("%w: payload.transaction is not standard base64 (RFC 4648 alphabet, canonical padding, no spaces)", ErrMalformed)
	}
	return p, true, nil
}

// Forward is the PaymentPayload sent to the facilitator: rebuilt from what
// was read, with the gateway's own requirement and resource (Check has
// compared the client's with them), so the facilitator verifies and
// settles exactly the transaction PaymentID identified, however the client
// spelled its envelope.
func (p Payment) Forward(req Requirement, resource Resource) json.RawMessage {
	payload := map[string]string{"transaction": base64.StdEncoding.EncodeToString(p.Transaction)}
	var v any
	if p.X402Version == 1 {
		v = struct {
			X402Version int               `json:"x402Version"`
			Scheme      string            `json:"scheme"`
			Network     string            `json:"network"`
			Payload     map[string]string `json:"payload"`
		}{1, req.Scheme, V1Name(req.Network), payload}
	} else {
		v = struct {
			X402Version int               `json:"x402Version"`
			Resource    Resource          `json:"resource"`
			Accepted    Requirement       `json:"accepted"`
			Payload     map[string]string `json:"payload"`
		}{2, resource, req, payload}
	}
	b, _ := json.Marshal(v)
	return b
}

// strictBase64 decodes standard base64 (RFC 4648 section 4) in its one
// canonical spelling: padded, no line breaks or spaces (which Go's decoder
// skips and others read differently), no stray bits in the last character.
func strictBase64(s string) ([]byte, error) {
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, err
	}
	if base64.StdEncoding.EncodeToString(b) != s {
		return nil, errors.New("not canonical base64")
	}
	return b, nil
}

// noDuplicateNames refuses JSON in which an object names a member twice,
// in any letter case, at any depth.
func noDuplicateNames(raw []byte) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	type frame struct {
		object bool
		names  map[string]bool
		key    bool // the next token of an object is a member name
	}
	var stack []frame
	for {
		tok, err := d.Token()
		if err == io.EOF {
			if len(stack) != 0 {
				return fmt.Errorf("%w: not a JSON payment payload", ErrMalformed)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: not a JSON payment payload", ErrMalformed)
		}
		top := len(stack) - 1
		if name, isName := tok.(string); isName && top >= 0 && stack[top].object && stack[top].key {
			folded := foldName(name)
			if stack[top].names[folded] {
				return fmt.Errorf("%w: an object in the payment names one member twice (in some letter case)", ErrMalformed)
			}
			stack[top].names[folded] = true
			stack[top].key = false
			continue
		}
		if top >= 0 && stack[top].object {
			stack[top].key = true // after this value comes a name
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true, names: map[string]bool{}, key: true})
		case json.Delim('['):
			stack = append(stack, frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if n := len(stack) - 1; n >= 0 && stack[n].object {
				stack[n].key = true
			}
		}
		if len(stack) > 64 {
			return fmt.Errorf("%w: nested too deeply", ErrMalformed)
		}
	}
}

// foldName maps every letter of a name to one member of its Unicode case
// folding orbit (s, S and ſ alike; k, K and the Kelvin sign alike), as
// case-insensitive JSON decoders such as Go's compare names.
func foldName(name string) string {
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, name)
}

// strictObject reads raw as one JSON object whose members are among
// allowed, spelled exactly (noDuplicateNames has ruled out repeats).
func strictObject(raw json.RawMessage, what string, allowed []string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf("%w: %s is not a JSON object", ErrMalformed, what)
	}
	for name := range m {
		if !slices.Contains(allowed, name) {
			return nil, fmt.Errorf("%w: %s has a member x402 does not define there (it may have %s, spelled so)", ErrMalformed, what, strings.Join(allowed, ", "))
		}
	}
	return m, nil
}

// decodeStrict decodes an object of known members into v.
func decodeStrict(raw json.RawMessage, what string, allowed []string, v any) error {
	if _, err := strictObject(raw, what, allowed); err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%w: %s has a member of the wrong type", ErrMalformed, what)
	}
	return nil
}

func stringMember(m map[string]json.RawMessage, name string, into *string) error {
	raw, ok := m[name]
	if !ok {
		return nil
	}
	if json.Unmarshal(raw, into) != nil {
		return fmt.Errorf("%w: %s is not a string", ErrMalformed, name)
	}
	return nil
}

// Mismatch says how a payment differs from what the gateway asks for, in the
// words of the x402 error codes (the reason a client can act on).
type Mismatch struct {
	Reason string // invalid_scheme, invalid_network, invalid_payment_requirements, invalid_x402_version
	Detail string
}

func (m *Mismatch) Error() string { return m.Reason + ": " + m.Detail }

// Check compares a payment with the requirement req (for a resource at
// resourceURL): the facilitator verifies signatures and balances, the
// gateway makes sure the payment accepted every term it issued (scheme,
// network, price, asset, payee, timeout, the extra terms such as the fee
// payer) for this resource, so a payment made for something cheaper, for
// another fee payer or for another resource cannot buy a deep scan.
func Check(p Payment, req Requirement, resourceURL string) error {
	switch p.X402Version {
	case 1:
		if p.Scheme != req.Scheme {
			return &Mismatch{"invalid_scheme", "the payment's scheme is not " + req.Scheme + ", the one the gateway takes"}
		}
		if p.Network != V1Name(req.Network) {
			return &Mismatch{"invalid_network", "the payment is not on " + V1Name(req.Network) + ", the network the gateway takes"}
		}
		return nil // v1 payloads carry no terms beyond these; the facilitator checks them against the requirements we send it
	case 2:
		a := p.Accepted
		if a == nil {
			return &Mismatch{"invalid_payment_requirements", "the payment does not say which requirement it accepted (accepted)"}
		}
		// The messages name the field and what the gateway asks for, never
		// the value sent (an error does not echo request bytes).
		switch {
		case a.Scheme != req.Scheme:
			return &Mismatch{"invalid_scheme", "its accepted scheme is not " + req.Scheme + ", the one the gateway takes"}
		case a.Network != req.Network:
			return &Mismatch{"invalid_network", "its accepted network is not " + req.Network + ", the one the gateway takes"}
		case a.Amount != req.Amount:
			return &Mismatch{"invalid_payment_requirements", "its accepted amount is not " + req.Amount + " atomic units, the price of a deep scan"}
		case a.Asset != req.Asset:
			return &Mismatch{"invalid_payment_requirements", "its accepted asset is not " + req.Asset + ", the USDC mint the gateway takes"}
		case a.PayTo != req.PayTo:
			return &Mismatch{"invalid_payment_requirements", "its accepted payTo is not this service's payee " + req.PayTo}
		case a.MaxTimeoutSeconds != req.MaxTimeoutSeconds:
			return &Mismatch{"invalid_payment_requirements", "its accepted maxTimeoutSeconds is not " + strconv.Itoa(req.MaxTimeoutSeconds) + ", the time the gateway gives a payment"}
		}
		for _, k := range slices.Sorted(maps.Keys(req.Extra)) {
			if a.Extra[k] != req.Extra[k] {
				what := "the value in PAYMENT-REQUIRED"
				if k == "feePayer" {
					what = "the facilitator's fee payer named in PAYMENT-REQUIRED"
				}
				return &Mismatch{"invalid_payment_requirements", "its accepted extra." + k + " is not " + req.Extra[k] + ", " + what}
			}
		}
		switch {
		case p.Resource == nil || p.Resource.URL == "":
			return &Mismatch{"invalid_payment_requirements", "it does not name the resource it pays for (resource.url); it must be " + resourceURL + ", as in PAYMENT-REQUIRED"}
		case p.Resource.URL != resourceURL:
			return &Mismatch{"invalid_payment_requirements", "its resource is not " + resourceURL + ", the resource paid for here"}
		}
		return nil
	}
	return &Mismatch{"invalid_x402_version", "the gateway speaks x402 versions 1 and 2"}
}

// V1Name is a CAIP-2 network's v1 name.
func V1Name(caip2 string) string {
	switch caip2 {
	case SolanaMainnet:
		return SolanaV1Network
	case SolanaDevnet:
		return SolanaDevnetV1
	}
	return caip2
}

// Settlement is a facilitator's settle answer as the gateway passes it on
// (SettleResponse), in PAYMENT-RESPONSE / X-PAYMENT-RESPONSE.
type Settlement struct {
	Success     bool   `json:"success"`
	ErrorReason string `json:"errorReason,omitempty"`
	Payer       string `json:"payer,omitempty"`
	Transaction string `json:"transaction"`
	Network     string `json:"network"`
	Amount      string `json:"amount,omitempty"`
}

// Header is the settlement as a response header value (base64 JSON).
func (s Settlement) Header() string {
	b, _ := json.Marshal(s)
	return base64.StdEncoding.EncodeToString(b)
}
