package gather

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentready/agentready/engine/clip"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/parse/mcpcard"
	"github.com/agentready/agentready/engine/parse/wellknown"
	"github.com/agentready/agentready/engine/weburl"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The deep scan's live MCP client: the official Go SDK connects to the
// endpoints the server card declares, the way an agent's host would, and
// lists what they offer. It calls no tool.
//
// The SDK talks HTTP through an *http.Client; its transport here
// (mcpSessionTransport) hands every request to the scan's fetch session, so
// the SDK's traffic has the same address guard, body caps, timeouts and
// request account as every other request of the scan. Nothing dials on its
// own.

// Bounds of the probe. Per endpoint, MaxMCPRequests requests: at most
// MaxMCPRequests-1 POSTs (server/discover, twice when the server names other
// versions, initialize, notifications/initialized, MaxMCPPages pages of each
// of tools, resources and prompts; for an endpoint that asks for a token,
// the request it refused sent again with the scan's token and, when its
// challenge names protected-resource metadata other than the root one, a
// GET of that document), then the DELETE that ends the session, for which
// the last request of the budget is kept. Only a server that sets
// a session on a server/discover answer the client cannot read (so the
// legacy handshake needs a second connection) gets a second DELETE, one
// request over. The transport refuses anything else. Two endpoints, tried
// concurrently, cost at most 40 (42).
const (
	MaxMCPEndpoints = 2
	MaxMCPPages     = 5
	MaxMCPItems     = 200
	MaxMCPRequests  = 20
	// mcpEndpointBudget bounds one endpoint's handshake, lists and close
	// (each request also stops at the session's per-request timeout).
	mcpEndpointBudget = 30 * time.Second
	mcpConnectBudget  = 15 * time.Second
	mcpPageBudget     = 8 * time.Second
	mcpMaxBody        = 1 << 20
	// mcpLegacyVersion is the newest version of the initialize era.
	mcpLegacyVersion = "2025-11-25"
)

// MCPLiveDoc is what the live MCP client found.
type MCPLiveDoc struct {
	CardURL   string            // where the endpoints were declared ("" without a card)
	CardErr   string            // the card was found but could not be read
	Endpoints []MCPLiveEndpoint // the same-site endpoints tried, at most MaxMCPEndpoints
	NotTried  int               // same-site endpoints beyond the cap
	CrossSite []string          // endpoints on another registrable domain, not tried (at most 5)
}

// MCPLiveEndpoint is one endpoint's connection and lists.
type MCPLiveEndpoint struct {
	URL string
	// Era is "modern" (stateless 2026-07-28, server/discover), "legacy"
	// (initialize: 2025-11-25 and earlier) or "" when neither worked.
	Era             string
	ProtocolVersion string
	Server          string // serverInfo name, when given (capped)
	// ModernFailure says why server/discover did not answer, when the
	// legacy handshake was needed or nothing worked.
	ModernFailure string
	Failure       string // why no session came up ("" when one did)
	HandshakeMS   int64
	Calls         []MCPCall // every HTTP exchange, in order
	Lists         []MCPList // tools, resources, prompts
	Tools         []MCPLiveTool
	// ToolsDropped counts tools in the server's answers that the SDK client
	// refused to hand over (null entries, invalid x-mcp-header annotations):
	// an agent built on it never sees them.
	ToolsDropped int
	// ToolsUndeclared: tools/list answered although the capabilities did not
	// declare tools (clients that follow the capabilities never ask).
	ToolsUndeclared bool
	// AuthIssuer is set when the endpoint answered 401 with a Bearer
	// challenge and the scan's token (OAuthToken) was sent from then on: the
	// authorization server that issued it, which the endpoint's
	// protected-resource metadata lists.
	AuthIssuer string
	// AuthNote says why no token was sent to an endpoint that answered 401.
	AuthNote string
}

// MCPCall is one HTTP exchange of the client.
type MCPCall struct {
	Method     string // the JSON-RPC method, "response", or the HTTP method (DELETE)
	HTTPStatus int    // 0 when no answer came
	MS         int64
	// Outcome is a short plain phrase: "result", "accepted", "JSON-RPC
	// error -32601 (method not found)", "HTTP 500", "an HTML page instead of
	// JSON-RPC", "not sent: …".
	Outcome string
}

