package edge

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/edge/identity"
	"github.com/agentready/agentready/edge/token"
	"github.com/agentready/agentready/edge/x402"
)

// Decision is one rate-limit answer (GCRA, as redis_rate gives it).
type Decision struct {
	Allowed    bool
	Limit      int
	Remaining  int
	RetryAfter time.Duration
	ResetAfter time.Duration
}

// Platform is what the runtime provides. Adapters implement it per build:
// natively (tests, self-hosting), through wazero host functions, and on
// Cloudflare Workers.
type Platform interface {
	Now() time.Time
	// Allow takes n events from key's allowance of limit per period.
	Allow(ctx context.Context, key string, limit int, period time.Duration, n int) (Decision, error)
	// Fetch makes a buffered request to the origin (r.URL is a path with query).
	Fetch(ctx context.Context, r *http.Request) (*http.Response, error)
	// Forward streams r to the origin with extra request headers, adding respHeaders to its answer.
	Forward(w http.ResponseWriter, r *http.Request, reqHeaders, respHeaders http.Header)
	// CacheGet and CachePut keep small responses at the edge.
	CacheGet(key string) ([]byte, bool)
	CachePut(key string, val []byte, ttl time.Duration)
	// ClientIP is the address of the caller as the platform saw it.
	ClientIP(r *http.Request) string
}

// APIKey is a configured key: a name and the SHA-256 of the key.
type APIKey struct {
	Name string
	Hash [32]byte
}

// Config is the edge's configuration, from environment variables and secrets.
type Config struct {
	BaseURL           string              // public base URL; default: from each request's Host
	TokenKeys         token.Keys          // AGENTREADY_TOKEN_KEYS
	TokenTTL          time.Duration       // 1 h
	APIKeys           []APIKey            // AGENTREADY_API_KEYS = name:sha256hex,…
	IdentitySecret    []byte              // AGENTREADY_EDGE_SECRET, shared with the origin
	Allowances        identity.Allowances // AGENTREADY_FREE_DAILY, _TOKEN_DAILY, _KEY_DAILY
	TokenMintsPerHour int                 // per client address (AGENTREADY_TOKEN_MINTS_HOURLY, 10)
	BadgeDaily        int                 // badge requests that reach the origin, per address a day (500)
	// IPv6Prefix is how much of an IPv6 client address every per-address
	// limit keys on (AGENTREADY_IPV6_PREFIX, 64; 128 for the whole address).
	IPv6Prefix int
	Payment    x402.Config // AGENTREADY_PAYTO
}

// MaxAPIKeyName is the longest name an API key may have.
const MaxAPIKeyName = 64

// APIKeyNameRule is CheckAPIKeyName's rule in words.
const APIKeyNameRule = "1 to 64 letters, digits, '.', '_', '-' or '@', starting with a letter or digit"

// CheckAPIKeyName says why name cannot name an API key, or nil:
// APIKeyNameRule (MaxAPIKeyName characters at most). It is the one rule of
// `agentready keygen` and of AGENTREADY_API_KEYS (ParseAPIKeys): the name
// is the entry's part before the ':' of a comma-separated list, the
// caller's subject in the identity header the edge signs, in the audit log
// and in the allowance's key, so it holds no separator, space or control
// character.
func CheckAPIKeyName(name string) error {
	const rule = "use " + APIKeyNameRule + " (e.g. acme-ci)"
	switch {
	case name == "":
		return fmt.Errorf("an API key needs a name: %s", rule)
	case len(name) > MaxAPIKeyName:
		return fmt.Errorf("the API key name %.20q… is %d characters long: %s", name, len(name), rule)
	}
	n := 0
	for _, r := range name {
		n++
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if !alnum && (n == 1 || !strings.ContainsRune("._-@", r)) {
			return fmt.Errorf("the API key name %q has %q at position %d: %s", name, r, n, rule)
		}
	}
	return nil
}

// ParseAPIKeys reads "name:sha256hex,name:sha256hex"; each name passes
// CheckAPIKeyName.
func ParseAPIKeys(s string) ([]APIKey, error) {
	var out []APIKey
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, h, ok := strings.Cut(part, ":")
		if ok {
			if err := CheckAPIKeyName(name); err != nil {
				return nil, err
			}
		}
		raw, err := hex.DecodeString(h)
		if !ok || name == "" || err != nil || len(raw) != 32 {
			return nil, fmt.Errorf("API key entry %q must be name:sha256hex (use `agentready keygen NAME`)", name)
		}
		var k APIKey
		k.Name = name
		copy(k.Hash[:], raw)
		out = append(out, k)
	}
	return out, nil
}

