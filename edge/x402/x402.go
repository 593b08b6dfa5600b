// Package x402 builds x402 payment requirements for the paid deep scan: the v2
// PaymentRequired object (sent base64-encoded in the PAYMENT-REQUIRED header,
// and as an MCP tool result) and the v1 body; it reads a payment strictly,
// compares it with the terms issued, identifies it by the transaction it
// carries (PaymentID) and rebuilds what the facilitator is sent from what
// it read (Payment.Forward), so the two never differ. Dependency-free so
// the edge can use it.
package x402

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
)

// Constants of the paid scan: 0.10 USDC (6 decimals) on Solana mainnet.
const (
	Amount          = "100000"
	SolanaMainnet   = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" // CAIP-2
	SolanaV1Network = "solana"
	USDCMint        = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
	TimeoutSeconds  = 60
	GatewayPath     = "/api/v1/scan-gateway"
)

// Config is the operator's payment configuration.
type Config struct {
	PayTo    string // the receiving wallet (AGENTREADY_PAYTO)
	FeePayer string // the facilitator's fee payer from /supported, when known
	Network  string // CAIP-2: SolanaMainnet (default) or SolanaDevnet (AGENTREADY_X402_NETWORK)
	Price    string // atomic units of USDC (Amount, 0.10 USDC, by default; AGENTREADY_PRICE)
}

// NetworkID is the CAIP-2 network payments are taken on.
func (c Config) NetworkID() string {
	if c.Network == "" {
		return SolanaMainnet
	}
	return c.Network
}

// Asset is the USDC mint of the network.
func (c Config) Asset() string {
	if c.NetworkID() == SolanaDevnet {
		return USDCMintDevnet
	}
	return USDCMint
}

// Amount is the price in atomic units.
func (c Config) Amount() string {
	if c.Price == "" {
		return Amount
	}
	return c.Price
}

// PriceUSDC renders the price (6-decimal atomic units) in USDC, "0.10".
func (c Config) PriceUSDC() string {
	var n int64
	for _, d := range c.Amount() {
		n = n*10 + int64(d-'0')
	}
	return strconv.FormatInt(n/1_000_000, 10) + "." + fmt.Sprintf("%02d", n%1_000_000/10_000)
}

// Requirement is the one way the gateway takes payment (v2 form).
func (c Config) Requirement() Requirement {
	return Requirement{Scheme: "exact", Network: c.NetworkID(), Amount: c.Amount(), Asset: c.Asset(), PayTo: c.PayTo,
		MaxTimeoutSeconds: TimeoutSeconds, Extra: c.extra()}
}

// Resource describes what is paid for.
type Resource struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// Requirement is one accepted way to pay (v2).
type Requirement struct {
	Scheme            string            `json:"scheme"`
	Network           string            `json:"network"`
	Amount            string            `json:"amount"`
	Asset             string            `json:"asset"`
	PayTo             string            `json:"payTo"`
	MaxTimeoutSeconds int               `json:"maxTimeoutSeconds"`
	Extra             map[string]string `json:"extra,omitempty"`
}

// PaymentRequired is the v2 object.
type PaymentRequired struct {
	X402Version int           `json:"x402Version"`
	Error       string        `json:"error,omitempty"`
	Resource    Resource      `json:"resource"`
	Accepts     []Requirement `json:"accepts"`
}

// V1Requirement is one accepted way to pay (v1 body).
type V1Requirement struct {
	Scheme            string            `json:"scheme"`
	Network           string            `json:"network"`
	MaxAmountRequired string            `json:"maxAmountRequired"`
	Resource          string            `json:"resource"`
	Description       string            `json:"description"`
	MimeType          string            `json:"mimeType"`
	PayTo             string            `json:"payTo"`
	MaxTimeoutSeconds int               `json:"maxTimeoutSeconds"`
	Asset             string            `json:"asset"`
	Extra             map[string]string `json:"extra,omitempty"`
}

// V1Body is the v1 402 body.
type V1Body struct {
	X402Version int             `json:"x402Version"`
	Error       string          `json:"error"`
	Accepts     []V1Requirement `json:"accepts"`
}

const description = "agentready deep scan: the full agent-readiness report of one site"

func (c Config) extra() map[string]string {
	if c.FeePayer == "" {
		return nil
	}
	return map[string]string{"feePayer": c.FeePayer}
}

// Required builds the v2 requirements for a gateway at baseURL.
func (c Config) Required(baseURL, reason string) PaymentRequired {
	return PaymentRequired{
		X402Version: 2, Error: reason,
		Resource: Resource{URL: baseURL + GatewayPath, Description: description, MimeType: "application/json"},
		Accepts:  []Requirement{c.Requirement()},
	}
}

// Header is the PAYMENT-REQUIRED header value (base64 of the v2 object).
func (p PaymentRequired) Header() string {
	b, _ := json.Marshal(p)
	return base64.StdEncoding.EncodeToString(b)
}

// V1 builds the v1 body for the same payment.
func (c Config) V1(baseURL, reason string) V1Body {
	return V1Body{X402Version: 1, Error: reason, Accepts: []V1Requirement{{
		Scheme: "exact", Network: V1Name(c.NetworkID()), MaxAmountRequired: c.Amount(), Resource: baseURL + GatewayPath,
		Description: description, MimeType: "application/json", PayTo: c.PayTo, MaxTimeoutSeconds: TimeoutSeconds,
		Asset: c.Asset(), Extra: c.extra()}}}
}
