package token

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSignVerifyRotate(t *testing.T) {
	old, _ := ParseKeys("k1:" + strings.Repeat("a", 32))
	now := time.Unix(1_800_000_000, 0)
	c := Claims{Subject: RandomSubject(), Scope: Scope, Audience: "https://ar.example", IssuedAt: now.Unix(), Expires: now.Add(time.Hour).Unix()}
	tok, err := old.Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	rotated, _ := ParseKeys("k2:" + strings.Repeat("b", 32) + ",k1:" + strings.Repeat("a", 32))
	if got, err := rotated.Verify(tok, "https://ar.example", now); err != nil || got.Subject != c.Subject {
		t.Fatalf("after rotation the old key still verifies: %v", err)
	}
	newTok, _ := rotated.Sign(c)
	if !strings.HasPrefix(newTok, "v1.k2.") {
		t.Error("the first key signs")
	}
	other, _ := ParseKeys("k1:" + strings.Repeat("x", 32))
	parts := strings.Split(tok, ".")
	tampered := parts[0] + "." + parts[1] + "." + parts[2] + "x." + parts[3]
	for name, tc := range map[string]struct {
		ks  Keys
		tok string
		aud string
		at  time.Time
		err error
	}{
		"expired":        {old, tok, "https://ar.example", now.Add(2 * time.Hour), ErrExpired},
		"other audience": {old, tok, "https://evil.example", now, ErrAudience},
		"other key":      {other, tok, "https://ar.example", now, ErrBadMAC},
		"unknown kid":    {Keys{{ID: "k9", Secret: []byte(strings.Repeat("a", 32))}}, tok, "https://ar.example", now, ErrUnknownKey},
		"tampered":       {old, tampered, "https://ar.example", now, ErrBadMAC},
		"garbage":        {old, "not-a-token", "https://ar.example", now, ErrMalformed},
	} {
		if _, err := tc.ks.Verify(tc.tok, tc.aud, tc.at); !errors.Is(err, tc.err) {
			t.Errorf("%s: %v, want %v", name, err, tc.err)
		}
	}
	if _, err := ParseKeys("k:short"); err == nil {
		t.Error("short secrets are refused")
	}
}

func FuzzVerify(f *testing.F) {
	ks, _ := ParseKeys("k1:" + strings.Repeat("a", 32))
	good, _ := ks.Sign(Claims{Subject: "s", Scope: Scope, Audience: "a", Expires: 1 << 40})
	f.Add(good)
	f.Add("v1.k1.e30.x")
	f.Fuzz(func(t *testing.T, tok string) {
		if c, err := ks.Verify(tok, "a", time.Unix(0, 0)); err == nil && tok != good && c.Subject != "s" {
			t.Fatalf("forged token accepted: %q", tok)
		}
	})
}

func TestRequireScope(t *testing.T) {
	for scope, ok := range map[string]bool{Scope: true, "monitors:write " + Scope: true, "monitors:write": false, "": false, "scan:readx": false} {
		if err := RequireScope(&Claims{Scope: scope}, Scope); (err == nil) != ok {
			t.Errorf("scope %q: %v", scope, err)
		}
	}
}

func TestAuthenticate(t *testing.T) {
	ks, _ := ParseKeys("k1:0123456789abcdef0123456789abcdef")
	now := time.Now()
	good, _ := ks.Sign(Claims{Subject: "s", Scope: Scope, Audience: "a", IssuedAt: now.Unix(), Expires: now.Add(time.Hour).Unix()})
	other, _ := ks.Sign(Claims{Subject: "s", Scope: "monitors:write", Audience: "a", IssuedAt: now.Unix(), Expires: now.Add(time.Hour).Unix()})
	for header, want := range map[string]error{
		"Bearer " + good:  nil,
		"bearer " + good:  nil,
		"Basic " + good:   ErrNotBearer,
		"Bearer ":         ErrNotBearer,
		"Bearer " + other: ErrScope,
		"Bearer x.y":      ErrMalformed,
	} {
		c, err := ks.Authenticate(header, "a", Scope, now)
		if !errors.Is(err, want) || (want == nil && c.Subject != "s") {
			t.Errorf("%q: %v, want %v", header, err, want)
		}
	}
}

// The minter claim is a keyed hash: stable per address and key, different
// for another address or key, and never the address.
func TestMinterOf(t *testing.T) {
	k1, k2 := []byte(strings.Repeat("a", 32)), []byte(strings.Repeat("b", 32))
	a := MinterOf(k1, "203.0.113.7")
	if a != MinterOf(k1, "203.0.113.7") || a == MinterOf(k1, "203.0.113.8") || a == MinterOf(k2, "203.0.113.7") {
		t.Error("MinterOf is not a keyed function of the address")
	}
	if strings.Contains(a, "203") || len(a) != len("m_")+22 {
		t.Errorf("minter %q", a)
	}
	ks, _ := ParseKeys("k1:" + string(k1))
	now := time.Unix(1_800_000_000, 0)
	tok, _ := ks.Sign(Claims{Subject: "s", Scope: Scope, Audience: "a", Expires: now.Add(time.Hour).Unix(), Minter: a})
	if c, err := ks.Verify(tok, "a", now); err != nil || c.Minter != a {
		t.Errorf("the minter does not survive a round trip: %+v %v", c, err)
	}
}
