package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/edge/identity"
	"github.com/agentready/agentready/edge/mdtext"
	"github.com/agentready/agentready/edge/x402"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/ratelimit"
	"github.com/agentready/agentready/internal/version"
	"github.com/agentready/agentready/origin/store"
)

// Headers the origin sets (never the client) before a request reaches the SDK.
const (
	HeaderCallerTier    = "X-Agentready-Caller-Tier"
	HeaderCallerSubject = "X-Agentready-Caller-Subject"
	HeaderBaseURL       = "X-Agentready-Base-Url"
)

// Deps is what the tools need from the rest of the service.
type Deps struct {
	// ValidateURL applies the API's URL rules and returns the normalised site root.
	ValidateURL func(raw string) (string, error)
	// Scan returns the (possibly cached) report of a normalised URL.
	Scan func(ctx context.Context, url string) (*report.Result, error)
	// Fetch gets one document with the scanner's safety rules.
	Fetch func(ctx context.Context, url, accept string) (*engine.Document, error)
	// Charge takes n scans from the caller's daily allowance.
	Charge  func(ctx context.Context, c identity.Caller, n int) (*ratelimit.Result, error)
	History store.History
	Curated []string // showcase sites chosen by the operator
	Payment x402.Config
	Version string // serverInfo's and the card's (default: version.String(), the build's)
	// Gateway sells a deep scan of url for the x402 payment: the HTTP
	// gateway's own logic. base is the public base URL. It answers as the
	// HTTP gateway would.
	Gateway func(ctx context.Context, url, base string, pay DeepScanPayment) (status int, header map[string]string, body []byte)
	// Audit records each scan-costing tool call: who, which tool, which sites, outcome.
	Audit func(ctx context.Context, c identity.Caller, tool string, urls []string, outcome string)
}

// DeepScanPayment is what a deep_scan call carries in its _meta: the x402
// PaymentPayload as JSON (nil when none was sent), and what proves that a
// replay comes from the buyer (the receipt a settled result returned, or
// the idempotency key the paying call sent).
type DeepScanPayment struct {
	Payload        json.RawMessage
	Receipt        string
	IdempotencyKey string
}

// The _meta members of deep_scan beside x402's own.
const (
	MetaReceipt        = "agentready/payment-receipt"
	MetaIdempotencyKey = "agentready/idempotency-key"
)

// Server is the MCP server and its tool catalogue.
type Server struct {
	d     Deps
	sdk   *mcp.Server
	tools []*mcp.Tool
	h     http.Handler
	raw   http.Handler // the SDK's handler alone (benchmarks compare)
}

// ProtocolVersions are the versions served (newest first): what the SDK
// negotiates, what the MCP-Protocol-Version header may name, and what the
// server card lists.
var ProtocolVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Capabilities is what initialize, server/discover and the server card all
// advertise. The tool list changes only with a deploy, and a stateless server
// could not deliver a list_changed notification anyway; nor can it deliver log
// messages, so logging is not advertised either.
func Capabilities() *mcp.ServerCapabilities {
	return &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: false}}
}

// New builds the server.
func New(d Deps, trustedOrigins ...string) (*Server, error) {
	if d.Version == "" {
		d.Version = version.String()
	}
	s := &Server{d: d}
	s.sdk = mcp.NewServer(&mcp.Implementation{Name: "agentready", Title: "agentready — agent-readiness scanner", Version: d.Version},
		&mcp.ServerOptions{
			Instructions: "Scan websites for AI-agent readiness (48 checks in 4 levels: llms.txt, robots.txt AI rules, OpenAPI, MCP server cards, OAuth metadata, API catalogs, markdown negotiation, structured data) and tell site owners what to fix. Start with scan_url; use get_recommendations for a prioritised fix list. " + monitorInstructions(),
			SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
				c.TTLMs, c.CacheScope = 3_600_000, "public" // the tool list changes only with a deploy
			},
			Capabilities:              Capabilities(),
			SupportedProtocolVersions: ProtocolVersions,
		})
	s.sdk.AddReceivingMiddleware(inertToolText)
	if err := s.register(); err != nil {
		return nil, err
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.sdk },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, MaxRequestBodyBytes: MaxRequestBytes})
	cop := http.NewCrossOriginProtection()
	for _, o := range trustedOrigins {
		if err := cop.AddTrustedOrigin(o); err != nil {
			return nil, err
		}
	}
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeRPCError(w, http.StatusForbidden, nullID, CodeInvalidRequest, msgCrossOrigin)
	}))
	args := map[string][]string{}
	for _, t := range s.tools {
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		raw, _ := t.InputSchema.(json.RawMessage) // addTool stores schemas encoded
		json.Unmarshal(raw, &schema)
		for name := range schema.Properties {
			args[t.Name] = append(args[t.Name], name)
		}
		sort.Strings(args[t.Name])
	}
	s.raw, s.h = h, cop.Handler(&transportGuard{next: h, args: args})
	return s, nil
}

