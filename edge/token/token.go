// Package token issues and verifies the service's short-lived bearer tokens:
// `v1.<kid>.<claims>.<mac>`, base64url claims signed with HMAC-SHA256 under a
// key chosen by id (so keys rotate: sign with the newest, verify with any
// listed). The edge issues and verifies them; the origin verifies them too.
// Dependency-free, for the WebAssembly edge.
package token

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Scope is the only scope tokens carry.
const Scope = "scan:read"

// Claims are what a token says.
type Claims struct {
	Subject  string `json:"sub"` // random: the token is anonymous
	Scope    string `json:"scope"`
	Audience string `json:"aud"` // the service's base URL
	IssuedAt int64  `json:"iat"`
	Expires  int64  `json:"exp"`
	// Minter is MinterOf the address that asked for the token: opaque to
	// its holder (who can read the claims), the same for every token one
	// address mints, so what tokens may do together (hold monitors) is
	// bounded per address. Never the address itself.
	Minter string `json:"mnt,omitempty"`
}

// MinterOf is the Minter claim of tokens minted by addr: a keyed hash
// (HMAC-SHA256 under secret, 128 bits), so a holder can neither read the
// address back nor test a guess of it.
func MinterOf(secret []byte, addr string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("agentready token minter v1\x00" + addr))
	return "m_" + base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// Key is a signing key with its id.
type Key struct {
	ID     string
	Secret []byte
}

// Keys is an ordered key ring; the first key signs.
type Keys []Key

// ParseKeys reads "kid:secret,kid:secret" (secrets as text, at least 32 bytes).
func ParseKeys(s string) (Keys, error) {
	var ks Keys
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		id, secret, ok := strings.Cut(part, ":")
		if !ok || id == "" || strings.ContainsAny(id, ".") || len(secret) < 32 {
			return nil, fmt.Errorf("token key %q must be kid:secret with a secret of at least 32 characters and no dot in the kid", id)
		}
		ks = append(ks, Key{ID: id, Secret: []byte(secret)})
	}
	if len(ks) == 0 {
		return nil, errors.New("no token keys configured")
	}
	return ks, nil
}

// RandomSubject is a fresh anonymous subject.
func RandomSubject() string {
	b := make([]byte, 12)
	rand.Read(b)
	return "anon_" + hex.EncodeToString(b)
}

func mac(key []byte, msg string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Sign issues a token with the first key.
func (ks Keys) Sign(c Claims) (string, error) {
	if len(ks) == 0 {
		return "", errors.New("no token keys configured")
	}
	b, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	head := "v1." + ks[0].ID + "." + base64.RawURLEncoding.EncodeToString(b)
	return head + "." + mac(ks[0].Secret, head), nil
}

// Errors that verification reports; all mean 401 except ErrScope (403).
var (
	ErrNotBearer   = errors.New("the Authorization header is not Bearer <token>")
	ErrMalformed   = errors.New("malformed token")
	ErrUnknownKey  = errors.New("token signed with an unknown key")
	ErrBadMAC      = errors.New("token signature does not match")
	ErrExpired     = errors.New("token expired")
	ErrAudience    = errors.New("token issued for another service")
	ErrScope       = errors.New("token lacks the scan:read scope")
	ErrNotYetValid = errors.New("token issued in the future")
)

// Verify checks a token for audience at now.
func (ks Keys) Verify(tok, audience string, now time.Time) (*Claims, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 4 || parts[0] != "v1" {
		return nil, ErrMalformed
	}
	var key *Key
	for i := range ks {
		if ks[i].ID == parts[1] {
			key = &ks[i]
		}
	}
	if key == nil {
		return nil, ErrUnknownKey
	}
	if !hmac.Equal([]byte(mac(key.Secret, strings.Join(parts[:3], "."))), []byte(parts[3])) {
		return nil, ErrBadMAC
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, ErrMalformed
	}
	var c Claims
	if json.Unmarshal(raw, &c) != nil || c.Subject == "" {
		return nil, ErrMalformed
	}
	switch {
	case now.Unix() >= c.Expires:
		return nil, ErrExpired
	case c.IssuedAt > now.Add(time.Minute).Unix():
		return nil, ErrNotYetValid
	case c.Audience != audience:
		return nil, ErrAudience
	}
	return &c, nil
}

// Authenticate reads an Authorization header value: the claims of a valid
// bearer token for audience that grants scope. Errors: ErrNotBearer, those of
// Verify, and ErrScope. The edge and the origin both authenticate this way.
func (ks Keys) Authenticate(authorization, audience, scope string, now time.Time) (*Claims, error) {
	scheme, tok, _ := strings.Cut(authorization, " ")
	tok = strings.TrimSpace(tok)
	if !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return nil, ErrNotBearer
	}
	c, err := ks.Verify(tok, audience, now)
	if err != nil {
		return nil, err
	}
	if err := RequireScope(c, scope); err != nil {
		return nil, err
	}
	return c, nil
}

// Challenge is the WWW-Authenticate value for an error code (RFC 6750 §3),
// naming the protected-resource metadata (RFC 9728 §5.1) under base.
func Challenge(base, code string) string {
	return fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource", error="%s", scope="%s"`, base, code, Scope)
}

// RequireScope says whether the token grants scope (OAuth's space-separated
// list). Verify authenticates; each route requires the scope it needs.
func RequireScope(c *Claims, scope string) error {
	for _, s := range strings.Fields(c.Scope) {
		if s == scope {
			return nil
		}
	}
	return ErrScope
}
