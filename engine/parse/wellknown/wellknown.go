package wellknown

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agentready/agentready/engine/internal/jsonerr"
)

// AISite grades /.well-known/ai.json: ok when it is an object with name and capabilities or skills.
func AISite(body []byte) (obj bool, ok bool, keys []string) {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return false, false, nil
	}
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var name string
	_ = json.Unmarshal(m["name"], &name)
	_, caps := m["capabilities"]
	_, skills := m["skills"]
	return true, name != "" && (caps || skills), keys
}

// SkillsIndex is a graded Agent Skills discovery index.
type SkillsIndex struct {
	Version  string   `json:"version"` // "0.2" or "0.1"
	Entries  int      `json:"entries"`
	Valid    int      `json:"validEntries"`
	Findings []string `json:"findings,omitempty"`
}

var skillName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
var digest = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// ParseSkillsIndex reads an index; v01 selects the v0.1 rules (id and name).
func ParseSkillsIndex(body []byte, v01 bool) (*SkillsIndex, error) {
	var doc struct {
		Schema string           `json:"$schema"`
		Skills []map[string]any `json:"skills"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		var arr []map[string]any
		if json.Unmarshal(body, &arr) != nil {
			return nil, errors.New("not a JSON skills index: " + jsonerr.Describe(body, err))
		}
		doc.Skills = arr
	}
	ix := &SkillsIndex{Version: "0.2", Entries: len(doc.Skills)}
	if v01 || doc.Schema == "" {
		ix.Version = "0.1"
	}
	for i, s := range doc.Skills {
		str := func(k string) string { v, _ := s[k].(string); return v }
		var bad []string
		if ix.Version == "0.2" {
			if n := str("name"); !skillName.MatchString(n) || len(n) > 64 {
				bad = append(bad, "name")
			}
			if t := str("type"); t != "skill-md" && t != "archive" {
				bad = append(bad, "type")
			}
			if d := str("description"); d == "" || len(d) > 1024 {
				bad = append(bad, "description")
			}
			if str("url") == "" {
				bad = append(bad, "url")
			}
			if !digest.MatchString(str("digest")) {
				bad = append(bad, "digest")
			}
		} else {
			if str("id") == "" && str("name") == "" {
				bad = append(bad, "id/name")
			}
			if str("name") == "" {
				bad = append(bad, "name")
			}
		}
		if len(bad) == 0 {
			ix.Valid++
		} else if len(ix.Findings) < 20 {
			ix.Findings = append(ix.Findings, fmt.Sprintf("skills[%d]: missing or invalid %s", i, strings.Join(bad, ", ")))
		}
	}
	return ix, nil
}

// FrontMatter reads YAML front matter at the top of a markdown file.
// ok is false when there is none or it does not parse.
func FrontMatter(body []byte) (fields map[string]any, ok bool) {
	b := bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	if !bytes.HasPrefix(b, []byte("---\n")) {
		return nil, false
	}
	rest := b[4:]
	end := bytes.Index(rest, []byte("\n---"))
	if end < 0 || end > 64<<10 {
		return nil, false
	}
	if err := yaml.Unmarshal(rest[:end], &fields); err != nil || fields == nil {
		return nil, false
	}
	return fields, true
}

// OAuthFields is what agentready reads of an OAuth metadata document, the
// one reading of it: authorization-server members (RFC 8414, OpenID
// discovery) and protected-resource members (RFC 9728) share one shape, so
// the free scan's checks and the deep scan's OAuth probes see the same
// document the same way.
type OAuthFields struct {
	Issuer               string
	TokenEndpoint        string
	GrantTypes           []string
	HasGrantTypes        bool // grant_types_supported is present (RFC 8414's default is authorization_code and implicit)
	AuthMethods          []string
	Scopes               []string
	Resource             string
	AuthorizationServers []string
	// Problems are members present with the wrong type, worded for site
	// owners; each starts with the member's name.
	Problems []string
}

// Caps on what one hostile OAuth document can make us keep.
const (
	MaxOAuthList   = 100 // entries kept of any array member
	MaxOAuthString = 2048
)

// ParseOAuthFields reads the members agentready uses; a member of the wrong
// type is a problem, not a reason to ignore the others. Only a body that is
// not a JSON object is an error (worded by jsonerr). A leading byte-order
// mark is tolerated.
func ParseOAuthFields(body []byte) (*OAuthFields, error) {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, errors.New("not a JSON object: " + jsonerr.Describe(body, err))
	}
	if m == nil {
		return nil, errors.New("not a JSON object: the document is null")
	}
	f := &OAuthFields{}
	str := func(key string) string {
		raw, ok := m[key]
		if !ok || string(raw) == "null" {
			return ""
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			f.Problems = append(f.Problems, key+" is not a string")
			return ""
		}
		if len(s) > MaxOAuthString {
			f.Problems = append(f.Problems, fmt.Sprintf("%s is longer than %d characters", key, MaxOAuthString))
			return ""
		}
		return s
	}
	list := func(key string) ([]string, bool) {
		raw, ok := m[key]
		if !ok || string(raw) == "null" {
			return nil, false
		}
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			f.Problems = append(f.Problems, key+" is not an array")
			return nil, true
		}
		var out []string
		bad := false
		for _, it := range items {
			var s string
			if json.Unmarshal(it, &s) != nil || len(s) > MaxOAuthString {
				bad = true
				continue
			}
			if len(out) < MaxOAuthList {
				out = append(out, s)
			}
		}
		if bad {
			f.Problems = append(f.Problems, key+" holds something other than short strings")
		}
		return out, true
	}
	f.Issuer = str("issuer")
	f.TokenEndpoint = str("token_endpoint")
	f.Resource = str("resource")
	f.GrantTypes, f.HasGrantTypes = list("grant_types_supported")
	f.AuthMethods, _ = list("token_endpoint_auth_methods_supported")
	f.Scopes, _ = list("scopes_supported")
	f.AuthorizationServers, _ = list("authorization_servers")
	return f, nil
}

// problemWith is the problem noted for member, "" when it had none.
func (f *OAuthFields) problemWith(member string) string {
	for _, p := range f.Problems {
		if strings.HasPrefix(p, member+" ") {
			return p
		}
	}
	return ""
}

// AnonymousClientCredentials reports an authorization server that lets a
// client without registered credentials use the client_credentials grant:
// both the grant and the "none" authentication method are advertised.
func (f *OAuthFields) AnonymousClientCredentials() bool {
	return f != nil && slices.Contains(f.GrantTypes, "client_credentials") && slices.Contains(f.AuthMethods, "none")
}

// AuthServer is graded OAuth 2.0 authorization-server or OpenID provider metadata.
type AuthServer struct {
	Issuer        string       `json:"issuer,omitempty"`
	TokenEndpoint string       `json:"tokenEndpoint,omitempty"`
	Problems      []string     `json:"problems,omitempty"`
	Fields        *OAuthFields `json:"-"` // the document as ParseOAuthFields read it
}

// ParseAuthServer checks issuer (must equal origin) and token_endpoint.
func ParseAuthServer(body []byte, origin string) (*AuthServer, error) {
	f, err := ParseOAuthFields(body)
	if err != nil {
		return nil, err
	}
	a := &AuthServer{Issuer: f.Issuer, TokenEndpoint: f.TokenEndpoint, Fields: f}
	switch p := f.problemWith("issuer"); {
	case p != "":
		a.Problems = append(a.Problems, p)
	case f.Issuer == "":
		a.Problems = append(a.Problems, "no issuer")
	case strings.TrimSuffix(f.Issuer, "/") != strings.TrimSuffix(origin, "/"):
		a.Problems = append(a.Problems, fmt.Sprintf("issuer %q does not match the origin %q", f.Issuer, origin))
	}
	if p := f.problemWith("token_endpoint"); p != "" {
		a.Problems = append(a.Problems, p)
	} else if f.TokenEndpoint == "" {
		a.Problems = append(a.Problems, "no token_endpoint")
	}
	return a, nil
}

// ProtectedResource is graded RFC 9728 metadata.
type ProtectedResource struct {
	Resource             string       `json:"resource,omitempty"`
	AuthorizationServers []string     `json:"authorizationServers,omitempty"`
	Problems             []string     `json:"problems,omitempty"`
	Fields               *OAuthFields `json:"-"` // the document as ParseOAuthFields read it
}

// ParseProtectedResource checks that resource names origin (or a path on it) and
// authorization_servers is a non-empty array.
func ParseProtectedResource(body []byte, origin *url.URL) (*ProtectedResource, error) {
	f, err := ParseOAuthFields(body)
	if err != nil {
		return nil, err
	}
	p := &ProtectedResource{Resource: f.Resource, AuthorizationServers: f.AuthorizationServers, Fields: f}
	if problem := f.problemWith("resource"); problem != "" {
		p.Problems = append(p.Problems, problem)
	} else if u, err := url.Parse(f.Resource); err != nil || f.Resource == "" || !strings.EqualFold(u.Host, origin.Host) || u.Scheme != origin.Scheme {
		p.Problems = append(p.Problems, fmt.Sprintf("resource %q does not name this origin", f.Resource))
	}
	if problem := f.problemWith("authorization_servers"); problem != "" {
		p.Problems = append(p.Problems, problem)
	}
	if len(f.AuthorizationServers) == 0 {
		p.Problems = append(p.Problems, "authorization_servers is missing or empty")
	}
	return p, nil
}

// PaymentRequired is what an x402 402 response declared.
type PaymentRequired struct {
	Version  int      `json:"x402Version"`
	Source   string   `json:"source"` // "PAYMENT-REQUIRED header" or "body"
	Accepts  int      `json:"accepts"`
	Problems []string `json:"problems,omitempty"`
}

// Valid reports at least one complete payment option.
func (p *PaymentRequired) Valid() bool { return p != nil && p.Accepts > 0 && len(p.Problems) == 0 }

// ParseX402 reads the v2 PAYMENT-REQUIRED header (base64 JSON) or, failing
// that, a v1 JSON body.
func ParseX402(header string, body []byte) *PaymentRequired {
	if h := strings.TrimSpace(header); h != "" {
		if raw, err := base64.StdEncoding.DecodeString(h); err == nil {
			if p := parseX402JSON(raw, "PAYMENT-REQUIRED header"); p != nil {
				return p
			}
		} else if raw, err := base64.RawURLEncoding.DecodeString(h); err == nil {
			if p := parseX402JSON(raw, "PAYMENT-REQUIRED header"); p != nil {
				return p
			}
		}
	}
	return parseX402JSON(body, "body")
}

func parseX402JSON(raw []byte, source string) *PaymentRequired {
	var m struct {
		Version int              `json:"x402Version"`
		Accepts []map[string]any `json:"accepts"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Version == 0 {
		return nil
	}
	p := &PaymentRequired{Version: m.Version, Source: source}
	amountKey := "amount"
	if m.Version == 1 {
		amountKey = "maxAmountRequired"
	}
	for i, a := range m.Accepts {
		var miss []string
		for _, k := range []string{"scheme", "network", amountKey, "asset", "payTo"} {
			if v, _ := a[k].(string); v == "" {
				miss = append(miss, k)
			}
		}
		if len(miss) == 0 {
			p.Accepts++
		} else {
			p.Problems = append(p.Problems, fmt.Sprintf("accepts[%d] lacks %s", i, strings.Join(miss, ", ")))
		}
	}
	if len(m.Accepts) == 0 {
		p.Problems = append(p.Problems, "no accepts[] payment options")
	}
	return p
}