// MCPList is one paginated list.
type MCPList struct {
	Kind    string // "tools", "resources", "prompts"
	Offered bool   // the capabilities declare it (tools are asked for anyway)
	Tried   bool
	Pages   int
	Items   int
	Capped  bool   // more pages were left after MaxMCPPages or MaxMCPItems
	Failure string // why a page failed ("" when every page answered)
	MS      int64  // all its pages
}

// MCPLiveTool is a listed tool, with its schema as the server gave it.
type MCPLiveTool struct {
	Name        string
	InputSchema any // decoded JSON: nil when the tool had none
}

// MCPLive is the live MCP client's artifact.
var MCPLive = NewKey[*MCPLiveDoc]("deep-mcp-live")

var mcpLiveGatherer = deepGatherer(Define(MCPLive, "Connects to at most two same-site MCP endpoints the server card declares with the official Go SDK client (modern stateless 2026-07-28 first, then the legacy initialize handshake) and lists tools, resources and prompts (at most 5 pages or 200 items each); calls no tool. An endpoint that asks for a token (401 with a Bearer challenge) gets the scan's one token, when its protected-resource metadata lists the authorization server that issued it.", []AnyKey{MCPCard, OAuthMeta, OAuthToken},
	func(c *Ctx) (*MCPLiveDoc, error) {
		card, meta, tok := Get(c, MCPCard), Get(c, OAuthMeta), Get(c, OAuthToken)
		out := &MCPLiveDoc{}
		if card == nil || card.Resp == nil || !card.Resp.Found() {
			return out, nil
		}
		out.CardURL = card.Resp.FinalURL
		if card.Card == nil {
			if card.Err != nil {
				out.CardErr = card.Err.Error()
			}
			return out, nil
		}
		var tryURLs []string
		for _, e := range card.Card.Endpoints {
			switch {
			case slices.Contains(tryURLs, e):
			case !weburl.SameSite(c.Site.Target, e):
				if len(out.CrossSite) < 5 && !slices.Contains(out.CrossSite, e) {
					out.CrossSite = append(out.CrossSite, e)
				}
			case len(tryURLs) < MaxMCPEndpoints:
				tryURLs = append(tryURLs, e)
			default:
				out.NotTried++
			}
		}
		out.Endpoints = make([]MCPLiveEndpoint, len(tryURLs))
		var wg sync.WaitGroup
		for i, u := range tryURLs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out.Endpoints[i] = liveMCP(c, u, &mcpAuth{meta: meta, tok: tok})
			}()
		}
		wg.Wait()
		return out, nil
	}))

