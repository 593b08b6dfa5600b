package gather

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"strings"

	"github.com/agentready/agentready/engine/clip"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/parse/mcpcard"
	"github.com/agentready/agentready/engine/parse/openapi"
	"github.com/agentready/agentready/engine/weburl"
)

// level5.contract reads the level-5 contract a site declares about itself
// (the capabilities of its A2A agent card, the params of the card's
// extensions, or the capabilities of /.well-known/ai.json) and asks every
// declared same-site URL, with GET only, whether it is what it claims to be.
// A declaration on another registrable domain is listed, never requested.
// A declared URL that is the authorization server's token endpoint is not
// requested again: the scan's one exchange with it (OAuthToken) answers for
// it, since a second request could make the server issue a second token.

// ContractKind is one kind of level-5 declaration.
type ContractKind string

const (
	ContractIntent  ContractKind = "intentEndpoints"
	ContractSession ContractKind = "sessions"
	ContractTokens  ContractKind = "scopedTokens"
	ContractAudit   ContractKind = "auditLog"
	ContractSandbox ContractKind = "sandbox"
	ContractTools   ContractKind = "toolSchemas"
	ContractOpenAPI ContractKind = "openapi"
)

// Bounds of level5.contract: at most MaxContractItems declarations are kept
// (MaxContractIntents of them intent endpoints), so the probe costs at most
// 12 GETs, all in one round after the documents that declare them.
const (
	MaxContractItems   = 12
	MaxContractIntents = 5
	maxContractExts    = 10 // extensions of one card read
	maxContractScopes  = 20
	maxDeclaredLen     = 200 // characters of a declared value kept for the report
	maxContractTools   = 500 // tool entries counted in a tool-schemas document
)

// ContractDecl is one declaration as the site wrote it.
type ContractDecl struct {
	Kind     ContractKind
	Source   string // the document and member that declared it, e.g. "agent card capabilities"
	Declared string // the value as written, cut to 200 characters
	URL      string // resolved http(s) URL (URL kinds)
	Header   string // auditLog: the header name
	Scopes   []string
	// Invalid says why the declaration cannot be tried ("" when it can).
	Invalid string
	// CrossSite: URL is on another registrable domain than the site; it is
	// refused, never requested.
	CrossSite bool
}

// ContractItem is a declaration and, for a same-site URL, the answer to GET.
type ContractItem struct {
	ContractDecl
	Resp *fetch.Response // nil when not requested
	// FromToken: Resp is the scan's one exchange with the token endpoint
	// (OAuthToken), which this declaration names.
	FromToken bool
	// JSON: the whole body is valid JSON.
	JSON bool
	// SameAsHome: the body is the homepage's, byte for byte (a soft 404).
	SameAsHome bool
	// Tool schemas: tool entries found, how many are valid tool definitions
	// (mcpcard.ReadToolDef), and the first invalid one's problem.
	Tools, ToolsValid int
	ToolProblem       string
	// OpenAPI: the loaded description, or whether the body was another kind of document.
	Spec       *openapi.Spec
	NotOpenAPI bool
}

// ContractDoc is what level5.contract tried.
type ContractDoc struct {
	Sources []string // URLs of the documents whose declarations were read
	Items   []*ContractItem
	Beyond  int // declarations past the caps, not tried
}

// Contract is the level5.contract artifact.
var Contract = NewKey[*ContractDoc]("deep-contract")

var contractGatherer = deepGatherer(Define(Contract, "The level-5 contract declared in the agent card's capabilities (and its extensions' params) or ai.json's capabilities; every same-site declared URL requested once with GET (12 at most), except the token endpoint, whose one exchange is OAuthToken's.",
	[]AnyKey{Home, AgentCard, AISite, OAuthToken}, gatherContract))

func gatherContract(c *Ctx) (*ContractDoc, error) {
	home, card, ai, tok := Get(c, Home), Get(c, AgentCard), Get(c, AISite), Get(c, OAuthToken)
	out := &ContractDoc{}
	var decls []ContractDecl
	var read []*fetch.Response
	for _, d := range []struct {
		r    *fetch.Response
		name string
	}{{card.Resp, "agent card"}, {ai.Resp, "ai.json"}} {
		if !d.r.Found() {
			continue
		}
		found := ParseContract(d.r.Body, baseOf(d.r), c.Site.Target, d.name)
		if len(found) > 0 {
			out.Sources = append(out.Sources, d.r.FinalURL)
			read = append(read, d.r)
		}
		decls = append(decls, found...)
	}
	var beyond int
	decls, beyond = capContract(decls)
	out.Beyond = beyond
	var reqs []fetch.Request
	var asked []*ContractItem
	for _, d := range decls {
		it := &ContractItem{ContractDecl: d}
		out.Items = append(out.Items, it)
		if d.Invalid != "" || d.CrossSite || d.URL == "" {
			continue
		}
		if tok != nil && tok.Resp != nil && SameServer(d.URL, tok.Endpoint) {
			it.Resp, it.FromToken = tok.Resp, true
			continue
		}
		accept := "application/json"
		switch d.Kind {
		case ContractTools:
			accept = acceptJSON
		case ContractOpenAPI:
			accept = acceptSpec
		}
		reqs = append(reqs, fetch.Request{URL: d.URL, Accept: accept, Round: After(read...)})
		asked = append(asked, it)
	}
	for i, r := range c.FetchAll(reqs) {
		asked[i].Resp = r
	}
	for _, it := range out.Items {
		r := it.Resp
		if r == nil || r.Err != nil || !r.Complete() {
			continue
		}
		it.JSON = len(bytes.TrimSpace(r.Body)) > 0 && json.Valid(r.Body)
		it.SameAsHome = home.Resp.OK() && len(r.Body) > 0 && bytes.Equal(r.Body, home.Resp.Body)
		switch it.Kind {
		case ContractTools:
			if it.JSON {
				it.Tools, it.ToolsValid, it.ToolProblem = CountTools(r.Body)
			}
		case ContractOpenAPI:
			if r.OK() && !r.LooksHTML() {
				spec, err := openapi.Load(r.Body, baseOf(r))
				it.Spec, it.NotOpenAPI = spec, errors.Is(err, openapi.ErrNotOpenAPI)
			}
		}
	}
	return out, nil
}

