package webhook_test

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/webhook"
)

// FuzzVerify feeds arbitrary signature headers and bodies to Verify and
// Parse: no panic; every refusal wraps exactly one sentinel and repeats
// neither the secret nor its key; nothing verifies unless it carries the
// real signature of that body; and whatever Sign produces verifies, by each
// scheme alone, at any time within the window, and stops verifying when the
// body changes.
func FuzzVerify(f *testing.F) {
	f.Add(vecScanner, vecStd, vecID, "1614265330", []byte(vecBody), int64(0))
	f.Add("t=1614265330,v0=ab,v1="+strings.Repeat("0", 64)+",v1=", "v1a,AAAA v1,"+strings.Repeat("A", 43)+"=", "evt_x", "1614265330", []byte("{}"), int64(300))
	f.Add("", "", "", "", []byte(nil), int64(-300))
	f.Add("t=,v1=", "v1,", "a.b", "-1", []byte("x"), int64(301))
	f.Add(" t = 1 , v1 = zz ", "  ", "evt_"+strings.Repeat("a", 300), "99999999999999999999", []byte(`{"id":"evt_x","type":"t"}`), int64(-301))

	sentinels := []error{webhook.ErrNoSignature, webhook.ErrMalformed, webhook.ErrExpired, webhook.ErrMismatch, webhook.ErrSecret}
	now := time.Unix(vecTime, 0)
	f.Fuzz(func(t *testing.T, sig, std, id, ts string, body []byte, skew int64) {
		h := http.Header{}
		if sig != "" {
			h.Set(webhook.HeaderSignature, sig)
		}
		if std != "" {
			h.Set(webhook.HeaderStdSignature, std)
		}
		if id != "" {
			h.Set(webhook.HeaderID, id)
		}
		if ts != "" {
			h.Set(webhook.HeaderTimestamp, ts)
		}
		err := webhook.Verify(vecSecret, h, body, now)
		if err != nil {
			n := 0
			for _, s := range sentinels {
				if errors.Is(err, s) {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("error wraps %d sentinels: %v", n, err)
			}
			if msg := err.Error(); strings.Contains(msg, vecSecret) || strings.Contains(msg, strings.TrimPrefix(vecSecret, "whsec_")) {
				t.Fatalf("error repeats the secret: %s", msg)
			}
		} else if sig != "" {
			// Accepted by X-Scanner-Signature: it must hold the MAC of
			// "<its t>.<body>"; anything else would be a forgery.
			if !strings.Contains(sig, scannerHexFor(sig, body)) {
				t.Fatalf("X-Scanner-Signature verified without the body's MAC: %q", sig)
			}
		} else {
			n, perr := strconv.ParseInt(ts, 10, 64)
			if perr != nil || !strings.Contains(std, stdB64(t, vecSecret, id, n, body)) {
				t.Fatalf("webhook-signature verified without the body's MAC: %q", std)
			}
		}
		if _, perr := webhook.Parse(vecSecret, h, body, now); err != nil && perr == nil {
			t.Fatal("Parse accepted what Verify refused")
		}

		// Round trip with an id Sign accepts.
		if id == "" || len(id) > 256 || strings.IndexFunc(id, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
		}) >= 0 {
			id = "evt_fuzz"
		}
		at := now.Add(time.Duration(skew%301) * time.Second) // within ±Tolerance of now
		sh, err := webhook.Sign(vecSecret, id, at, body)
		if err != nil {
			t.Fatalf("Sign: %v", err)
		}
		for _, hh := range []http.Header{sh, only(sh, true), only(sh, false)} {
			if err := webhook.Verify(vecSecret, hh, body, now); err != nil {
				t.Fatalf("Sign's own output refused (%d headers): %v", len(hh), err)
			}
			if err := webhook.Verify(vecSecret, hh, append(body[:len(body):len(body)], '!'), now); !errors.Is(err, webhook.ErrMismatch) {
				t.Fatalf("a changed body: %v", err)
			}
		}
	})
}

// scannerHexFor is the v1 of body for the t= the header names (the first
// one), or "" when it names none.
func scannerHexFor(header string, body []byte) string {
	for _, item := range strings.Split(header, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(item), "t="); ok {
			return hmacHex(vecSecret, v+"."+string(body))
		}
	}
	return "\x00no t="
}