// liveMCP connects to one endpoint, lists what it offers and closes.
func liveMCP(c *Ctx, endpoint string, auth *mcpAuth) (ep MCPLiveEndpoint) {
	ep = MCPLiveEndpoint{URL: endpoint}
	ctx, cancel := context.WithTimeout(c, mcpEndpointBudget)
	defer cancel()
	tr := &mcpSessionTransport{c: c, endpoint: endpoint, last: c.base, auth: auth}
	defer func() { ep.AuthIssuer, ep.AuthNote = auth.outcome() }()
	client := mcp.NewClient(&mcp.Implementation{Name: "agentready", Version: "1.0"}, &mcp.ClientOptions{
		// Advertise nothing: the server has no reason to call back.
		Capabilities:   &mcp.ClientCapabilities{},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	connection := func() *mcp.StreamableClientTransport {
		return &mcp.StreamableClientTransport{
			Endpoint: endpoint,
			// The session already followed redirects (through the guard).
			HTTPClient: &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
			// No standalone GET stream and no reconnection: one answer per
			// request, read whole by the session (and bounded by its caps).
			DisableStandaloneSSE: true,
			MaxRetries:           -1,
		}
	}
	cctx, ccancel := context.WithTimeout(ctx, mcpConnectBudget)
	defer ccancel()
	start := time.Now()
	cs, err := client.Connect(cctx, connection(), nil)
	calls := tr.calls()
	if _, tried := lastCall(calls, "initialize"); err != nil && !tried && cctx.Err() == nil {
		// The SDK falls back to initialize by itself when server/discover is
		// refused, but an answer it cannot read at all (an HTML page, a body
		// that is not JSON-RPC) breaks its connection first: the legacy
		// handshake then gets a connection of its own.
		cs, err = client.Connect(cctx, connection(), &mcp.ClientSessionOptions{ProtocolVersion: mcpLegacyVersion})
		calls = tr.calls()
	}
	ep.HandshakeMS = time.Since(start).Milliseconds()
	ep.ModernFailure = modernFailure(calls)
	ccancel()
	if err != nil {
		ep.Failure = connectFailure(calls, cctx.Err(), err)
		ep.Calls = calls
		return ep
	}
	ir := cs.InitializeResult()
	ep.ProtocolVersion = ir.ProtocolVersion
	// The era is the handshake that opened the session, not the version
	// named in it: initialize never opens a stateless session.
	ep.Era = "legacy"
	if _, legacy := lastCall(calls, "initialize"); !legacy {
		ep.Era, ep.ModernFailure = "modern", ""
	}
	if ir.ServerInfo != nil {
		ep.Server = clip.To(ir.ServerInfo.Name, 80)
	}
	caps := ir.Capabilities
	if caps == nil {
		caps = &mcp.ServerCapabilities{}
	}
	tools := MCPList{Kind: "tools", Offered: caps.Tools != nil, Tried: true}
	resources := MCPList{Kind: "resources", Offered: caps.Resources != nil, Tried: caps.Resources != nil}
	prompts := MCPList{Kind: "prompts", Offered: caps.Prompts != nil, Tried: caps.Prompts != nil}
	var wg sync.WaitGroup
	// The three lists are independent: they run concurrently, each walking
	// its own pages in order.
	wg.Add(3)
	go func() {
		defer wg.Done()
		paginate(ctx, &tools, tr, "tools/list", func(ctx context.Context, cursor string) (string, int, error) {
			res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
			if err != nil {
				return "", 0, err
			}
			for _, t := range res.Tools {
				if len(ep.Tools) < MaxMCPItems {
					ep.Tools = append(ep.Tools, MCPLiveTool{Name: t.Name, InputSchema: t.InputSchema})
				}
			}
			return res.NextCursor, len(res.Tools), nil
		})
	}()
	go func() {
		defer wg.Done()
		if !resources.Tried {
			return
		}
		paginate(ctx, &resources, tr, "resources/list", func(ctx context.Context, cursor string) (string, int, error) {
			res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
			if err != nil {
				return "", 0, err
			}
			return res.NextCursor, len(res.Resources), nil
		})
	}()
	go func() {
		defer wg.Done()
		if !prompts.Tried {
			return
		}
		paginate(ctx, &prompts, tr, "prompts/list", func(ctx context.Context, cursor string) (string, int, error) {
			res, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
			if err != nil {
				return "", 0, err
			}
			return res.NextCursor, len(res.Prompts), nil
		})
	}()
	wg.Wait()
	// A server that does not declare tools and refuses tools/list (or lists
	// none) simply has none: that is not a failure. One that lists tools it
	// never declared hides them from clients that read the capabilities.
	if !tools.Offered {
		if tools.Failure != "" || tools.Items == 0 {
			tools = MCPList{Kind: "tools"}
		} else {
			ep.ToolsUndeclared = true
		}
	}
	ep.Lists = []MCPList{tools, resources, prompts}
	_ = cs.Close()
	ep.Calls = tr.calls()
	ep.ToolsDropped = max(0, tr.rawTools()-tools.Items)
	return ep
}

// paginate walks one list's pages: at most MaxMCPPages, and no further once
// MaxMCPItems items came.
func paginate(ctx context.Context, l *MCPList, tr *mcpSessionTransport, method string, page func(ctx context.Context, cursor string) (next string, n int, err error)) {
	start := time.Now()
	defer func() { l.MS = time.Since(start).Milliseconds() }()
	cursor := ""
	for {
		pctx, cancel := context.WithTimeout(ctx, mcpPageBudget)
		next, n, err := page(pctx, cursor)
		timedOut := pctx.Err() != nil
		cancel()
		if err != nil {
			l.Failure = listFailure(tr.calls(), method, l.Pages, timedOut)
			return
		}
		l.Pages++
		l.Items += n
		if next == "" {
			return
		}
		if l.Pages >= MaxMCPPages || l.Items >= MaxMCPItems {
			l.Capped = true
			return
		}
		cursor = next
	}
}

// mcpSessionTransport is the SDK client's http.RoundTripper: each request
// becomes a fetch.Request on the scan's session. Only POSTs of the client's
// own requests and notifications, and the DELETE that ends a session, go
// out, only to the endpoint, and at most MaxMCPRequests of them; the rest is
// refused without touching the network.
type mcpSessionTransport struct {
	c        *Ctx
	endpoint string
	mu       sync.Mutex
	last     int // the latest round answered
	sent     int
	ended    []string // sessions whose DELETE went out
	log      []MCPCall
	tools    int      // tools in tools/list answers, before the SDK filters them
	auth     *mcpAuth // the scan's token, for an endpoint that asks for one
}

func (t *mcpSessionTransport) calls() []MCPCall {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.log)
}

func (t *mcpSessionTransport) rawTools() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tools
}