// inertToolText rewrites the text of every tool result with mdtext.JSON.
// The text is the result's JSON, and its strings carry what sites chose
// (titles, names, URLs, messages quoting them); clients show it to people
// and models, often rendered as markdown. Rewritten, it decodes to the same
// value, but renders no link, image, code span or HTML a site wrote, and
// shows bidi and zero-width characters as \u escapes. Text that is not JSON
// (an error's sentence) is left as it is.
func inertToolText(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil {
			for _, c := range r.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					tc.Text = string(mdtext.JSON([]byte(tc.Text)))
				}
			}
		}
		return res, err
	}
}

// Handler serves POST /api/mcp. Every refusal, down to a wrong method (405,
// as a stateless server must answer GET and DELETE), is a JSON-RPC error object.
func (s *Server) Handler() http.Handler { return s.h }

// Tools returns the tool definitions, in registration order.
func (s *Server) Tools() []*mcp.Tool { return s.tools }

// schemaOptions give types whose JSON is not what reflection sees their
// schema: report.Details is a []byte that encodes as a JSON object.
var schemaOptions = &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[report.Details](): {Type: "object", Description: "The evidence the verdict rests on ({} when none); its members depend on the check."},
}}

// inputOptions give input types their schema: a profile is one of
// report.Profiles.
var inputOptions = &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[ProfileName](): {Type: "string", Enum: profileEnum(), Description: profileDescription},
}}

func profileEnum() []any {
	out := make([]any, len(report.Profiles))
	for i, p := range report.Profiles {
		out[i] = p
	}
	return out
}

