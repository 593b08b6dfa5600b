package x402

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func b64(v any) string {
	b, _ := json.Marshal(v)
	return base64.StdEncoding.EncodeToString(b)
}

func TestDecodePayment(t *testing.T) {
	payload := map[string]string{"transaction": "dHg="}
	v2 := b64(map[string]any{"x402Version": 2, "accepted": map[string]any{"scheme": "exact"}, "payload": payload})
	v1 := b64(map[string]any{"x402Version": 1, "scheme": "exact", "network": "solana", "payload": payload})
	raw := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, c := range []struct {
		name, v2, v1 string
		sent         bool
		err          string
		version      int
	}{
		{"none", "", "", false, "", 0},
		{"v2", v2, "", true, "", 2},
		{"v1", "", v1, true, "", 1},
		{"v2 wins over v1", v2, v1, true, "", 2},
		{"v2 with extensions", b64(map[string]any{"x402Version": 2, "extensions": map[string]any{"x": 1}, "payload": payload}), "", true, "", 2},
		{"base64url", "", strings.TrimRight(strings.NewReplacer("+", "-", "/", "_").Replace(v1), "="), true, "not standard base64", 0},
		{"not base64", "%%%", "", true, "not standard base64", 0},
		{"base64 with a line break", v2[:8] + "\n" + v2[8:], "", true, "not standard base64", 0},
		{"not JSON", raw("nope"), "", true, "not a JSON", 0},
		{"v1 payload in the v2 header", v1, "", true, "x402Version 1 in the header of version 2", 0},
		{"no payload", b64(map[string]any{"x402Version": 2}), "", true, "no payload", 0},
		{"payload without a transaction", b64(map[string]any{"x402Version": 2, "payload": map[string]any{}}), "", true, "payload.transaction is missing", 0},
		{"an EVM payload", b64(map[string]any{"x402Version": 2, "payload": map[string]any{"signature": "0x1", "authorization": map[string]any{}}}), "", true, "payload has a member", 0},
		{"a member v1 does not define", "", b64(map[string]any{"x402Version": 1, "scheme": "exact", "network": "solana", "accepted": map[string]any{"network": "x"}, "payload": payload}), true, "the payment has a member", 0},
		{"a member in another case", raw(`{"x402Version":2,"Payload":{"transaction":"dHg="}}`), "", true, "the payment has a member", 0},
		{"one member twice", raw(`{"x402Version":2,"payload":{"transaction":"dHg="},"payload":{"transaction":"eHg="}}`), "", true, "names one member twice", 0},
		{"one member twice in two cases", raw(`{"x402Version":2,"payload":{"transaction":"dHg="},"PAYLOAD":{"transaction":"eHg="}}`), "", true, "names one member twice", 0},
		{"a nested member twice", raw(`{"x402Version":2,"payload":{"transaction":"dHg=","Transaction":"eHg="}}`), "", true, "names one member twice", 0},
		{"a transaction with a space", b64(map[string]any{"x402Version": 2, "payload": map[string]string{"transaction": "dHg= "}}), "", true, "payload.transaction is not standard base64", 0},
		{"a transaction with extra padding", b64(map[string]any{"x402Version": 2, "payload": map[string]string{"transaction": "dHg=="}}), "", true, "payload.transaction is not standard base64", 0},
		{"a transaction in base64url", b64(map[string]any{"x402Version": 2, "payload": map[string]string{"transaction": "-_8="}}), "", true, "payload.transaction is not standard base64", 0},
		{"a transaction with stray bits", b64(map[string]any{"x402Version": 2, "payload": map[string]string{"transaction": "dHh="}}), "", true, "payload.transaction is not standard base64", 0},
		{"huge", strings.Repeat("A", 20000), "", true, "longer than", 0},
	} {
		p, sent, err := DecodePayment(c.v2, c.v1)
		switch {
		case sent != c.sent:
			t.Errorf("%s: sent=%v", c.name, sent)
		case c.err != "" && (err == nil || !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: err %v, want %q", c.name, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err == "" && sent && (p.X402Version != c.version || string(p.Transaction) != "tx"):
			t.Errorf("%s: version %d, transaction %q", c.name, p.X402Version, p.Transaction)
		}
	}
}

func TestCheck(t *testing.T) {
	cfg := Config{PayTo: "Payee", FeePayer: "FacilitatorFeePayer"}
	req := cfg.Requirement()
	res := "https://scanner.example" + GatewayPath
	good := Payment{X402Version: 2, Accepted: &req, Resource: &Resource{URL: res}}
	if err := Check(good, req, res); err != nil {
		t.Fatalf("a payment of the requirements: %v", err)
	}
	mutate := func(f func(r *Requirement)) Payment {
		r := req
		r.Extra = map[string]string{"feePayer": req.Extra["feePayer"]}
		f(&r)
		return Payment{X402Version: 2, Accepted: &r, Resource: &Resource{URL: res}}
	}
	// What the official client sends (@x402/core copies the 402's resource
	// and the requirement it chose) passes, description and all.
	issued := cfg.Required("https://scanner.example", "")
	official := Payment{X402Version: 2, Accepted: &issued.Accepts[0], Resource: &issued.Resource}
	if err := Check(official, req, res); err != nil {
		t.Errorf("the official client's payment: %v", err)
	}
	for _, c := range []struct {
		name   string
		p      Payment
		reason string
	}{
		{"amount", mutate(func(r *Requirement) { r.Amount = "1" }), "invalid_payment_requirements"},
		{"payee", mutate(func(r *Requirement) { r.PayTo = "Mallory" }), "invalid_payment_requirements"},
		{"asset", mutate(func(r *Requirement) { r.Asset = "Other" }), "invalid_payment_requirements"},
		{"network", mutate(func(r *Requirement) { r.Network = SolanaDevnet }), "invalid_network"},
		{"scheme", mutate(func(r *Requirement) { r.Scheme = "upto" }), "invalid_scheme"},
		{"resource", Payment{X402Version: 2, Accepted: &req, Resource: &Resource{URL: "https://elsewhere.example/x"}}, "invalid_payment_requirements"},
		{"no resource", Payment{X402Version: 2, Accepted: &req}, "invalid_payment_requirements"},
		{"a resource without its url", Payment{X402Version: 2, Accepted: &req, Resource: &Resource{Description: "elsewhere"}}, "invalid_payment_requirements"},
		{"another fee payer", mutate(func(r *Requirement) { r.Extra["feePayer"] = "Mallory" }), "invalid_payment_requirements"},
		{"no fee payer", mutate(func(r *Requirement) { r.Extra = nil }), "invalid_payment_requirements"},
		{"another timeout", mutate(func(r *Requirement) { r.MaxTimeoutSeconds = 86400 }), "invalid_payment_requirements"},
		{"no timeout", mutate(func(r *Requirement) { r.MaxTimeoutSeconds = 0 }), "invalid_payment_requirements"},
		{"no accepted", Payment{X402Version: 2}, "invalid_payment_requirements"},
		{"v1 network", Payment{X402Version: 1, Scheme: "exact", Network: "base"}, "invalid_network"},
		{"version 3", Payment{X402Version: 3}, "invalid_x402_version"},
	} {
		err := Check(c.p, req, res)
		var m *Mismatch
		if !errors.As(err, &m) || m.Reason != c.reason {
			t.Errorf("%s: %v, want %s", c.name, err, c.reason)
			continue
		}
		// The message names the field at fault.
		for field, in := range map[string]string{"fee payer": "extra.feePayer", "timeout": "maxTimeoutSeconds", "resource": "resource"} {
			if strings.Contains(c.name, field) && !strings.Contains(m.Detail, in) {
				t.Errorf("%s: the message does not name %s: %s", c.name, in, m.Detail)
			}
		}
		// The message names what is asked for, never the value sent.
		for _, sent := range []string{"Mallory", "Other", "upto", "elsewhere", "\"1\"", "86400"} {
			if strings.Contains(m.Detail, sent) {
				t.Errorf("%s: the message echoes the sent value %q: %s", c.name, sent, m.Detail)
			}
		}
	}
	if got := (Config{Price: "2500000"}).PriceUSDC(); got != "2.50" {
		t.Errorf("PriceUSDC 2500000 = %s", got)
	}
	if got := (Config{}).PriceUSDC(); got != "0.10" {
		t.Errorf("PriceUSDC default = %s", got)
	}
}

// FuzzDecodePayment: any header pair gets an answer, never a panic; a
// payment read carries its version and a transaction, and what is
// forwarded to the facilitator, read back by a case-sensitive reader, is
// that transaction and nothing else: the id and the facilitator can never
// see two payments in one header.
func FuzzDecodePayment(f *testing.F) {
	f.Add(b64(map[string]any{"x402Version": 2, "payload": map[string]string{"transaction": "eA=="}}), "")
	f.Add("", b64(map[string]any{"x402Version": 1, "scheme": "exact", "network": "solana", "payload": map[string]string{"transaction": "eHk="}}))
	f.Add("e30=", "")
	f.Add(base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"payload":{"transaction":"eA=="},"PAYLOAD":{"transaction":"eQ=="}}`)), "")
	f.Fuzz(func(t *testing.T, v2, v1 string) {
		p, sent, err := DecodePayment(v2, v1)
		if err != nil || !sent {
			return
		}
		if len(p.Transaction) == 0 || (p.X402Version != 1 && p.X402Version != 2) {
			t.Fatalf("accepted a payment without a transaction or version: %+v", p)
		}
		req := Config{PayTo: "Payee"}.Requirement()
		fwd := p.Forward(req, Resource{URL: "https://scanner.example" + GatewayPath})
		var back struct {
			X402Version int `json:"x402Version"`
			Payload     map[string]string
		}
		if json.Unmarshal(fwd, &back) != nil || back.X402Version != p.X402Version || len(back.Payload) != 1 {
			t.Fatalf("forwarded %s", fwd)
		}
		tx, err := base64.StdEncoding.DecodeString(back.Payload["transaction"])
		if err != nil || PaymentID(Payment{Transaction: tx}, req.Network) != PaymentID(p, req.Network) {
			t.Fatalf("the facilitator is sent another transaction than the one identified")
		}
	})
}

// FuzzDuplicateNames: the strict reader never panics, and a JSON object
// given a second member whose name is an existing one in other letters is
// always refused, however deep the original nests.
func FuzzDuplicateNames(f *testing.F) {
	f.Add([]byte(`{"payload":{"transaction":"eA=="}}`))
	f.Add([]byte(`{"a":[{"b":1},{"B":2}],"c":{"d":{"e":null}}}`))
	f.Add([]byte(`{"\u017fcheme":"exact"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = noDuplicateNames(b)
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil || len(m) == 0 {
			return
		}
		for k := range m {
			twin, _ := json.Marshal(strings.ToUpper(k))
			if strings.ToUpper(k) == k {
				twin, _ = json.Marshal(strings.ToLower(k))
			}
			if string(twin) == `"`+k+`"` || strings.ToLower(k) == strings.ToUpper(k) {
				continue // a name without letters has no twin
			}
			doubled := append(append([]byte(`{`), twin...), []byte(`:0,`)...)
			doubled = append(doubled, bytes.TrimLeft(b, " \t\r\n")[1:]...)
			if noDuplicateNames(doubled) == nil {
				t.Fatalf("accepted %q, which names %q twice", doubled, k)
			}
			break
		}
	})
}

// BenchmarkReadPayment: what the gateway does with a payment header before
// it asks the facilitator anything: the strict read, the terms, the id and
// the payload it forwards (a real Solana transfer, v2).
func BenchmarkReadPayment(b *testing.B) {
	tx, _ := solanaTransfer(b, 0x99, 100000, false)
	cfg := Config{PayTo: "PayeeWa11et", FeePayer: "FeePayer"}
	req := cfg.Required("https://scanner.example", "")
	h := b64(map[string]any{"x402Version": 2, "resource": req.Resource, "accepted": req.Accepts[0],
		"payload": map[string]string{"transaction": base64.StdEncoding.EncodeToString(tx)}})
	b.ReportAllocs()
	for range b.N {
		p, _, err := DecodePayment(h, "")
		if err != nil || Check(p, req.Accepts[0], req.Resource.URL) != nil {
			b.Fatal(err)
		}
		_ = PaymentID(p, req.Accepts[0].Network)
		_ = p.Forward(req.Accepts[0], req.Resource)
	}
}