func (t *mcpSessionTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(io.LimitReader(req.Body, mcpMaxBody))
		req.Body.Close()
		if err != nil {
			return nil, err
		}
	}
	method := req.Method
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if req.Method == http.MethodPost && json.Unmarshal(body, &msg) == nil {
		method = msg.Method
		if method == "" {
			method = "response"
		}
	}
	refuse := func(why string) (*http.Response, error) {
		t.mu.Lock()
		t.log = append(t.log, MCPCall{Method: method, Outcome: "not sent: " + why})
		t.mu.Unlock()
		return nil, errors.New("not sent: " + why)
	}
	switch {
	case req.URL.String() != t.endpoint:
		return refuse("not the declared endpoint")
	case req.Method == http.MethodDelete && req.Header.Get("Mcp-Session-Id") != "":
		// Ending the session the handshake opened is the protocol's own
		// clean-up (the spec asks clients to), not a write to the site.
	case req.Method != http.MethodPost:
		return refuse(req.Method + " is not used by this probe")
	case method == "response":
		// The server asked the client something (a ping, roots, sampling):
		// the probe answers nothing, so a server cannot make it send more.
		return refuse("the probe answers no server request")
	}
	t.mu.Lock()
	// The last request of the budget is kept for the DELETE, so however
	// many pages a server makes the client ask for, a session it opened is
	// ended. A DELETE goes out once per session, and there are at most two
	// (the legacy handshake's second connection opens its own).
	if req.Method == http.MethodDelete {
		id := req.Header.Get("Mcp-Session-Id")
		if slices.Contains(t.ended, id) || len(t.ended) == 2 {
			t.mu.Unlock()
			return refuse("the session was already ended")
		}
		t.ended = append(t.ended, id)
	} else if t.sent >= MaxMCPRequests-1 {
		t.mu.Unlock()
		return refuse("the probe's request limit was reached")
	}
	t.sent++
	round := t.last + 1
	t.mu.Unlock()

	freq := fetch.Request{Method: req.Method, URL: t.endpoint, Accept: req.Header.Get("Accept"), Body: body,
		Header: map[string]string{}, MaxBody: mcpMaxBody, Round: round,
		// No Origin: MCP servers rightly refuse browser origins (DNS-rebinding protection).
		NoOrigin: true}
	for k, vs := range req.Header {
		switch http.CanonicalHeaderKey(k) {
		case "Accept", "Accept-Encoding", "User-Agent", "Origin", "Content-Length", "Host", "Authorization", "Cookie":
			continue
		}
		if len(vs) > 0 {
			freq.Header[k] = vs[0]
		}
	}
	// The request stops with the SDK's call or with the scan, whichever ends first.
	ctx, cancel := context.WithCancel(req.Context())
	defer cancel()
	stop := context.AfterFunc(t.c.Context, cancel)
	defer stop()
	authorized := t.auth.authorize(&freq)
	r := t.send(ctx, freq, method, msg.ID != nil)
	if !authorized && r.Err == nil && r.Status == http.StatusUnauthorized && req.Method != http.MethodDelete && t.auth.answer(t, r) {
		// The endpoint asked for a token and the scan holds one from an
		// authorization server its metadata lists: the same request again,
		// with it, as an agent would after the challenge.
		t.mu.Lock()
		again := t.sent < MaxMCPRequests-1
		if again {
			t.sent++
			freq.Round = t.last + 1
		}
		t.mu.Unlock()
		freq.Header = maps.Clone(freq.Header)
		if again && t.auth.authorize(&freq) {
			r = t.send(ctx, freq, method, msg.ID != nil)
		}
	}
	if r.Err != nil {
		return nil, r.Err
	}
	h := r.Header.Clone()
	// The session decoded the body; the SDK must not try again.
	h.Del("Content-Encoding")
	h.Del("Content-Length")
	return &http.Response{
		Status: strconv.Itoa(r.Status) + " " + http.StatusText(r.Status), StatusCode: r.Status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(r.Body)), ContentLength: int64(len(r.Body)), Request: req,
	}, nil
}

