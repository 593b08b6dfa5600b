package x402

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
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

// Payload is a client's payment: PaymentPayload of either version. v1 names
// its scheme and network at the top; v2 repeats the requirement it accepted.
type Payload struct {
	X402Version int             `json:"x402Version"`
	Scheme      string          `json:"scheme,omitempty"`   // v1
	Network     string          `json:"network,omitempty"`  // v1
	Resource    *Resource       `json:"resource,omitempty"` // v2
	Accepted    *Requirement    `json:"accepted,omitempty"` // v2
	Payload     json.RawMessage `json:"payload"`
	Extensions  json.RawMessage `json:"extensions,omitempty"`
}

// ErrMalformed is a payment header that cannot be read at all.
var ErrMalformed = errors.New("malformed payment header")

// DecodePayment reads the payment a request carries: v2's PAYMENT-SIGNATURE
// or v1's X-PAYMENT (base64 JSON). raw is the decoded JSON, which identifies
// the payment for replay protection. ok is false when neither is present.
func DecodePayment(v2, v1 string) (p Payload, raw []byte, ok bool, err error) {
	h, want := v2, 2
	if h == "" {
		h, want = v1, 1
	}
	h = strings.TrimSpace(h)
	if h == "" {
		return Payload{}, nil, false, nil
	}
	if len(h) > maxPaymentHeaderSize {
		return Payload{}, nil, true, fmt.Errorf("%w: longer than %d bytes", ErrMalformed, maxPaymentHeaderSize)
	}
	raw, err = base64.StdEncoding.DecodeString(h)
	if err != nil {
		if raw, err = base64.RawURLEncoding.DecodeString(strings.TrimRight(h, "=")); err != nil {
			return Payload{}, nil, true, fmt.Errorf("%w: not base64", ErrMalformed)
		}
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return Payload{}, nil, true, fmt.Errorf("%w: not a JSON payment payload", ErrMalformed)
	}
	if p.X402Version != want {
		return Payload{}, nil, true, fmt.Errorf("%w: x402Version %d in the header of version %d", ErrMalformed, p.X402Version, want)
	}
	if len(p.Payload) == 0 || string(p.Payload) == "null" {
		return Payload{}, nil, true, fmt.Errorf("%w: no payload", ErrMalformed)
	}
	return p, raw, true, nil
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
func Check(p Payload, req Requirement, resourceURL string) error {
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
