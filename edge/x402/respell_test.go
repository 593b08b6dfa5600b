package x402_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/agentready/agentready/edge/x402"
	"github.com/agentready/agentready/internal/testing/facilitator"
)

// A spent transaction re-spelled to look like a new payment: every
// spelling is either the same payment (the same id and the same
// transaction forwarded to the facilitator) or refused before any
// facilitator is asked. Never a new id.
func TestRespellingsAreTheSamePaymentOrRefused(t *testing.T) {
	cfg := x402.Config{PayTo: "PayeeWa11et", FeePayer: "FeePayer"}
	req := cfg.Required("https://scanner.example", "")
	resource := req.Resource.URL
	for _, kind := range []struct {
		name string
		tx   []byte
	}{
		{"a Solana transaction", func() []byte { tx, _ := x402.SolanaTransfer(t, 0x99, 100000, false); return tx }()},
		{"a legacy Solana transaction", func() []byte { tx, _ := x402.SolanaTransfer(t, 0x42, 100000, true); return tx }()},
		{"the test facilitator's token", []byte(facilitator.Token("Payer", "100000", "PayeeWa11et", "n1"))},
	} {
		tx := base64.StdEncoding.EncodeToString(kind.tx)
		junk := base64.StdEncoding.EncodeToString([]byte("another transaction"))
		all := facilitator.Respellings(req, tx, junk)
		var canonical string
		same, refused := 0, 0
		for _, sp := range all {
			var v2, v1 string
			if sp.Header == x402.HeaderSignature {
				v2 = sp.Value
			} else {
				v1 = sp.Value
			}
			p, sent, err := x402.DecodePayment(v2, v1)
			if err == nil && sent {
				err = x402.Check(p, req.Accepts[0], resource)
			}
			if !sp.Same {
				var mm *x402.Mismatch
				if err == nil || !(errors.Is(err, x402.ErrMalformed) || errors.As(err, &mm)) {
					t.Errorf("%s, %s: accepted (err %v)", kind.name, sp.Name, err)
				}
				refused++
				continue
			}
			if err != nil {
				t.Errorf("%s, %s: refused: %v", kind.name, sp.Name, err)
				continue
			}
			id := x402.PaymentID(p, req.Accepts[0].Network)
			if canonical == "" {
				canonical = id
			}
			if id != canonical || !bytes.Equal(p.Transaction, kind.tx) {
				t.Errorf("%s, %s: identified as another payment", kind.name, sp.Name)
			}
			same++
		}
		if same < 5 || refused < 35 {
			t.Errorf("%s: %d spellings the same payment and %d refused; the table lost cases", kind.name, same, refused)
		}
	}
}
