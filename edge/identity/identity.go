// Package identity names callers and their tiers, the vocabulary the edge and
// the origin share. Dependency-free so the WebAssembly edge stays small.
package identity

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// Tier is what a caller's allowance depends on.
type Tier string

const (
	Anonymous Tier = "anonymous" // no credentials: keyed by client IP
	Token     Tier = "token"     // anonymous OAuth client-credentials token: keyed by its subject
	APIKey    Tier = "key"       // an API key: keyed by the key's name
)

// Caller is who is asking.
type Caller struct {
	Tier    Tier
	Subject string // IP address, token subject or key name
	// Minter, for a token, is the opaque keyed hash of the address that
	// minted it (token.Claims.Minter): what the monitors of every token one
	// address minted count against. Empty for other tiers.
	Minter string
}

// Key is the rate-limit key of the caller.
func (c Caller) Key() string { return string(c.Tier) + ":" + c.Subject }

// Allowances are daily scan allowances per tier.
type Allowances struct {
	Anonymous, Token, APIKey int
}

// DefaultAllowances are the documented defaults (AGENTREADY_FREE_DAILY, …_TOKEN_DAILY, …_KEY_DAILY).
var DefaultAllowances = Allowances{Anonymous: 20, Token: 100, APIKey: 5000}

// For returns the allowance of a tier.
func (a Allowances) For(t Tier) int {
	switch t {
	case Token:
		return a.Token
	case APIKey:
		return a.APIKey
	}
	return a.Anonymous
}

// Headers the edge sets on requests it forwards to the origin. The origin
// accepts them only with a valid signature from the shared secret, so a
// client cannot claim a tier by sending them itself.
const (
	HeaderCaller    = "X-Agentready-Caller"     // tier:subject
	HeaderCallerTS  = "X-Agentready-Caller-Ts"  // unix seconds
	HeaderCallerSig = "X-Agentready-Caller-Sig" // hex HMAC-SHA256(secret, caller|ts|method|path|ip, see identityMAC)
	HeaderClientIP  = "X-Agentready-Client-Ip"  // the client address the edge saw
	HeaderMinter    = "X-Agentready-Minter"     // a token caller's Minter
)

// Headers are the identity headers: only the edge may send them, so a
// client's own are dropped before a request is forwarded.
var Headers = []string{HeaderCaller, HeaderCallerTS, HeaderCallerSig, HeaderClientIP, HeaderMinter}

// MaxSkew bounds how old a signed identity may be.
const MaxSkew = 60 * time.Second

// identityMAC signs the identity. A minter is signed in a message of its
// own form ("v2|…|minter"): an identity without one signs as it always did,
// so an edge and an origin of different releases still agree, and neither
// form can be read as the other.
func identityMAC(secret []byte, caller, ts, method, path, ip, minter string) string {
	msg := caller + "|" + ts + "|" + method + "|" + path + "|" + ip
	if minter != "" {
		msg = "v2|" + msg + "|" + minter
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

// Sign returns the identity headers for one forwarded request.
func Sign(secret []byte, c Caller, ip, method, path string, now time.Time) map[string]string {
	caller := string(c.Tier) + ":" + c.Subject
	ts := strconv.FormatInt(now.Unix(), 10)
	h := map[string]string{HeaderCaller: caller, HeaderCallerTS: ts, HeaderClientIP: ip, HeaderCallerSig: identityMAC(secret, caller, ts, method, path, ip, c.Minter)}
	if c.Minter != "" {
		h[HeaderMinter] = c.Minter
	}
	return h
}

// Verify checks identity headers (get reads a header) and returns the caller
// and client address the edge vouched for.
func Verify(secret []byte, get func(string) string, method, path string, now time.Time) (Caller, string, bool) {
	caller, ts, sig, ip, minter := get(HeaderCaller), get(HeaderCallerTS), get(HeaderCallerSig), get(HeaderClientIP), get(HeaderMinter)
	if len(secret) == 0 || caller == "" || sig == "" {
		return Caller{}, "", false
	}
	n, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || now.Sub(time.Unix(n, 0)).Abs() > MaxSkew {
		return Caller{}, "", false
	}
	if !hmac.Equal([]byte(identityMAC(secret, caller, ts, method, path, ip, minter)), []byte(sig)) {
		return Caller{}, "", false
	}
	tier, subject, ok := strings.Cut(caller, ":")
	if !ok {
		return Caller{}, "", false
	}
	return Caller{Tier: Tier(tier), Subject: subject, Minter: minter}, ip, true
}
