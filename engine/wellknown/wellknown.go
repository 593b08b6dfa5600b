package wellknown

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agentready/agentready/engine/jsonerr"
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

// AuthServer is graded OAuth 2.0 authorization-server or OpenID provider metadata.
type AuthServer struct {
	Issuer        string   `json:"issuer,omitempty"`
	TokenEndpoint string   `json:"token_endpoint,omitempty"`
	Problems      []string `json:"problems,omitempty"`
}

// ParseAuthServer checks issuer (must equal origin) and token_endpoint.
func ParseAuthServer(body []byte, origin string) (*AuthServer, error) {
	var m struct {
		Issuer        string `json:"issuer"`
		TokenEndpoint string `json:"token_endpoint"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, errors.New("not JSON metadata: " + jsonerr.Describe(body, err))
	}
	a := &AuthServer{Issuer: m.Issuer, TokenEndpoint: m.TokenEndpoint}
	if m.Issuer == "" {
		a.Problems = append(a.Problems, "no issuer")
	} else if strings.TrimSuffix(m.Issuer, "/") != strings.TrimSuffix(origin, "/") {
		a.Problems = append(a.Problems, fmt.Sprintf("issuer %q does not match the origin %q", m.Issuer, origin))
	}
	if m.TokenEndpoint == "" {
		a.Problems = append(a.Problems, "no token_endpoint")
	}
	return a, nil
}

// ProtectedResource is graded RFC 9728 metadata.
type ProtectedResource struct {
	Resource             string   `json:"resource,omitempty"`
	AuthorizationServers []string `json:"authorization_servers,omitempty"`
	Problems             []string `json:"problems,omitempty"`
}

// ParseProtectedResource checks that resource names origin (or a path on it) and
// authorization_servers is a non-empty array.
func ParseProtectedResource(body []byte, origin *url.URL) (*ProtectedResource, error) {
	var m struct {
		Resource             string          `json:"resource"`
		AuthorizationServers json.RawMessage `json:"authorization_servers"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, errors.New("not JSON metadata: " + jsonerr.Describe(body, err))
	}
	p := &ProtectedResource{Resource: m.Resource}
	if u, err := url.Parse(m.Resource); err != nil || m.Resource == "" || !strings.EqualFold(u.Host, origin.Host) || u.Scheme != origin.Scheme {
		p.Problems = append(p.Problems, fmt.Sprintf("resource %q does not name this origin", m.Resource))
	}
	if json.Unmarshal(m.AuthorizationServers, &p.AuthorizationServers) != nil || len(p.AuthorizationServers) == 0 {
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
