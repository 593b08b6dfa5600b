package gather

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/agentready/agentready/engine/clip"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/parse/mcpcard"
	"github.com/agentready/agentready/engine/weburl"
)

// The deep scan's A2A probe calls the interfaces an agent card declares the
// way a client agent would first call them: one JSON-RPC request that reads
// the agent's extended card and creates nothing (no message is sent, so no
// task exists afterwards). It is the only POST of this probe. When the card's
// security schemes name the authorization server whose token the scan holds
// (OAuthToken: a client-credentials token URL, or that server's metadata),
// the requests carry that token, as an agent that read the card sends it.

// A2A protocol bindings, as cards spell them once normalised.
const (
	A2AJSONRPC  = "JSONRPC"
	A2AHTTPJSON = "HTTP+JSON"
	A2AGRPC     = "GRPC"
)

// Bounds of the A2A probe: at most A2AMaxJSONRPC POSTs and A2AMaxHTTP GETs,
// in one round after the card.
const (
	A2AMaxJSONRPC = 2
	A2AMaxHTTP    = 1
	// a2aMaxDeclared caps the interfaces read from one card.
	a2aMaxDeclared = 32
	// a2aMaxText caps, in characters, a string the card or the agent wrote
	// that reaches a report.
	a2aMaxText = 200
)

// The JSON-RPC methods that return the extended agent card, by protocol era.
const (
	A2AMethodV1  = "GetExtendedAgentCard"               // A2A 1.0
	A2AMethodV03 = "agent/getAuthenticatedExtendedCard" // A2A 0.3
)

// A2AInterfaceTry is one declared interface as the deep scan tried it.
type A2AInterfaceTry struct {
	URL     string
	Binding string // A2AJSONRPC or A2AHTTPJSON
	Version string // the protocol version it declares ("1.0", "0.3.0"…)
	Method  string // the JSON-RPC method called ("" for HTTP+JSON)
	Resp    *fetch.Response
	Reply   *A2AReply // the JSON-RPC response in the answer; nil when there is none
	// Authorized: the request carried the scan's token (see AuthScheme).
	Authorized bool
}

// A2AReply is a JSON-RPC 2.0 response to the probe's request.
type A2AReply struct {
	Result     bool   // a result, not an error
	ResultName string // the name of the agent card returned, if any
	Code       int    // the error's code
	Message    string // the error's message, clipped
}

// A2AInterfacesDoc is what a2a.interfaces judges; nil when no agent card was found.
type A2AInterfacesDoc struct {
	CardURL    string
	Unreadable bool // the card is not a JSON object
	Declared   int  // interfaces the card declares (url, supportedInterfaces, additionalInterfaces)
	Tried      []A2AInterfaceTry
	CrossSite  []string // declared on another registrable domain: not contacted
	GRPC       []string // gRPC interfaces: not probed
	Unusable   []string // URLs that are not absolute http(s), or bindings this probe does not know
	Beyond     int      // same-site interfaces past the caps, not tried
	// AuthScheme is the card's security scheme that names the authorization
	// server whose token the scan holds, and AuthIssuer that server; the
	// interfaces were called with the token. "" when none does, or the scan
	// holds no token.
	AuthScheme, AuthIssuer string
}

// AgentInterfaces is the a2a.interfaces artifact.
var AgentInterfaces = NewKey[*A2AInterfacesDoc]("deep-a2a-interfaces")

