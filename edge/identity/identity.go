// Package identity names callers and their tiers, the vocabulary the edge and
// the origin share. Dependency-free so the WebAssembly edge stays small.
package identity

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