// EnvKeys are the settings FromEnv reads, for hosts that hand the edge its
// environment (internal/stack passes exactly these to the wasip1 module).
var EnvKeys = []string{"AGENTREADY_BASE_URL", "AGENTREADY_TOKEN_KEYS", "AGENTREADY_API_KEYS", "AGENTREADY_EDGE_SECRET",
	"AGENTREADY_FREE_DAILY", "AGENTREADY_TOKEN_DAILY", "AGENTREADY_KEY_DAILY", "AGENTREADY_TOKEN_MINTS_HOURLY",
	"AGENTREADY_BADGE_DAILY", "AGENTREADY_PAYTO", "AGENTREADY_FEE_PAYER", "AGENTREADY_X402_NETWORK", "AGENTREADY_PRICE", "AGENTREADY_IPV6_PREFIX"}

// ConfigError names the setting that stopped the edge from starting.
type ConfigError struct {
	Setting string
	Err     error
}

func (e *ConfigError) Error() string { return e.Setting + ": " + e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// FromEnv builds a Config from a lookup function (os.Getenv, Worker env, host
// secrets). It reads the names in EnvKeys and no others.
func FromEnv(get func(string) string) (Config, error) {
	c := Config{BaseURL: strings.TrimSuffix(get("AGENTREADY_BASE_URL"), "/"), Payment: x402.Config{PayTo: get("AGENTREADY_PAYTO"), FeePayer: get("AGENTREADY_FEE_PAYER")}}
	switch n := get("AGENTREADY_X402_NETWORK"); n {
	case "", "mainnet", "solana", x402.SolanaMainnet:
		c.Payment.Network = x402.SolanaMainnet
	case "devnet", "solana-devnet", x402.SolanaDevnet:
		c.Payment.Network = x402.SolanaDevnet
	default:
		return c, &ConfigError{"AGENTREADY_X402_NETWORK", fmt.Errorf("%q is not a network payments can be taken on: use mainnet or devnet (Solana)", n)}
	}
	if p := get("AGENTREADY_PRICE"); p != "" {
		if n, err := strconv.ParseUint(p, 10, 63); err != nil || n == 0 {
			return c, &ConfigError{"AGENTREADY_PRICE", fmt.Errorf("%q: want the price in atomic USDC units, a whole number above 0 (100000 = 0.10 USDC)", p)}
		}
		c.Payment.Price = p
	}
	var err error
	if k := get("AGENTREADY_TOKEN_KEYS"); k != "" {
		if c.TokenKeys, err = token.ParseKeys(k); err != nil {
			return c, &ConfigError{"AGENTREADY_TOKEN_KEYS", err}
		}
	}
	if c.APIKeys, err = ParseAPIKeys(get("AGENTREADY_API_KEYS")); err != nil {
		return c, &ConfigError{"AGENTREADY_API_KEYS", err}
	}
	c.IdentitySecret = []byte(get("AGENTREADY_EDGE_SECRET"))
	num := func(name string, def int) int {
		if v, err := strconv.Atoi(get(name)); err == nil && v > 0 {
			return v
		}
		return def
	}
	d := identity.DefaultAllowances
	c.Allowances = identity.Allowances{Anonymous: num("AGENTREADY_FREE_DAILY", d.Anonymous), Token: num("AGENTREADY_TOKEN_DAILY", d.Token), APIKey: num("AGENTREADY_KEY_DAILY", d.APIKey)}
	c.TokenMintsPerHour = num("AGENTREADY_TOKEN_MINTS_HOURLY", 10)
	c.BadgeDaily = num("AGENTREADY_BADGE_DAILY", 500)
	c.IPv6Prefix = identity.DefaultIPv6Prefix
	if v := get("AGENTREADY_IPV6_PREFIX"); v != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(v, "/"))
		if err != nil || n < 32 || n > 128 {
			return c, &ConfigError{"AGENTREADY_IPV6_PREFIX", fmt.Errorf("%q: want the prefix length limits key IPv6 clients on, 32 to 128 (64, the default, is one subscriber's block)", v)}
		}
		c.IPv6Prefix = n
	}
	return c, nil
}

// Handler is the edge.
type Handler struct {
	cfg Config
	p   Platform
	// ownHost is BaseURL's host ("" without one: each request's Host is
	// this service's), what crossSite compares a browser's Origin with.
	ownHost string
}

// New builds the edge handler.
func New(cfg Config, p Platform) *Handler {
	if cfg.TokenTTL <= 0 {
		cfg.TokenTTL = time.Hour
	}
	if cfg.Allowances == (identity.Allowances{}) {
		cfg.Allowances = identity.DefaultAllowances
	}
	if cfg.TokenMintsPerHour <= 0 {
		cfg.TokenMintsPerHour = 10
	}
	if cfg.BadgeDaily <= 0 {
		cfg.BadgeDaily = 500
	}
	h := &Handler{cfg: cfg, p: p}
	if b, err := url.Parse(cfg.BaseURL); err == nil {
		h.ownHost = b.Host
	}
	return h
}

