package gather

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/parse/mcpcard"
	"github.com/agentready/agentready/engine/weburl"
)

// The MCP family: the MCP server card (well-known paths and <link rel=mcp>)
// and a live handshake with the same-site endpoint it names. Its checks are
// in engine/checks/mcp.go.

// MCPCardDoc is the MCP server card and what the live handshake showed.
type MCPCardDoc struct {
	Resp  *fetch.Response
	Card  *mcpcard.Card
	Err   error
	Probe MCPProbe
}

var mcpDefaultGatherer = Define(mcpDefault, "GET "+MCPPaths[0]+", the first path of the MCP server card search.", nil,
	func(c *Ctx) (*fetch.Response, error) { return fetchDoc(c, MCPPaths[0], acceptJSON), nil })

var mcpGatherer = Define(MCPCard, "The MCP server card (/.well-known/mcp/server-card, a <link rel=mcp>, then the other well-known paths) and a live handshake with its same-site endpoint.", []AnyKey{Home, mcpDefault},
	func(c *Ctx) (*MCPCardDoc, error) {
		home := Get(c, Home)
		r := Get(c, mcpDefault)
		if !r.Found() {
			var reqs []fetch.Request
			if home.Page != nil {
				for _, l := range home.Page.Links {
					if l.HasRel("mcp") && weburl.SameSite(c.Site.Target, l.Href) && !strings.HasSuffix(l.Href, MCPPaths[0]) {
						reqs = append(reqs, fetch.Request{URL: l.Href, Accept: acceptJSON, Round: After(r, home.Resp)})
						break
					}
				}
			}
			for _, p := range MCPPaths[1:] {
				reqs = append(reqs, fetch.Request{URL: c.URL(p), Accept: acceptJSON, Round: After(r, home.Resp)})
			}
			if f, _ := c.FirstFound(reqs, found); f != nil {
				r = f
			}
		}
		out := &MCPCardDoc{Resp: r}
		if !r.Found() {
			return out, nil
		}
		out.Card, out.Err = mcpcard.Parse(r.Body, baseOf(r))
		if out.Card == nil {
			return out, nil
		}
		for _, e := range out.Card.Endpoints {
			if weburl.SameSite(c.Site.Target, e) {
				out.Probe = probeMCP(c, e, r, out.Card)
				break
			}
		}
		return out, nil
	})

// probeMCP shakes hands with a card's endpoint in both protocol eras and
// lists its tools when the card does not. A stateful server opens a session
// with the initialize (even when server/discover answered too): it is ended
// with DELETE whatever happens next, as the transport spec asks of a client
// that no longer needs one.
func probeMCP(c *Ctx, endpoint string, card *fetch.Response, parsed *mcpcard.Card) MCPProbe {
	pr := MCPProbe{Endpoint: endpoint}
	post := func(body []byte, h map[string]string, round int) fetch.Request {
		// No Origin header: MCP servers rightly refuse cross-origin browser calls (DNS-rebinding protection).
		return fetch.Request{Method: http.MethodPost, URL: endpoint, Accept: mcpcard.Accept, Body: body, Header: h, Round: round, MaxBody: 1 << 20, NoOrigin: true}
	}
	db, dh := mcpcard.DiscoverRequest()
	ib, ih := mcpcard.InitializeRequest()
	hs := c.FetchAll([]fetch.Request{post(db, dh, After(card)), post(ib, ih, After(card))})
	modern, legacy := hs[0], hs[1]
	session, last := "", legacy
	if legacy.Err == nil {
		session = mcpcard.SessionID(legacy.Header)
	}
	defer func() {
		if session != "" {
			// Not redirected: a DELETE goes to the endpoint or nowhere.
			c.Fetch(fetch.Request{Method: http.MethodDelete, URL: endpoint, Header: mcpcard.EndSessionHeaders(session),
				NoRedirect: true, NoOrigin: true, MaxBody: 16 << 10, Round: After(last)})
		}
	}()
	// result is the JSON-RPC result answering request id, nil without one.
	result := func(r *fetch.Response, id int) *mcpcard.Reply {
		if !r.OK() {
			return nil
		}
		if rep, err := mcpcard.ReadReply(r.ContentType(), r.Body); err == nil && rep.Error == nil && rep.Answers(id) {
			return rep
		}
		return nil
	}
	pr.Modern, pr.Legacy = result(modern, 1) != nil, result(legacy, 1) != nil
	if !pr.Modern && !pr.Legacy {
		if legacy.Err != nil {
			pr.Error = describe(legacy.Err)
		} else {
			pr.Error = "server/discover answered " + strconv.Itoa(modern.Status) + " and initialize answered " + strconv.Itoa(legacy.Status) + " without a JSON-RPC result"
		}
		return pr
	}
	if len(parsed.Tools) > 0 {
		pr.Tools, pr.ToolsSource = parsed.Tools, "card"
		return pr
	}
	var list *fetch.Response
	if pr.Modern {
		b, h := mcpcard.ModernToolsListRequest()
		list = c.Fetch(post(b, h, After(modern)))
	} else {
		h := map[string]string{"Content-Type": "application/json", "MCP-Protocol-Version": mcpcard.LegacyVersion}
		if session != "" {
			h["Mcp-Session-Id"] = session
		}
		notice := c.Fetch(post([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), h, After(legacy)))
		b, lh := mcpcard.LegacyToolsListRequest(session)
		list = c.Fetch(post(b, lh, After(notice)))
	}
	last = list
	if rep := result(list, 2); rep != nil {
		if tools, err := mcpcard.Tools(rep.Result); err == nil {
			pr.Tools, pr.ToolsSource = tools, "tools/list"
		}
	}
	return pr
}
