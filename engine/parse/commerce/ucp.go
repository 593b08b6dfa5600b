package commerce

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/agentready/agentready/engine/clip"
	"github.com/agentready/agentready/engine/internal/jsonerr"
	"github.com/agentready/agentready/engine/internal/signal"
)

// UCPPath is where a business publishes its profile.
const UCPPath = "/.well-known/ucp"

// MaxBytes bounds every commerce document read.
const MaxBytes = 1 << 20

// maxItems bounds the services, capabilities and handlers listed.
const maxItems = 200

// Service is one UCP service and its transport bindings.
type Service struct {
	Name       string    `json:"name"`
	Transports []Binding `json:"transports"`
}

// Binding is one transport of a service.
type Binding struct {
	Transport string `json:"transport"` // rest, mcp, a2a, embedded
	Endpoint  string `json:"endpoint,omitempty"`
	Usable    bool   `json:"usable"` // an absolute http(s) URL, not a template, not loopback
}

// UCPProfile is what the `ucp` signal needs from a business profile.
type UCPProfile struct {
	// Generation names the schema shape: "2026-01-11" (services as objects,
	// capabilities as an array) or "2026-04-08" (maps of arrays; also the
	// 2026-01-01 scaffold). "" when there is no `ucp` object.
	Generation      string    `json:"generation,omitempty"`
	Version         string    `json:"version,omitempty"`
	VersionValid    bool      `json:"versionValid"` // YYYY-MM-DD and a real date
	Services        []Service `json:"services,omitempty"`
	Capabilities    []string  `json:"capabilities,omitempty"`
	PaymentHandlers []string  `json:"paymentHandlers,omitempty"`
	SigningKeys     []string  `json:"signingKeys,omitempty"` // kid, or kty when unnamed
	PrivateKeys     []string  `json:"privateKeys,omitempty"` // signing keys that publish `d`
	Findings        []string  `json:"findings,omitempty"`
}

// IsUCP reports a top-level `ucp` object.
func (p *UCPProfile) IsUCP() bool { return p.Generation != "" }

// reverseDomain is the UCP naming rule: {reverse-domain}.{service}[.{capability}],
// lower case, at least three labels.
var reverseDomain = regexp.MustCompile(`^[a-z][a-z0-9-]*(\.[a-z0-9_][a-z0-9_-]*){2,}$`)

// ReverseDomain reports a name that follows UCP's reverse-domain convention.
func ReverseDomain(name string) bool { return reverseDomain.MatchString(name) }

var ymd = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// ValidDate reports a YYYY-MM-DD string naming a real day.
func ValidDate(s string) bool {
	if !ymd.MatchString(s) {
		return false
	}
	_, err := time.Parse("2006-01-02", s)
	return err == nil
}

// object decodes a JSON object, plain-worded error on failure.
func object(body []byte) (map[string]json.RawMessage, error) {
	if len(body) > MaxBytes {
		return nil, fmt.Errorf("the document is larger than %d KiB", MaxBytes>>10)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, errors.New("not a JSON object: " + jsonerr.Describe(body, err))
	}
	if m == nil {
		return nil, errors.New("not a JSON object: the document is null")
	}
	return m, nil
}

func str(m map[string]json.RawMessage, k string) string {
	var s string
	_ = json.Unmarshal(m[k], &s)
	return s
}

func sub(m map[string]json.RawMessage, k string) map[string]json.RawMessage {
	var o map[string]json.RawMessage
	_ = json.Unmarshal(m[k], &o)
	return o
}

func list(raw json.RawMessage) []json.RawMessage {
	var l []json.RawMessage
	_ = json.Unmarshal(raw, &l)
	if len(l) > maxItems {
		l = l[:maxItems]
	}
	return l
}

// kind names a JSON value's type for a finding.
func kind(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if s == "" {
		return "missing"
	}
	switch s[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "true or false"
	case 'n':
		return "null"
	}
	return "a number"
}