func (h *Handler) base(r *http.Request) string {
	if h.cfg.BaseURL != "" {
		return h.cfg.BaseURL
	}
	scheme := r.URL.Scheme // set on Workers, where the URL is absolute
	if scheme == "" {
		scheme = "http"
		if r.TLS != nil {
			scheme = "https"
		}
	}
	return scheme + "://" + r.Host
}

// ServeHTTP routes a request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Route, sign and forward one spelling of the path, the one the origin's
	// router computes: "/api//scan" and "/api/./scan" are /api/scan, charged
	// as a scan and signed as the origin will verify it.
	path, ok := CanonicalPath(r.URL)
	if !ok {
		writeError(w, apierr.InvalidPath, "The path contains an encoded slash (%2F) or \"://\", which no endpoint uses; write the path with plain slashes (see /openapi.json).")
		return
	}
	if path != r.URL.Path || r.URL.RawPath != "" {
		r.URL.Path, r.URL.RawPath = path, ""
	}
	if h.servePage(w, r, path) {
		return
	}
	if doc, ok := siteDocs[path]; ok {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w, "GET, HEAD")
			return
		}
		h.serveDoc(w, r, doc)
		return
	}
	switch path {
	case "/api/badge":
		h.badge(w, r)
	case "/api/agent/token":
		h.issueToken(w, r)
	case "/openapi.json", "/.well-known/mcp.json", "/.well-known/mcp/server-card", "/.well-known/mcp/server-card.json":
		h.cachedFromOrigin(w, r)
	case "/api/scan":
		h.forward(w, r, 1)
	case "/metrics":
		// The origin's counters are the operator's, on AGENTREADY_METRICS_ADDR:
		// never asked for on anyone's behalf, whatever the origin behind answers.
		writeError(w, apierr.NotFound, "No endpoint at this path; see /openapi.json for the API.")
	default:
		cost := 0 // API answers show the caller's allowance without spending it
		if !strings.HasPrefix(path, "/api/") {
			cost = -1
		}
		h.forward(w, r, cost)
	}
}

// caller resolves the credentials: an API key, else a bearer token, else the address.
func (h *Handler) caller(w http.ResponseWriter, r *http.Request) (identity.Caller, bool) {
	if key := r.Header.Get("X-API-Key"); key != "" {
		sum := sha256.Sum256([]byte(key))
		for _, k := range h.cfg.APIKeys {
			if subtle.ConstantTimeCompare(sum[:], k.Hash[:]) == 1 {
				return identity.Caller{Tier: identity.APIKey, Subject: k.Name}, true
			}
		}
		writeError(w, apierr.InvalidAPIKey, "The X-API-Key is not valid (revoked or mistyped); send a valid key, or no key for the free allowance.")
		return identity.Caller{}, false
	}
	if auth := r.Header.Get("Authorization"); auth != "" {
		// Every API route reads scans: scan:read is what each one requires.
		c, err := h.cfg.TokenKeys.Authenticate(auth, h.base(r), token.Scope, h.p.Now())
		switch {
		case err == nil:
			return identity.Caller{Tier: identity.Token, Subject: c.Subject, Minter: c.Minter}, true
		case errors.Is(err, token.ErrNotBearer):
			h.challenge(w, r, apierr.InvalidToken, "Send the token as Authorization: Bearer <token> (a token from POST /api/agent/token).")
		case errors.Is(err, token.ErrScope):
			h.challenge(w, r, apierr.InsufficientScope, "The bearer token does not grant "+token.Scope+"; request a token with scope "+token.Scope+" from POST /api/agent/token.")
		default:
			h.challenge(w, r, apierr.InvalidToken, "The bearer token is not valid ("+err.Error()+"); request a new one from POST /api/agent/token.")
		}
		return identity.Caller{}, false
	}
	return identity.Caller{Tier: identity.Anonymous, Subject: h.addressKey(h.p.ClientIP(r))}, true
}

// addressKey is what every per-address limit keys on: the address, or an
// IPv6 address's block (identity.AddressKey).
func (h *Handler) addressKey(ip string) string {
	return identity.AddressKey(ip, h.cfg.IPv6Prefix)
}

// challenge answers a refused bearer token (401) or one without the scope (403).
func (h *Handler) challenge(w http.ResponseWriter, r *http.Request, code apierr.Code, msg string) {
	w.Header().Set("WWW-Authenticate", token.Challenge(h.base(r), string(code)))
	writeError(w, code, msg)
}