// capContract drops duplicates (the same kind and target declared twice)
// and keeps at most MaxContractItems, MaxContractIntents of them intents.
func capContract(decls []ContractDecl) ([]ContractDecl, int) {
	var out []ContractDecl
	seen := map[string]bool{}
	intents, beyond := 0, 0
	for _, d := range decls {
		u := d.URL
		if cu := canonicalURL(u); cu != "" {
			u = cu // one target however it is spelt
		}
		k := string(d.Kind) + "\n" + u + "\n" + strings.ToLower(d.Header) + "\n" + d.Invalid
		if seen[k] {
			continue
		}
		seen[k] = true
		if len(out) == MaxContractItems || (d.Kind == ContractIntent && intents == MaxContractIntents) {
			beyond++
			continue
		}
		if d.Kind == ContractIntent {
			intents++
		}
		out = append(out, d)
	}
	return out, beyond
}

// contractMembers maps a normalised member name (lower case, without _ and -)
// to the kind it declares: the peer's names, which snake_case spellings
// also reach. Looser names (tools, session) are left alone: in a card's
// capabilities they usually mean something else (MCP's tools capability).
var contractMembers = map[string]ContractKind{
	"intentendpoints": ContractIntent,
	"sessions":        ContractSession,
	"scopedtokens":    ContractTokens,
	"auditlog":        ContractAudit,
	"sandbox":         ContractSandbox,
	"toolschemas":     ContractTools,
	"openapi":         ContractOpenAPI, "apispec": ContractOpenAPI, "servicedesc": ContractOpenAPI,
}

// contractOrder fixes the order declarations are reported in.
var contractOrder = []ContractKind{ContractIntent, ContractSession, ContractTokens, ContractAudit, ContractSandbox, ContractTools, ContractOpenAPI}

func normMember(k string) string {
	return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(k))
}

// ParseContract reads the level-5 declarations of one document (an A2A
// agent card or ai.json): its capabilities object, and the params object of
// each capabilities.extensions entry (at most 10). base resolves relative
// URLs; site decides what is cross-site. Members of the wrong shape become
// declarations with Invalid set, so a broken declaration is reported, not
// ignored. Any body is safe: what is not a JSON object declares nothing.
func ParseContract(body []byte, base, site *url.URL, doc string) []ContractDecl {
	var root map[string]json.RawMessage
	if json.Unmarshal(body, &root) != nil {
		return nil
	}
	var caps map[string]json.RawMessage
	if json.Unmarshal(root["capabilities"], &caps) != nil || caps == nil {
		return nil
	}
	out := contractFrom(caps, base, site, doc+" capabilities")
	var exts []map[string]json.RawMessage
	if raw, ok := caps["extensions"]; ok && json.Unmarshal(raw, &exts) == nil {
		for i, e := range exts {
			if i == maxContractExts {
				break
			}
			var params map[string]json.RawMessage
			if json.Unmarshal(e["params"], &params) != nil || params == nil {
				continue
			}
			var uri string
			_ = json.Unmarshal(e["uri"], &uri)
			src := doc + " extension"
			if uri = clip.To(uri, 120); uri != "" {
				src += " " + uri
			}
			out = append(out, contractFrom(params, base, site, src)...)
		}
	}
	return out
}

// contractFrom reads the members of one object, in contractOrder.
func contractFrom(obj map[string]json.RawMessage, base, site *url.URL, source string) []ContractDecl {
	byKind := map[ContractKind][]json.RawMessage{}
	for k, v := range obj {
		if kind, ok := contractMembers[normMember(k)]; ok {
			byKind[kind] = append(byKind[kind], v)
		}
	}
	var out []ContractDecl
	for _, kind := range contractOrder {
		for _, raw := range byKind[kind] {
			out = append(out, declsOf(kind, raw, base, site, source)...)
		}
	}
	return out
}

var headerToken = regexp.MustCompile("^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$")