var _ = deepGatherer(Define(AgentInterfaces, "Call up to two same-site JSON-RPC interfaces of the A2A agent card with the read-only extended-card method (one POST each), and GET one HTTP+JSON interface; with the scan's one OAuth token when a security scheme of the card names the authorization server that issued it.", []AnyKey{AgentCard, OAuthToken},
	func(c *Ctx) (*A2AInterfacesDoc, error) {
		card, tok := Get(c, AgentCard), Get(c, OAuthToken)
		if card == nil || card.Resp == nil || !card.Resp.Found() {
			return nil, nil
		}
		out := &A2AInterfacesDoc{CardURL: card.Resp.FinalURL}
		list, unusable, ok := a2aInterfaces(card.Resp.Body, baseOf(card.Resp))
		if !ok {
			out.Unreadable = true
			return out, nil
		}
		out.Declared, out.Unusable = len(list)+len(unusable), unusable
		authz := ""
		if tok.Usable() {
			if out.AuthScheme = a2aTokenScheme(card.Resp.Body, baseOf(card.Resp), tok); out.AuthScheme != "" {
				authz, out.AuthIssuer = tok.authorization(), clip.To(tok.Issuer, a2aMaxText)
			}
		}
		var reqs []fetch.Request
		rpc, rest := 0, 0
		for _, it := range list {
			switch {
			case !weburl.SameSite(c.Site.Target, it.URL):
				if len(out.CrossSite) < apiMaxListed {
					out.CrossSite = append(out.CrossSite, it.URL)
				}
			case it.Binding == A2AGRPC:
				if len(out.GRPC) < apiMaxListed {
					out.GRPC = append(out.GRPC, it.URL)
				}
			case it.Binding == A2AJSONRPC && rpc < A2AMaxJSONRPC:
				rpc++
				method, body, hdr := a2aRequest(it.Version)
				if authz != "" {
					hdr["Authorization"] = authz
				}
				out.Tried = append(out.Tried, A2AInterfaceTry{URL: it.URL, Binding: it.Binding, Version: it.Version, Method: method, Authorized: authz != ""})
				// Agents call each other server to server: no Origin (servers
				// may refuse cross-origin calls), and a POST is not replayed
				// to wherever a redirect points.
				reqs = append(reqs, fetch.Request{Method: http.MethodPost, URL: it.URL, Accept: "application/json", Body: body, Header: hdr,
					NoOrigin: true, NoRedirect: true, MaxBody: 256 << 10})
			case it.Binding == A2AHTTPJSON && rest < A2AMaxHTTP:
				rest++
				out.Tried = append(out.Tried, A2AInterfaceTry{URL: it.URL, Binding: it.Binding, Version: it.Version, Authorized: authz != ""})
				req := fetch.Request{URL: it.URL, Accept: "application/json", NoOrigin: true, MaxBody: 64 << 10}
				if authz != "" {
					// A token never follows a redirect.
					req.Header, req.NoRedirect = map[string]string{"Authorization": authz}, true
				}
				reqs = append(reqs, req)
			case it.Binding == A2AJSONRPC || it.Binding == A2AHTTPJSON:
				out.Beyond++
			default:
				if len(out.Unusable) < apiMaxListed {
					out.Unusable = append(out.Unusable, it.URL+" ("+it.Binding+")")
				}
			}
		}
		for i, r := range c.FetchAll(reqs) {
			t := &out.Tried[i]
			t.Resp = r
			if t.Binding == A2AJSONRPC && r.Err == nil {
				t.Reply = a2aReadReply(r.ContentType(), r.Body)
			}
		}
		return out, nil
	}))

// a2aTokenScheme is the name of the first security scheme of the card (by
// name) that names the authorization server whose token the scan holds: an
// OAuth 2.0 scheme with a flow whose tokenUrl is that server's token
// endpoint or whose oauth2MetadataUrl is its metadata, or an OpenID Connect
// scheme whose openIdConnectUrl is. It reads v0.3 schemes ({"type":
// "oauth2", …}) and v1.0 ones ({"oauth2SecurityScheme": {…}}); URLs are
// compared however they are spelt (SameServer), relative ones resolved
// against base. "" when none does.
func a2aTokenScheme(body []byte, base *url.URL, tok *OAuthTokenDoc) string {
	var card struct {
		Schemes map[string]json.RawMessage `json:"securitySchemes"`
	}
	if json.Unmarshal(body, &card) != nil || tok == nil || tok.Issuer == "" {
		return ""
	}
	str := func(raw json.RawMessage) string {
		var s string
		_ = json.Unmarshal(raw, &s)
		return a2aAbsolute(s, base)
	}
	metadata := func(u string) bool {
		return u != "" && (SameServer(u, tok.MetadataURL) || tok.IssuedBy(IssuerOf(u)))
	}
	names := make([]string, 0, len(card.Schemes))
	for name := range card.Schemes {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		if i == a2aMaxDeclared {
			break
		}
		var scheme map[string]json.RawMessage
		if json.Unmarshal(card.Schemes[name], &scheme) != nil {
			continue // a scheme of the wrong shape names nothing
		}
		var kind string
		_ = json.Unmarshal(scheme["type"], &kind)
		for _, wrap := range []struct{ member, kind string }{{"oauth2SecurityScheme", "oauth2"}, {"openIdConnectSecurityScheme", "openIdConnect"}} {
			var inner map[string]json.RawMessage
			if json.Unmarshal(scheme[wrap.member], &inner) == nil && inner != nil {
				scheme, kind = inner, wrap.kind
			}
		}
		switch strings.ToLower(kind) {
		case "oauth2":
			if metadata(str(scheme["oauth2MetadataUrl"])) {
				return name
			}
			var flows map[string]map[string]json.RawMessage
			_ = json.Unmarshal(scheme["flows"], &flows)
			for _, f := range flows {
				if u := str(f["tokenUrl"]); u != "" && SameServer(u, tok.Endpoint) {
					return name
				}
			}
		case "openidconnect":
			if metadata(str(scheme["openIdConnectUrl"])) {
				return name
			}
		}
	}
	return ""
}

