// Package facilitator is a local x402 facilitator, used by tests only: the
// facilitator HTTP API (GET /supported, POST /verify, POST /settle) as
// the x402 specification defines it, over payments whose "transaction" is a
// readable test token instead of a signed Solana transaction. It checks
// what a real facilitator checks that the gateway relies on (the
// transaction's amount and payee against the requirements sent with it, the
// scheme, and that a transaction settles once; the token carries no asset
// or network, so those are the gateway's own checks), records every call,
// and can be told to fail or stall, so the gateway's handling of each case
// is testable on loopback without a chain.
package facilitator

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Unsettleable begins the nonce of a token that verifies but never settles.
const Unsettleable = "unsettleable"

// FeePayer is the fee payer this facilitator advertises for Solana.
const FeePayer = "FaciLitatorFeePayer1111111111111111111111111"

// Call is one request the facilitator received.
type Call struct {
	Path string
	Body json.RawMessage
}

// Server is a running facilitator.
type Server struct {
	URL string
	srv *httptest.Server

	mu      sync.Mutex
	calls   []Call
	settled map[string]bool
	// Fail, when set, makes every /verify and /settle answer this status
	// (e.g. 503); Stall makes them wait this long first.
	Fail  int
	Stall time.Duration
}

// Start runs a facilitator on loopback.
func Start() *Server {
	s := &Server{settled: map[string]bool{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// SetStall makes /verify and /settle wait d before answering, from the
// next call on (0: answer at once).
func (s *Server) SetStall(d time.Duration) {
	s.mu.Lock()
	s.Stall = d
	s.mu.Unlock()
}

// Close stops it.
func (s *Server) Close() { s.srv.Close() }

// Calls returns what it was asked, in order.
func (s *Server) Calls(path string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if path == "" || c.Path == path {
			out = append(out, c)
		}
	}
	return out
}

// CallsWith counts the calls to path whose payment carried transaction tx
// (one payment's share of the calls, however its envelope was spelled).
func (s *Server) CallsWith(path, tx string) int {
	n := 0
	for _, c := range s.Calls(path) {
		var body call
		if json.Unmarshal(c.Body, &body) == nil && body.PaymentPayload.Payload.Transaction == tx {
			n++
		}
	}
	return n
}

// Token builds the test transaction a payment carries: who pays, how much,
// to whom, and a nonce that makes it unique. A token starting "forged:" is
// refused as badly signed, "expired:" as a stale transaction; one whose
// nonce starts with Unsettleable passes /verify and fails /settle, as a
// transaction spent elsewhere, or whose funds left, between the two does.
func Token(payer, amount, payTo, nonce string) string {
	return base64.StdEncoding.EncodeToString([]byte(strings.Join([]string{"test-tx", payer, amount, payTo, nonce}, "|")))
}

type requirement struct {
	Scheme            string `json:"scheme"`
	Network           string `json:"network"`
	Amount            string `json:"amount"`
	MaxAmountRequired string `json:"maxAmountRequired"`
	Asset             string `json:"asset"`
	PayTo             string `json:"payTo"`
}

type payload struct {
	Payload struct {
		Transaction string `json:"transaction"`
	} `json:"payload"`
}

type call struct {
	X402Version         int         `json:"x402Version"`
	PaymentPayload      payload     `json:"paymentPayload"`
	PaymentRequirements requirement `json:"paymentRequirements"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var body json.RawMessage
	_ = json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body)
	s.mu.Lock()
	s.calls = append(s.calls, Call{Path: r.URL.Path, Body: body})
	fail, stall := s.Fail, s.Stall
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path == "/supported" {
		json.NewEncoder(w).Encode(map[string]any{"kinds": []map[string]any{
			{"x402Version": 2, "scheme": "exact", "network": "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", "extra": map[string]string{"feePayer": FeePayer}},
			{"x402Version": 2, "scheme": "exact", "network": "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", "extra": map[string]string{"feePayer": FeePayer}},
			{"x402Version": 1, "scheme": "exact", "network": "solana", "extra": map[string]string{"feePayer": FeePayer}},
		}, "extensions": []string{}, "signers": map[string][]string{"solana:*": {FeePayer}}})
		return
	}
	if stall > 0 {
		select {
		case <-time.After(stall):
		case <-r.Context().Done():
			return
		}
	}
	if fail != 0 {
		w.WriteHeader(fail)
		w.Write([]byte(`{"error":"test failure"}`))
		return
	}
	var c call
	if json.Unmarshal(body, &c) != nil {
		w.WriteHeader(400)
		json.NewEncoder(w).Encode(map[string]any{"isValid": false, "invalidReason": "invalid_payload"})
		return
	}
	payer, reason := s.check(c)
	switch r.URL.Path {
	case "/verify":
		json.NewEncoder(w).Encode(map[string]any{"isValid": reason == "", "invalidReason": reason, "payer": payer})
	case "/settle":
		tx := c.PaymentPayload.Payload.Transaction
		s.mu.Lock()
		if reason == "" && (s.settled[tx] || unsettleable(tx)) {
			reason = "invalid_transaction_state" // a transaction lands once
		}
		if reason == "" {
			s.settled[tx] = true
		}
		s.mu.Unlock()
		out := map[string]any{"success": reason == "", "errorReason": reason, "payer": payer, "transaction": "", "network": c.PaymentRequirements.Network}
		if reason == "" {
			out["transaction"] = "sig" + tx[:min(len(tx), 40)]
			out["amount"] = amountOf(c.PaymentRequirements)
		}
		json.NewEncoder(w).Encode(out)
	default:
		http.NotFound(w, r)
	}
}

func unsettleable(tx string) bool {
	raw, _ := base64.StdEncoding.DecodeString(tx)
	parts := strings.Split(string(raw), "|")
	return len(parts) == 5 && strings.HasPrefix(parts[4], Unsettleable)
}

// Settled reports whether transaction tx was settled.
func (s *Server) Settled(tx string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settled[tx]
}

func amountOf(r requirement) string {
	if r.Amount != "" {
		return r.Amount
	}
	return r.MaxAmountRequired
}

// check does what the gateway relies on a facilitator for: the transaction
// pays the requirements' amount to their payee, and is well formed.
func (s *Server) check(c call) (payer, reason string) {
	raw, err := base64.StdEncoding.DecodeString(c.PaymentPayload.Payload.Transaction)
	if err != nil {
		return "", "invalid_payload"
	}
	parts := strings.Split(string(raw), "|")
	switch {
	case strings.HasPrefix(string(raw), "forged:"):
		return "", "invalid_exact_svm_payload_transaction_signature"
	case strings.HasPrefix(string(raw), "expired:"):
		return "", "invalid_transaction_state"
	case len(parts) != 5 || parts[0] != "test-tx":
		return "", "invalid_payload"
	}
	req := c.PaymentRequirements
	switch {
	case parts[2] != amountOf(req):
		return parts[1], "invalid_exact_svm_payload_transaction_amount_mismatch"
	case parts[3] != req.PayTo:
		return parts[1], "invalid_exact_svm_payload_transaction_recipient_mismatch"
	case req.Scheme != "exact":
		return parts[1], "unsupported_scheme"
	}
	return parts[1], ""
}
