package payment

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/agentready/agentready/edge/x402"
	"github.com/agentready/agentready/engine/fetch"
)

// DefaultFacilitator is the public x402 facilitator the official SDKs default to.
const DefaultFacilitator = "https://x402.org/facilitator"

// FacilitatorOrDefault is url, or DefaultFacilitator when none is configured.
func FacilitatorOrDefault(url string) string {
	if url == "" {
		return DefaultFacilitator
	}
	return url
}

// Facilitator is a client of an x402 facilitator's HTTP API. It dials through
// the scanner's address guard like everything else that reaches out.
type Facilitator struct {
	base string
	c    *http.Client
}

// NewFacilitator talks to the facilitator at base through policy, on any
// port: the scanner's policy, with AllowPrivate for a facilitator on
// loopback or a private network (tests, one run beside the service) or an
// allow-list entry naming exactly it.
func NewFacilitator(base string, policy fetch.AddressPolicy, timeout time.Duration) *Facilitator {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	policy.AllowAnyPort = true
	return &Facilitator{base: strings.TrimSuffix(base, "/"), c: fetch.GuardedClient(policy, nil, timeout, 8)}
}

// ErrUnavailable is a facilitator that did not answer usefully (timeout,
// connection failure, 5xx, an answer that is not the API's JSON).
var ErrUnavailable = errors.New("the payment facilitator is unavailable")

// Kind is one way of paying a facilitator supports.
type Kind struct {
	X402Version int            `json:"x402Version"`
	Scheme      string         `json:"scheme"`
	Network     string         `json:"network"`
	Extra       map[string]any `json:"extra,omitempty"`
}

// Supported is the facilitator's GET /supported answer.
type Supported struct {
	Kinds []Kind `json:"kinds"`
}

// FeePayer is the fee payer the facilitator names for network (Solana's
// extra.feePayer), or "".
func (s Supported) FeePayer(network string) string {
	for _, k := range s.Kinds {
		if k.Scheme == "exact" && (k.Network == network || k.Network == x402.V1Name(network)) {
			if fp, ok := k.Extra["feePayer"].(string); ok {
				return fp
			}
		}
	}
	return ""
}

// VerifyResponse is the facilitator's POST /verify answer.
type VerifyResponse struct {
	IsValid       bool   `json:"isValid"`
	InvalidReason string `json:"invalidReason,omitempty"`
	Payer         string `json:"payer,omitempty"`
}

type request struct {
	X402Version         int             `json:"x402Version"`
	PaymentPayload      json.RawMessage `json:"paymentPayload"`
	PaymentRequirements any             `json:"paymentRequirements"`
}

// Supported asks what the facilitator takes.
func (f *Facilitator) Supported(ctx context.Context) (Supported, error) {
	var out Supported
	err := f.call(ctx, http.MethodGet, "/supported", nil, &out)
	return out, err
}

// Verify asks whether payload pays requirements (without settling).
func (f *Facilitator) Verify(ctx context.Context, version int, payload json.RawMessage, requirements any) (VerifyResponse, error) {
	var out VerifyResponse
	err := f.call(ctx, http.MethodPost, "/verify", request{version, payload, requirements}, &out)
	return out, err
}

// Settle submits the payment.
func (f *Facilitator) Settle(ctx context.Context, version int, payload json.RawMessage, requirements any) (x402.Settlement, error) {
	var out x402.Settlement
	err := f.call(ctx, http.MethodPost, "/settle", request{version, payload, requirements}, &out)
	return out, err
}

func (f *Facilitator) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, f.base+path, body)
	if err != nil {
		return fmt.Errorf("%w: its URL cannot be requested (check AGENTREADY_FACILITATOR_URL)", ErrUnavailable)
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := f.c.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrUnavailable, fetch.Describe(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%w: its answer to %s broke off", ErrUnavailable, path)
	}
	// A facilitator answers a refused payment with 200 {isValid:false} or
	// with 400 and the same body; only a body that is not the API's JSON,
	// or a server error, means it is unavailable.
	if resp.StatusCode >= 500 {
		return fmt.Errorf("%w: %s answered %d", ErrUnavailable, path, resp.StatusCode)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%w: %s answered %d without the x402 JSON", ErrUnavailable, path, resp.StatusCode)
	}
	return nil
}