// a2aRequest is the JSON-RPC request for the extended card in the era of
// version: neither method reads or creates a task.
func a2aRequest(version string) (method string, body []byte, header map[string]string) {
	header = map[string]string{"Content-Type": "application/json"}
	if strings.HasPrefix(version, "0.") {
		return A2AMethodV03, []byte(`{"jsonrpc":"2.0","id":1,"method":"` + A2AMethodV03 + `"}`), header
	}
	header["A2A-Version"] = a2aMajorMinor(version)
	return A2AMethodV1, []byte(`{"jsonrpc":"2.0","id":1,"method":"` + A2AMethodV1 + `","params":{}}`), header
}

// a2aMajorMinor is the A2A-Version header for a declared version: its
// major.minor, or 1.0 when the card wrote something else.
func a2aMajorMinor(version string) string {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 || !apiDigits(parts[0]) || !apiDigits(parts[1]) || len(parts[0]) > 3 || len(parts[1]) > 3 {
		return "1.0"
	}
	return parts[0] + "." + parts[1]
}

type a2aIface struct{ URL, Binding, Version string }

// a2aInterfaces reads the interfaces of a v1.0 card (supportedInterfaces,
// with protocolBinding, or transport as some cards write it) and of a v0.3
// one (url with preferredTransport, additionalInterfaces), deduplicated by
// URL, binding and version. Relative URLs resolve against base. ok is false
// when body is not a JSON object.
func a2aInterfaces(body []byte, base *url.URL) (list []a2aIface, unusable []string, ok bool) {
	var card map[string]json.RawMessage
	if json.Unmarshal(body, &card) != nil || card == nil {
		return nil, nil, false
	}
	str := func(raw json.RawMessage) string {
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	}
	top := strings.TrimSpace(str(card["protocolVersion"]))
	seen := map[a2aIface]bool{}
	add := func(rawURL, binding, version, fallback string) {
		if len(list)+len(unusable) >= a2aMaxDeclared {
			return
		}
		if version = strings.TrimSpace(version); version == "" {
			version = fallback
		}
		it := a2aIface{URL: a2aAbsolute(rawURL, base), Binding: a2aBinding(binding), Version: clip.To(version, a2aMaxText)}
		if it.URL == "" {
			if rawURL != "" || binding != "" {
				unusable = append(unusable, clip.To(rawURL, a2aMaxText))
			}
			return
		}
		if !seen[it] {
			seen[it] = true
			list = append(list, it)
		}
	}
	var entries []map[string]json.RawMessage
	_ = json.Unmarshal(card["supportedInterfaces"], &entries)
	v1 := top
	if v1 == "" || strings.HasPrefix(v1, "0.") {
		v1 = "1.0"
	}
	for _, e := range entries {
		binding := str(e["protocolBinding"])
		if binding == "" {
			binding = str(e["transport"])
		}
		add(str(e["url"]), binding, str(e["protocolVersion"]), v1)
	}
	// v0.3 cards without a protocolVersion are the older, pre-1.0 shape.
	v03 := top
	if v03 == "" {
		v03 = "0.3"
	}
	if u := str(card["url"]); u != "" {
		t := str(card["preferredTransport"])
		if t == "" {
			t = A2AJSONRPC
		}
		add(u, t, "", v03)
	}
	entries = nil
	_ = json.Unmarshal(card["additionalInterfaces"], &entries)
	for _, e := range entries {
		add(str(e["url"]), str(e["transport"]), "", v03)
	}
	return list, unusable, true
}

// a2aBinding normalises how cards spell a binding (jsonrpc, JSON-RPC, grpc, REST…).
func a2aBinding(b string) string {
	k := strings.ToUpper(strings.TrimSpace(b))
	switch strings.NewReplacer("-", "", "_", "", " ", "").Replace(k) {
	case "JSONRPC", "JSONRPC2.0", "":
		return A2AJSONRPC
	case "HTTP+JSON", "HTTPJSON", "REST", "HTTP":
		return A2AHTTPJSON
	case "GRPC":
		return A2AGRPC
	}
	return clip.To(k, a2aMaxText)
}

func a2aAbsolute(raw string, base *url.URL) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return ""
	}
	u.Fragment = ""
	return u.String()
}

// a2aReadReply reads the answer to the probe's request (id 1) with the one
// JSON-RPC reader (mcpcard.ReadReply: a JSON body or the first event of a
// stream that holds a reply); nil when there is none, or it answers another
// request.
func a2aReadReply(contentType string, body []byte) *A2AReply {
	rep, err := mcpcard.ReadReply(contentType, body)
	if err != nil || !rep.Answers(1) {
		return nil
	}
	if rep.Error != nil {
		return &A2AReply{Code: rep.Error.Code, Message: clip.To(rep.Error.Message, a2aMaxText)}
	}
	r := &A2AReply{Result: true}
	var card struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(rep.Result, &card) == nil {
		r.ResultName = clip.To(card.Name, a2aMaxText)
	}
	return r
}