// send makes one request of the client on the scan's session and logs it.
func (t *mcpSessionTransport) send(ctx context.Context, freq fetch.Request, method string, call bool) *fetch.Response {
	r := t.c.sess.Do(ctx, freq)
	t.c.mu.Lock()
	t.c.last = max(t.c.last, r.Round)
	t.c.mu.Unlock()

	logged := MCPCall{Method: method, HTTPStatus: r.Status, MS: r.Elapsed.Milliseconds(), Outcome: exchangeOutcome(r, call)}
	tools := 0
	if method == "tools/list" && logged.Outcome == "result" {
		tools = rawToolCount(r)
	}
	t.mu.Lock()
	t.last = max(t.last, r.Round)
	t.log = append(t.log, logged)
	t.tools += tools
	t.mu.Unlock()
	return r
}

// mcpAuth holds the scan's token for one endpoint. The token is sent only
// after the endpoint asked for one (401 with a Bearer challenge), and only
// when the endpoint's protected-resource metadata (the challenge's
// resource_metadata, else the site's root one) lists the authorization
// server that issued it, however it spells that server: the scan obtains
// one token and never a second, for this endpoint or any other.
type mcpAuth struct {
	meta *OAuthMetadata
	tok  *OAuthTokenDoc

	once   sync.Once
	mu     sync.Mutex
	header string // the Authorization header, once the endpoint asked for it
	note   string // why no token was sent, when the endpoint asked
}

// authorize adds the token to freq once the endpoint has asked for it, and
// stops freq from following a redirect (a token never leaves for wherever
// a site points). It reports whether it did.
func (a *mcpAuth) authorize(freq *fetch.Request) bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	h := a.header
	a.mu.Unlock()
	if h == "" {
		return false
	}
	freq.Header["Authorization"] = h
	freq.NoRedirect = true
	return true
}

// answer decides, at the endpoint's first 401, whether the scan's token
// answers its challenge; later 401s wait for that decision and share it.
func (a *mcpAuth) answer(t *mcpSessionTransport, r *fetch.Response) bool {
	if a == nil {
		return false
	}
	a.once.Do(func() {
		h, note := a.choose(t, r)
		a.mu.Lock()
		a.header, a.note = h, note
		a.mu.Unlock()
	})
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.header != ""
}