// ParseUCP reads a business profile. Only a body that is not a JSON object is
// an error; a JSON object without `ucp` yields a profile whose IsUCP is false.
func ParseUCP(body []byte) (*UCPProfile, error) {
	root, err := object(body)
	if err != nil {
		return nil, err
	}
	p := &UCPProfile{}
	u := sub(root, "ucp")
	if u == nil {
		if _, ok := root["ucp"]; ok {
			p.Findings = append(p.Findings, "`ucp` is "+kind(root["ucp"])+", not an object")
		}
		return p, nil
	}
	p.Version = str(u, "version")
	p.VersionValid = ValidDate(p.Version)
	p.Generation = "2026-04-08"
	readServices(p, u["services"])
	readCapabilities(p, u["capabilities"])
	readHandlers(p, root, u)
	readKeys(p, root, u)
	return p, nil
}

func readServices(p *UCPProfile, raw json.RawMessage) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		if raw != nil {
			p.Findings = append(p.Findings, "`ucp.services` is "+kind(raw)+", not a map of service names")
		}
		return
	}
	for _, name := range sortedKeys(m) {
		s := Service{Name: name}
		if !ReverseDomain(name) {
			p.Findings = append(p.Findings, fmt.Sprintf("service name %q is not a reverse-domain name", clip.To(name, maxQuoted)))
		}
		if l := list(m[name]); l != nil {
			// 2026-04-08: an array of bindings, each naming its transport.
			for _, b := range l {
				var o map[string]json.RawMessage
				if json.Unmarshal(b, &o) == nil {
					s.Transports = append(s.Transports, binding(p, name, str(o, "transport"), str(o, "endpoint")))
				}
			}
		} else if o := sub(m, name); o != nil {
			// 2026-01-11: one object with a member per transport.
			p.Generation = "2026-01-11"
			for _, t := range []string{"rest", "mcp", "a2a", "embedded"} {
				if tb := sub(o, t); tb != nil {
					ep := str(tb, "endpoint")
					if ep == "" {
						ep = str(tb, "agentCard")
					}
					s.Transports = append(s.Transports, binding(p, name, t, ep))
				}
			}
		} else {
			p.Findings = append(p.Findings, fmt.Sprintf("service %q is %s, not a list of transports", clip.To(name, maxQuoted), kind(m[name])))
		}
		p.Services = append(p.Services, s)
		if len(p.Services) == maxItems {
			break
		}
	}
}

func binding(p *UCPProfile, service, transport, endpoint string) Binding {
	b := Binding{Transport: transport, Endpoint: clip.To(endpoint, maxQuoted)}
	if transport == "" {
		b.Transport = "unnamed"
		p.Findings = append(p.Findings, fmt.Sprintf("a binding of %q names no `transport`", clip.To(service, maxQuoted)))
	}
	if transport == "embedded" && endpoint == "" {
		b.Usable = true // embedded bindings are schemas, not endpoints
		return b
	}
	why := endpointProblem(endpoint)
	if why != "" {
		p.Findings = append(p.Findings, fmt.Sprintf("%s %s endpoint %s", clip.To(service, maxQuoted), b.Transport, why))
	}
	b.Usable = why == ""
	return b
}

// endpointProblem says why an endpoint cannot be called by an agent on the
// internet, or "" when it can.
func endpointProblem(ep string) string {
	if ep == "" {
		return "is missing"
	}
	if strings.Contains(ep, "{") {
		return fmt.Sprintf("%q is an unexpanded template", clip.To(ep, maxQuoted))
	}
	u, err := url.Parse(ep)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Sprintf("%q is not an absolute http(s) URL", clip.To(ep, maxQuoted))
	}
	h := strings.ToLower(u.Hostname())
	if h == "localhost" || strings.HasSuffix(h, ".localhost") || h == "127.0.0.1" || h == "::1" || h == "0.0.0.0" {
		return fmt.Sprintf("%q points at the publisher's own machine", clip.To(ep, maxQuoted))
	}
	return ""
}

