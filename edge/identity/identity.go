// Package identity names callers and their tiers, the vocabulary the edge and
// the origin share. Dependency-free so the WebAssembly edge stays small.
package identity

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
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

// DefaultIPv6Prefix is how many leading bits of an IPv6 address a limit
// keys on: a /64 is the block one subscriber, host or VM usually holds (and
// can pick any of 2^64 addresses in), so keying on the whole address would
// give it that many allowances.
const DefaultIPv6Prefix = 64

// AddressKey is the key under which the limits of the client at address ip
// count: an IPv4 address as it is, an IPv6 address by its first v6Prefix
// bits ("2001:db8:1:2::/64"; v6Prefix outside 1..128 means
// DefaultIPv6Prefix). An IPv4-mapped IPv6 address counts as its IPv4
// address. What is not an address is returned unchanged.
func AddressKey(ip string, v6Prefix int) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return a.String()
	}
	if v6Prefix < 1 || v6Prefix > 128 {
		v6Prefix = DefaultIPv6Prefix
	}
	if v6Prefix == 128 {
		return a.String()
	}
	p, _ := a.Prefix(v6Prefix)
	return p.String()
}

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
	HeaderCallerSig = "X-Agentready-Caller-Sig" // hex HMAC-SHA256 of the identity and the request (identityMAC)
	HeaderClientIP  = "X-Agentready-Client-Ip"  // the client address the edge saw
	HeaderMinter    = "X-Agentready-Minter"     // a token caller's Minter
	HeaderNonce     = "X-Agentready-Nonce"      // random per signature: the origin accepts each once
)

// Headers are the identity headers: only the edge may send them, so a
// client's own are dropped before a request is forwarded.
var Headers = []string{HeaderCaller, HeaderCallerTS, HeaderCallerSig, HeaderClientIP, HeaderMinter, HeaderNonce}

// MaxSkew bounds how old a signed identity may be.
const MaxSkew = 60 * time.Second

// Request is what a signature covers of the request it travels with: the
// method, the path as the origin routes it (canonical), the query string
// as sent, and the body. A signature is good for that request only, so
// headers captured on their way to one origin buy nothing else: not
// another query (fresh=1), not another body.
type Request struct {
	Method, Path, Query string
	Body                []byte
}

// identityMAC signs the identity and the request. The message is of its
// own form ("v3|…"), so no earlier form can be read as it, and an edge and
// an origin must run the same release.
func identityMAC(secret []byte, caller, ts, nonce, ip, minter string, r Request) string {
	body := sha256.Sum256(r.Body)
	m := hmac.New(sha256.New, secret)
	// Each field length-prefixed: a query holding the separator cannot
	// pass for another split of path and query.
	for _, f := range []string{"v3", caller, ts, nonce, r.Method, r.Path, r.Query, hex.EncodeToString(body[:]), ip, minter} {
		m.Write([]byte(strconv.Itoa(len(f)) + ":" + f))
	}
	return hex.EncodeToString(m.Sum(nil))
}

// Sign returns the identity headers for one forwarded request.
func Sign(secret []byte, c Caller, ip string, r Request, now time.Time) map[string]string {
	caller := string(c.Tier) + ":" + c.Subject
	ts := strconv.FormatInt(now.Unix(), 10)
	var n [16]byte
	rand.Read(n[:])
	nonce := hex.EncodeToString(n[:])
	h := map[string]string{HeaderCaller: caller, HeaderCallerTS: ts, HeaderClientIP: ip, HeaderNonce: nonce,
		HeaderCallerSig: identityMAC(secret, caller, ts, nonce, ip, c.Minter, r)}
	if c.Minter != "" {
		h[HeaderMinter] = c.Minter
	}
	return h
}

// Verify checks identity headers (get reads a header) against the request
// they came with, and returns the caller and client address the edge
// vouched for, and the nonce the caller must see only once (Replays).
func Verify(secret []byte, get func(string) string, r Request, now time.Time) (c Caller, ip, nonce string, ok bool) {
	caller, ts, sig, minter := get(HeaderCaller), get(HeaderCallerTS), get(HeaderCallerSig), get(HeaderMinter)
	ip, nonce = get(HeaderClientIP), get(HeaderNonce)
	if len(secret) == 0 || caller == "" || sig == "" || len(nonce) != 32 {
		return Caller{}, "", "", false
	}
	n, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || now.Sub(time.Unix(n, 0)).Abs() > MaxSkew {
		return Caller{}, "", "", false
	}
	if !hmac.Equal([]byte(identityMAC(secret, caller, ts, nonce, ip, minter, r)), []byte(sig)) {
		return Caller{}, "", "", false
	}
	tier, subject, found := strings.Cut(caller, ":")
	if !found {
		return Caller{}, "", "", false
	}
	return Caller{Tier: Tier(tier), Subject: subject, Minter: minter}, ip, nonce, true
}