// urlMembers are the members an object declaration may name its URL with.
var urlMembers = []string{"url", "href", "endpoint", "path", "baseUrl", "base_url", "tokenEndpoint", "token_endpoint", "uri"}

func declsOf(kind ContractKind, raw json.RawMessage, base, site *url.URL, source string) []ContractDecl {
	mk := func() ContractDecl { return ContractDecl{Kind: kind, Source: source + "." + string(kind)} }
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "false" {
		return nil
	}
	switch kind {
	case ContractIntent, ContractTools:
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) == nil {
			var out []ContractDecl
			for i, e := range list {
				if i == MaxContractItems {
					break
				}
				d := mk()
				setURL(&d, e, base, site)
				out = append(out, d)
			}
			if len(out) == 0 {
				d := mk()
				d.Invalid = "is an empty list"
				out = append(out, d)
			}
			return out
		}
	case ContractAudit:
		d := mk()
		var name string
		if json.Unmarshal(raw, &name) != nil {
			var obj map[string]json.RawMessage
			if json.Unmarshal(raw, &obj) == nil {
				for _, k := range []string{"header", "headerName", "header_name"} {
					if json.Unmarshal(obj[k], &name) == nil && name != "" {
						break
					}
				}
			}
		}
		d.Declared = clip.To(name, maxDeclaredLen)
		name = strings.TrimSpace(name)
		switch {
		case name == "":
			d.Invalid = "names no header"
		case !headerToken.MatchString(name):
			d.Invalid = "is not a valid HTTP header name"
		default:
			d.Header = name
		}
		return []ContractDecl{d}
	case ContractTokens:
		d := mk()
		setURL(&d, raw, base, site)
		var obj struct {
			Scopes json.RawMessage `json:"scopes"`
		}
		if json.Unmarshal(raw, &obj) == nil && len(obj.Scopes) > 0 {
			var list []any
			var one string
			if json.Unmarshal(obj.Scopes, &list) == nil {
				for _, s := range list {
					if str, ok := s.(string); ok && strings.TrimSpace(str) != "" && len(d.Scopes) < maxContractScopes {
						d.Scopes = append(d.Scopes, clip.To(strings.TrimSpace(str), 100))
					}
				}
			} else if json.Unmarshal(obj.Scopes, &one) == nil {
				for _, s := range strings.Fields(one) {
					if len(d.Scopes) < maxContractScopes {
						d.Scopes = append(d.Scopes, clip.To(s, 100))
					}
				}
			}
		}
		return []ContractDecl{d}
	}
	d := mk()
	setURL(&d, raw, base, site)
	return []ContractDecl{d}
}

// setURL reads a declared URL: a string, or an object naming it in one of
// urlMembers; it resolves it against base and marks it cross-site.
func setURL(d *ContractDecl, raw json.RawMessage, base, site *url.URL) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			d.Invalid = "is neither a URL nor an object naming one"
			return
		}
		for _, k := range urlMembers {
			if json.Unmarshal(obj[k], &s) == nil && strings.TrimSpace(s) != "" {
				break
			}
			s = ""
		}
		if s == "" {
			d.Invalid = "names no URL (give url, endpoint, or baseUrl)"
			return
		}
	}
	d.Declared = clip.To(s, maxDeclaredLen)
	s = strings.TrimSpace(s)
	if s == "" || len(s) > weburl.MaxLength {
		d.Invalid = "is not a usable URL"
		return
	}
	ref, err := url.Parse(s)
	if err != nil {
		d.Invalid = "is not a URL"
		return
	}
	u := ref
	if base != nil {
		u = base.ResolveReference(ref)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		d.Invalid = "is not an http(s) URL"
		return
	}
	if u.User != nil {
		d.Invalid = "carries credentials in the URL"
		return
	}
	u.Fragment, u.RawFragment = "", ""
	d.URL = u.String()
	d.CrossSite = site == nil || !weburl.SameSite(site, d.URL)
}

// CountTools counts the tool definitions in a tool-schemas document and the
// valid ones, by the one rule of what a valid tool definition is
// (mcpcard.ReadToolDef: a name agents accept, a description, an object
// input schema); problem is the first invalid one's, "name: why". It reads
// the shapes agent ecosystems publish: a list of tools, or an object holding
// one under tools or functions; every object entry with a name counts as a
// tool (it was declared as one), valid or not.
func CountTools(body []byte) (tools, valid int, problem string) {
	var doc any
	if json.Unmarshal(body, &doc) != nil {
		return 0, 0, ""
	}
	list, _ := doc.([]any)
	if obj, ok := doc.(map[string]any); ok {
		for _, k := range []string{"tools", "functions"} {
			if l, _ := obj[k].([]any); len(l) > 0 {
				list = l
				break
			}
		}
	}
	for i, entry := range list {
		if i == maxContractTools {
			break
		}
		m, _ := entry.(map[string]any)
		if m == nil {
			continue
		}
		t, _ := mcpcard.ReadToolDef(m)
		if strings.TrimSpace(t.Name) == "" {
			continue
		}
		tools++
		switch {
		case t.Valid():
			valid++
		case problem == "":
			problem = clip.To(t.Name, 64) + ": " + t.Problem
		}
	}
	return tools, valid, problem
}