func readCapabilities(p *UCPProfile, raw json.RawMessage) {
	var m map[string]json.RawMessage
	switch {
	case raw == nil:
	case json.Unmarshal(raw, &m) == nil:
		p.Capabilities = append(p.Capabilities, sortedKeys(m)...)
	case list(raw) != nil:
		for _, c := range list(raw) {
			var o map[string]json.RawMessage
			var s string
			switch {
			case json.Unmarshal(c, &o) == nil && str(o, "name") != "":
				p.Capabilities = append(p.Capabilities, str(o, "name"))
			case json.Unmarshal(c, &s) == nil && s != "":
				p.Capabilities = append(p.Capabilities, s)
			default:
				p.Findings = append(p.Findings, "a capability has no `name`")
			}
		}
	default:
		p.Findings = append(p.Findings, "`ucp.capabilities` is "+kind(raw)+", not a map or an array")
	}
	if len(p.Capabilities) > maxItems {
		p.Capabilities = p.Capabilities[:maxItems]
	}
}

func readHandlers(p *UCPProfile, root, u map[string]json.RawMessage) {
	var m map[string]json.RawMessage
	if json.Unmarshal(u["payment_handlers"], &m) == nil {
		p.PaymentHandlers = append(p.PaymentHandlers, sortedKeys(m)...)
	}
	for _, h := range list(sub(root, "payment")["handlers"]) {
		var o map[string]json.RawMessage
		if json.Unmarshal(h, &o) == nil {
			n := str(o, "name")
			if n == "" {
				n = str(o, "id")
			}
			if n != "" {
				p.PaymentHandlers = append(p.PaymentHandlers, n)
			}
		}
	}
	if len(p.PaymentHandlers) > maxItems {
		p.PaymentHandlers = p.PaymentHandlers[:maxItems]
	}
}

func readKeys(p *UCPProfile, root, u map[string]json.RawMessage) {
	for _, src := range []json.RawMessage{root["signing_keys"], u["signing_keys"], root["keys"]} {
		for _, k := range list(src) {
			var o map[string]json.RawMessage
			if json.Unmarshal(k, &o) != nil {
				continue
			}
			id := str(o, "kid")
			if id == "" {
				id = "unnamed " + str(o, "kty") + " key"
			}
			p.SigningKeys = append(p.SigningKeys, clip.To(id, maxQuoted))
			if _, ok := o["d"]; ok {
				p.PrivateKeys = append(p.PrivateKeys, clip.To(id, maxQuoted))
				p.Findings = append(p.Findings, fmt.Sprintf("signing key %q PUBLISHES ITS PRIVATE MEMBER `d`", clip.To(id, maxQuoted)))
			}
			if str(o, "x") == "" && str(o, "n") == "" && str(o, "public_key_pem") != "" {
				p.Findings = append(p.Findings, fmt.Sprintf("signing key %q is a PEM string, not JWK members (x, y)", clip.To(id, maxQuoted)))
			}
		}
	}
}

// GradeUCP decides the `ucp` signal from the response to UCPPath.
func GradeUCP(url string, status int, contentType string, body []byte) signal.Verdict {
	if absent, why := signal.Absent(status, contentType, body); absent {
		return signal.NA("No UCP business profile is published at " + UCPPath + ": " + why + ".")
	}
	v := gradeUCP(body)
	v.FoundAt = url
	return v
}

const ucpRec = "Publish a profile whose `ucp` object has `version` (YYYY-MM-DD), a `services` map with a reachable endpoint per transport, and `capabilities` named by reverse domain (e.g. dev.ucp.shopping.checkout); see ucp.dev."

