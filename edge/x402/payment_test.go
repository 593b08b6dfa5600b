package x402

import (
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
	v2 := b64(map[string]any{"x402Version": 2, "accepted": map[string]any{"scheme": "exact"}, "payload": map[string]string{"transaction": "dHg="}})
	v1 := b64(map[string]any{"x402Version": 1, "scheme": "exact", "network": "solana", "payload": map[string]string{"transaction": "dHg="}})
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
		{"base64url", "", strings.TrimRight(strings.NewReplacer("+", "-", "/", "_").Replace(v1), "="), true, "", 1},
		{"not base64", "%%%", "", true, "not base64", 0},
		{"not JSON", base64.StdEncoding.EncodeToString([]byte("nope")), "", true, "not a JSON", 0},
		{"v1 payload in the v2 header", v1, "", true, "x402Version 1 in the header of version 2", 0},
		{"no payload", b64(map[string]any{"x402Version": 2}), "", true, "no payload", 0},
		{"huge", strings.Repeat("A", 20000), "", true, "longer than", 0},
	} {
		p, _, sent, err := DecodePayment(c.v2, c.v1)
		switch {
		case sent != c.sent:
			t.Errorf("%s: sent=%v", c.name, sent)
		case c.err != "" && (err == nil || !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: err %v, want %q", c.name, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err == "" && sent && p.X402Version != c.version:
			t.Errorf("%s: version %d", c.name, p.X402Version)
		}
	}
}

func TestCheck(t *testing.T) {
	cfg := Config{PayTo: "Payee", FeePayer: "FacilitatorFeePayer"}
	req := cfg.Requirement()
	res := "https://scanner.example" + GatewayPath
	good := Payload{X402Version: 2, Accepted: &req, Resource: &Resource{URL: res}}
	if err := Check(good, req, res); err != nil {
		t.Fatalf("a payment of the requirements: %v", err)
	}
	mutate := func(f func(r *Requirement)) Payload {
		r := req
		r.Extra = map[string]string{"feePayer": req.Extra["feePayer"]}
		f(&r)
		return Payload{X402Version: 2, Accepted: &r, Resource: &Resource{URL: res}}
	}
	// What the official client sends (@x402/core copies the 402's resource
	// and the requirement it chose) passes, description and all.
	issued := cfg.Required("https://scanner.example", "")
	official := Payload{X402Version: 2, Accepted: &issued.Accepts[0], Resource: &issued.Resource}
	if err := Check(official, req, res); err != nil {
		t.Errorf("the official client's payment: %v", err)
	}
	for _, c := range []struct {
		name   string
		p      Payload
		reason string
	}{
		{"amount", mutate(func(r *Requirement) { r.Amount = "1" }), "invalid_payment_requirements"},
		{"payee", mutate(func(r *Requirement) { r.PayTo = "Mallory" }), "invalid_payment_requirements"},
		{"asset", mutate(func(r *Requirement) { r.Asset = "Other" }), "invalid_payment_requirements"},
		{"network", mutate(func(r *Requirement) { r.Network = SolanaDevnet }), "invalid_network"},
		{"scheme", mutate(func(r *Requirement) { r.Scheme = "upto" }), "invalid_scheme"},
		{"resource", Payload{X402Version: 2, Accepted: &req, Resource: &Resource{URL: "https://elsewhere.example/x"}}, "invalid_payment_requirements"},
		{"no resource", Payload{X402Version: 2, Accepted: &req}, "invalid_payment_requirements"},
		{"a resource without its url", Payload{X402Version: 2, Accepted: &req, Resource: &Resource{Description: "elsewhere"}}, "invalid_payment_requirements"},
		{"another fee payer", mutate(func(r *Requirement) { r.Extra["feePayer"] = "Mallory" }), "invalid_payment_requirements"},
		{"no fee payer", mutate(func(r *Requirement) { r.Extra = nil }), "invalid_payment_requirements"},
		{"another timeout", mutate(func(r *Requirement) { r.MaxTimeoutSeconds = 86400 }), "invalid_payment_requirements"},
		{"no timeout", mutate(func(r *Requirement) { r.MaxTimeoutSeconds = 0 }), "invalid_payment_requirements"},
		{"no accepted", Payload{X402Version: 2}, "invalid_payment_requirements"},
		{"v1 network", Payload{X402Version: 1, Scheme: "exact", Network: "base"}, "invalid_network"},
		{"version 3", Payload{X402Version: 3}, "invalid_x402_version"},
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

// FuzzDecodePayment: any header pair gets an answer, never a panic, and a
// decoded payment always carries a payload and the header's version.
func FuzzDecodePayment(f *testing.F) {
	f.Add(b64(map[string]any{"x402Version": 2, "payload": map[string]string{"transaction": "x"}}), "")
	f.Add("", b64(map[string]any{"x402Version": 1, "scheme": "exact", "network": "solana", "payload": map[string]string{}}))
	f.Add("e30=", "")
	f.Fuzz(func(t *testing.T, v2, v1 string) {
		p, raw, sent, err := DecodePayment(v2, v1)
		if err != nil || !sent {
			return
		}
		if len(p.Payload) == 0 || len(raw) == 0 || (p.X402Version != 1 && p.X402Version != 2) {
			t.Fatalf("accepted a payment without a payload or version: %+v", p)
		}
	})
}