// outcome is the issuer whose token the endpoint got, or why it got none.
func (a *mcpAuth) outcome() (issuer, note string) {
	if a == nil {
		return "", ""
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.header != "" {
		return clip.To(a.tok.Issuer, 160), ""
	}
	return "", a.note
}

func (a *mcpAuth) choose(t *mcpSessionTransport, r *fetch.Response) (header, note string) {
	b, ok := Bearer(ParseChallenges(r.Header.Values("WWW-Authenticate")))
	if !ok {
		return "", "it answered 401 without a Bearer challenge, so an agent cannot tell where to get a token"
	}
	switch tok := a.tok; {
	case tok == nil || tok.Issuer == "":
		return "", "the deep scan found no authorization-server metadata it may use, so it holds no token"
	case tok.Skip != "":
		return "", "the authorization server's token endpoint was not contacted (" + tok.Skip + "), so the deep scan holds no token"
	case !tok.Grant:
		return "", "its authorization server does not advertise anonymous client credentials, so the deep scan holds no token (agents need registered credentials)"
	case !tok.Usable():
		return "", "the deep scan's one token request to " + clip.To(tok.Endpoint, 160) + " gave no token (oauth.challenge says why)"
	}
	rm := b.Params["resource_metadata"]
	var prm *wellknown.OAuthFields
	where := rm
	switch {
	case rm == "" || (a.meta != nil && a.meta.PRM != nil && SameServer(rm, a.meta.PRM.RequestURL)):
		if a.meta != nil && a.meta.PRM != nil {
			where = a.meta.PRM.RequestURL
			prm = a.meta.PRMFields
		}
		if prm == nil {
			return "", "no protected-resource metadata names its authorization server"
		}
	case !weburl.SameSite(t.c.Site.Target, rm):
		return "", "its challenge's resource_metadata " + clip.To(rm, 160) + " is on another site, which the deep scan does not contact"
	default:
		md, ok := t.metadata(rm, r)
		if !ok {
			return "", "its challenge's resource_metadata " + clip.To(rm, 160) + " could not be read"
		}
		prm = md
	}
	for _, as := range prm.AuthorizationServers {
		if a.tok.IssuedBy(as) {
			return a.tok.authorization(), ""
		}
	}
	return "", fmt.Sprintf("its protected-resource metadata (%s) does not list the authorization server %s, whose token the deep scan holds (it obtains one token per scan)",
		clip.To(where, 160), clip.To(a.tok.Issuer, 160))
}

// metadata fetches the protected-resource metadata a challenge names,
// within the endpoint's request budget.
func (t *mcpSessionTransport) metadata(rm string, after *fetch.Response) (*wellknown.OAuthFields, bool) {
	t.mu.Lock()
	if t.sent >= MaxMCPRequests-1 {
		t.mu.Unlock()
		return nil, false
	}
	t.sent++
	t.mu.Unlock()
	r := t.c.Fetch(fetch.Request{URL: rm, Accept: acceptJSON, MaxBody: 64 << 10, Round: After(after)})
	outcome := "result"
	switch {
	case r.Err != nil:
		outcome = "no answer: " + fetch.Describe(r.Err)
	case !r.Found():
		outcome = "HTTP " + strconv.Itoa(r.Status)
	}
	t.mu.Lock()
	t.last = max(t.last, r.Round)
	t.log = append(t.log, MCPCall{Method: "GET resource_metadata", HTTPStatus: r.Status, MS: r.Elapsed.Milliseconds(), Outcome: outcome})
	t.mu.Unlock()
	if !r.Found() {
		return nil, false
	}
	f := oauthFieldsOf(r)
	return f, f != nil
}

// exchangeOutcome words what one answer was, for messages.
func exchangeOutcome(r *fetch.Response, call bool) string {
	if r.Err != nil {
		return "no answer: " + fetch.Describe(r.Err)
	}
	rep, rerr := mcpcard.ReadReply(r.ContentType(), r.Body)
	status := ""
	if r.Status < 200 || r.Status > 299 {
		status = "HTTP " + strconv.Itoa(r.Status)
		if rerr == nil && rep.Error != nil {
			status += " with " + rpcError(rep.Error.Code)
		}
		return status
	}
	if !r.Complete() {
		if r.Cut != "" {
			return "an answer that was cut (" + r.Cut + ")"
		}
		return "an answer that did not finish arriving"
	}
	if !call {
		return "accepted"
	}
	ct := r.ContentType()
	switch {
	case r.LooksHTML():
		return "an HTML page instead of JSON-RPC"
	case ct != "application/json" && ct != "text/event-stream":
		if ct == "" {
			return "an answer without a Content-Type (application/json or text/event-stream expected)"
		}
		return "Content-Type " + strconv.Quote(clip.To(ct, 40)) + " instead of application/json or text/event-stream"
	case rerr != nil:
		return "a body that holds no JSON-RPC response"
	case rep.Error != nil:
		return rpcError(rep.Error.Code)
	}
	return "result"
}

func rpcError(code int) string {
	names := map[int]string{-32700: "parse error", -32600: "invalid request", -32601: "method not found", -32602: "invalid params", -32603: "internal error", -32002: "resource not found"}
	if n, ok := names[code]; ok {
		return fmt.Sprintf("JSON-RPC error %d (%s)", code, n)
	}
	return fmt.Sprintf("JSON-RPC error %d", code)
}

// rawToolCount is how many entries a tools/list answer's tools array has.
func rawToolCount(r *fetch.Response) int {
	rep, err := mcpcard.ReadReply(r.ContentType(), r.Body)
	if err != nil {
		return 0
	}
	var res struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(rep.Result, &res) != nil {
		return 0
	}
	return len(res.Tools)
}

func lastCall(calls []MCPCall, method string) (MCPCall, bool) {
	for i := len(calls) - 1; i >= 0; i-- {
		if calls[i].Method == method {
			return calls[i], true
		}
	}
	return MCPCall{}, false
}

// modernFailure says why server/discover did not open a modern session
// ("" when it was not tried or it answered).
func modernFailure(calls []MCPCall) string {
	d, ok := lastCall(calls, "server/discover")
	switch {
	case !ok:
		return ""
	case d.Outcome == "result":
		// It answered, but with no version the client speaks.
		return "server/discover answered without offering protocol version " + mcpcard.ModernVersion
	}
	return "server/discover got " + d.Outcome
}

// connectFailure says why no session came up, from what the exchanges
// showed; the SDK's own error text never reaches a report.
func connectFailure(calls []MCPCall, ctxErr, err error) string {
	var parts []string
	if d, ok := lastCall(calls, "server/discover"); ok && d.Outcome != "result" {
		parts = append(parts, "server/discover got "+d.Outcome)
	}
	in, ok := lastCall(calls, "initialize")
	switch {
	case ok && in.Outcome != "result":
		parts = append(parts, "initialize got "+in.Outcome)
	case ok && strings.Contains(err.Error(), "unsupported protocol version"):
		parts = append(parts, "initialize answered with a protocol version no MCP release defines")
	case ok:
		if n, ok := lastCall(calls, "notifications/initialized"); ok && n.Outcome != "accepted" {
			parts = append(parts, "notifications/initialized got "+n.Outcome)
		} else if errors.Is(ctxErr, context.DeadlineExceeded) {
			parts = append(parts, fmt.Sprintf("the handshake did not finish within %s", mcpConnectBudget))
		} else {
			parts = append(parts, "initialize answered with a result that is not a valid MCP initialize result")
		}
	case errors.Is(ctxErr, context.DeadlineExceeded):
		parts = append(parts, fmt.Sprintf("the handshake did not finish within %s", mcpConnectBudget))
	}
	if len(parts) == 0 {
		return "the handshake did not complete"
	}
	return strings.Join(parts, "; ")
}

// listFailure says why a page of a list failed.
func listFailure(calls []MCPCall, method string, pagesDone int, timedOut bool) string {
	which := method
	if pagesDone > 0 {
		which = fmt.Sprintf("%s (page %d)", method, pagesDone+1)
	}
	c, ok := lastCall(calls, method)
	switch {
	case ok && c.Outcome != "result":
		return which + " got " + c.Outcome
	case timedOut:
		return fmt.Sprintf("%s did not answer within %s", which, mcpPageBudget)
	case ok:
		return which + " answered with a result that is not a valid list"
	}
	return which + " could not be sent"
}