func gradeUCP(body []byte) signal.Verdict {
	p, err := ParseUCP(body)
	if err != nil {
		return signal.Partial("A document is served at "+UCPPath+" but it is not a UCP profile: "+err.Error()+".", ucpRec)
	}
	if !p.IsUCP() {
		what := "it has no top-level `ucp` object"
		if k := Sniff(body); k != KindUnknown && k != KindUCP {
			what += " (it looks like " + k.Describe() + ")"
		}
		return signal.Partial("A JSON document is served at "+UCPPath+" but "+what+".", ucpRec, p.Findings...)
	}
	details := p.Details()
	if len(p.PrivateKeys) > 0 {
		return signal.Partial(fmt.Sprintf("PRIVATE KEY MATERIAL IS PUBLISHED: UCP signing key %s carries `d`. Anyone can sign as this business.", strings.Join(p.PrivateKeys, ", ")),
			"Remove the key from the profile now, stop signing with it, and publish a new key's public members only.", details...)
	}
	var missing []string
	if !p.VersionValid {
		if p.Version == "" {
			missing = append(missing, "no `version`")
		} else {
			missing = append(missing, fmt.Sprintf("`version` %q is not a YYYY-MM-DD date", clip.To(p.Version, maxQuoted)))
		}
	}
	usable := 0
	for _, s := range p.Services {
		for _, b := range s.Transports {
			if b.Usable {
				usable++
			}
		}
	}
	switch {
	case len(p.Services) == 0:
		missing = append(missing, "no services")
	case usable == 0:
		missing = append(missing, "no service has a reachable endpoint")
	}
	var bad []string
	for _, c := range p.Capabilities {
		if !ReverseDomain(c) {
			bad = append(bad, fmt.Sprintf("%q", clip.To(c, maxQuoted)))
		}
	}
	switch {
	case len(p.Capabilities) == 0:
		missing = append(missing, "no capabilities")
	case len(bad) > 0:
		missing = append(missing, "capability names not in reverse-domain form: "+strings.Join(bad, ", "))
	}
	if len(missing) > 0 {
		return signal.Partial("The UCP profile is incomplete: "+strings.Join(missing, "; ")+".", ucpRec, details...)
	}
	return signal.Pass(fmt.Sprintf("UCP business profile (version %s) with %s and %s.", p.Version,
		count(len(p.Services), "service"), count(len(p.Capabilities), "capability")), details...)
}

// Details lists what the profile offers, for the report's details field.
func (p *UCPProfile) Details() []string {
	var out []string
	for _, s := range p.Services {
		var ts []string
		for _, b := range s.Transports {
			t := b.Transport
			if b.Endpoint != "" {
				t += " " + b.Endpoint
			}
			ts = append(ts, t)
		}
		if len(ts) == 0 {
			ts = []string{"no transports"}
		}
		out = append(out, "service "+clip.To(s.Name, maxQuoted)+": "+strings.Join(ts, ", "))
	}
	if len(p.Capabilities) > 0 {
		out = append(out, "capabilities: "+clipJoin(p.Capabilities))
	}
	if len(p.PaymentHandlers) > 0 {
		out = append(out, "payment handlers: "+clipJoin(p.PaymentHandlers))
	} else {
		out = append(out, "payment handlers: none")
	}
	if len(p.SigningKeys) > 0 {
		out = append(out, "signing keys: "+clipJoin(p.SigningKeys))
	} else {
		out = append(out, "signing keys: none")
	}
	return append(out, p.Findings...)
}

func sortedKeys(m map[string]json.RawMessage) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	if len(ks) > maxItems {
		ks = ks[:maxItems]
	}
	return ks
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if strings.HasSuffix(what, "y") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(what, "y"))
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// maxQuoted bounds, in runes, a site's string quoted in a message or detail.
const maxQuoted = 120

// clipJoin lists up to 20 of a site's strings, each clipped.
func clipJoin(l []string) string {
	c := make([]string, 0, len(l))
	for i, s := range l {
		if i == 20 {
			c = append(c, fmt.Sprintf("and %d more", len(l)-20))
			break
		}
		c = append(c, clip.To(s, maxQuoted))
	}
	return strings.Join(c, ", ")
}