// addTool registers a tool whose input and output schemas are inferred from
// In and Out, set on the definition (so the server card shows the same
// schemas), and whose handler may return a payment-required result in place of
// Out (nil out).
func addTool[In, Out any](s *Server, t *mcp.Tool, h func(context.Context, *mcp.CallToolRequest, In) (*mcp.CallToolResult, *Out, error)) error {
	in, err := jsonschema.For[In](inputOptions)
	if err != nil {
		return fmt.Errorf("%s input schema: %w", t.Name, err)
	}
	out, err := jsonschema.For[Out](schemaOptions)
	if err != nil {
		return fmt.Errorf("%s output schema: %w", t.Name, err)
	}
	// Pre-encoded schemas: tools/list then copies bytes instead of re-encoding
	// nested schema structs on every call (that was 90% of its cost).
	if t.InputSchema, err = compact(in); err != nil {
		return err
	}
	if t.OutputSchema, err = compact(out); err != nil {
		return err
	}
	mcp.AddTool(s.sdk, t, func(ctx context.Context, req *mcp.CallToolRequest, input In) (_ *mcp.CallToolResult, _ any, err error) {
		// The SDK runs tools on its own goroutines and recovers nothing: a
		// panic in one would end the whole process.
		defer func() {
			if p := recover(); p != nil {
				slog.Error("MCP tool panicked", "tool", t.Name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				err = errors.New("the tool failed unexpectedly; retry, and report it if it persists")
			}
		}()
		res, o, err := h(ctx, req, input)
		if err != nil || o == nil {
			return res, nil, err
		}
		return res, o, nil
	})
	s.tools = append(s.tools, t)
	return nil
}

func compact(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ToolError is a tool failure the caller can act on (invalid URL, unreachable site).
type ToolError struct{ Msg string }

func (e *ToolError) Error() string { return e.Msg }

func callerOf(req *mcp.CallToolRequest) identity.Caller {
	c := identity.Caller{Tier: identity.Anonymous, Subject: "unknown"}
	if req.Extra != nil && req.Extra.Header != nil {
		if t := req.Extra.Header.Get(HeaderCallerTier); t != "" {
			c.Tier = identity.Tier(t)
		}
		if sub := req.Extra.Header.Get(HeaderCallerSubject); sub != "" {
			c.Subject = sub
		}
	}
	return c
}

func baseOf(req *mcp.CallToolRequest) string {
	if req.Extra != nil && req.Extra.Header != nil {
		if b := req.Extra.Header.Get(HeaderBaseURL); b != "" {
			return strings.TrimSuffix(b, "/")
		}
	}
	return ""
}

// paymentRequired is the x402-over-MCP answer: isError with the v2
// PaymentRequired object as structuredContent and the same JSON as text.
func (s *Server) paymentRequired(req *mcp.CallToolRequest, reason string) *mcp.CallToolResult {
	pr := s.d.Payment.Required(baseOf(req), reason)
	b, _ := json.Marshal(pr)
	return &mcp.CallToolResult{IsError: true, StructuredContent: json.RawMessage(b), Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
}

// charge takes one scan per site in urls; a nil result means go ahead,
// otherwise return it (the x402 payment-required result).
func (s *Server) charge(ctx context.Context, req *mcp.CallToolRequest, urls ...string) (pay *mcp.CallToolResult, err error) {
	c := callerOf(req)
	defer func() {
		if s.d.Audit != nil {
			outcome := "charged"
			switch {
			case err != nil:
				outcome = "error"
			case pay != nil:
				outcome = "payment_required"
			}
			s.d.Audit(ctx, c, req.Params.Name, urls, outcome)
		}
	}()
	if s.d.Charge == nil {
		return nil, nil
	}
	r, err := s.d.Charge(ctx, c, len(urls))
	if err != nil {
		return nil, fmt.Errorf("the allowance store does not answer; retry shortly: %w", err)
	}
	if r.Allowed == 0 && s.d.Payment.PayTo == "" {
		// Nothing is sold here: say when the allowance comes back, and advertise no payment.
		// Worded and counted as the HTTP refusal is (apierr.RetryAt), so
		// the message agrees with the response's RateLimit-Reset.
		return nil, &ToolError{fmt.Sprintf("The daily allowance of %d scans is used up (%d needed, %d left); retry after %s, or use a bearer token or an API key for a higher allowance.",
			r.Limit.Rate, len(urls), r.Remaining, apierr.RetryAt(time.Now(), apierr.WaitSeconds(r.RetryAfter)))}
	}
	if r.Allowed == 0 {
		return s.paymentRequired(req, fmt.Sprintf("The daily allowance of %d scans is used up (%d needed, %d left); pay per scan over x402, or retry after %s.",
			r.Limit.Rate, len(urls), r.Remaining, apierr.RetryAt(time.Now(), apierr.WaitSeconds(r.RetryAfter)))), nil
	}
	return nil, nil
}

// site validates a url argument.
func (s *Server) site(raw string) (string, error) {
	if strings.TrimSpace(raw) == "" {
		return "", &ToolError{"url is required: give a domain such as example.com or a full http(s) URL"}
	}
	u, err := s.d.ValidateURL(raw)
	if err != nil {
		return "", &ToolError{"invalid url: " + err.Error()}
	}
	return u, nil
}

// scanErr turns a scan failure into a helpful tool error.
func scanErr(url string, err error) error {
	var se *apierr.Error
	if errors.As(err, &se) {
		switch se.Code {
		case apierr.SiteUnreachable:
			msg := "site unreachable: " + se.Message + ". Check that the site is up and publicly reachable, then retry."
			if se.Docs != "" {
				msg += " See " + se.Docs
			}
			return &ToolError{msg}
		case apierr.InvalidURL:
			return &ToolError{"invalid url: " + se.Message}
		}
	}
	return fmt.Errorf("scanning %s failed: %w", url, err)
}

func docURL(site, path string) string {
	u, err := url.Parse(site)
	if err != nil {
		return site
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = path
	}
	return u.String()
}
