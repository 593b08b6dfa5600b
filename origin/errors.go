package origin

import (
	"encoding/json"
	"strconv"

	"github.com/agentready/agentready/engine/report"
	"github.com/valyala/fasthttp"
)

// Error codes the API returns, documented in docs/api.md#error-codes.
const (
	CodeMissingURL        = "missing_url"
	CodeInvalidURL        = "invalid_url"
	CodeInvalidJSON       = "invalid_json"
	CodeUnsupportedMedia  = "unsupported_media_type"
	CodePayloadTooLarge   = "payload_too_large"
	CodeInvalidIdemKey    = "invalid_idempotency_key"
	CodeIdemKeyReused     = "idempotency_key_reused"
	CodeIdemInFlight      = "idempotency_in_flight"
	CodeSiteUnreachable   = "site_unreachable"
	CodeScanCanceled      = "scan_canceled"
	CodeOverloaded        = "overloaded"
	CodeNotFound          = "not_found"
	CodeMethodNotAllowed  = "method_not_allowed"
	CodeNotImplemented    = "not_implemented"
	CodeServedByEdge      = "served_by_edge"
	CodeInvalidToken      = "invalid_token"
	CodeInsufficientScope = "insufficient_scope"
	CodeInternal          = "internal_error"
	CodeShuttingDown      = "shutting_down"
	CodeUnsupportedFormat = "unsupported_format"
	CodeInvalidIdentity   = "invalid_identity"
)

var titles = map[string]string{
	CodeMissingURL:        "Missing url",
	CodeInvalidURL:        "Invalid url",
	CodeInvalidJSON:       "Invalid JSON body",
	CodeUnsupportedMedia:  "Unsupported media type",
	CodePayloadTooLarge:   "Request body too large",
	CodeInvalidIdemKey:    "Invalid Idempotency-Key",
	CodeIdemKeyReused:     "Idempotency-Key reused with another body",
	CodeIdemInFlight:      "Request with this Idempotency-Key still in progress",
	CodeSiteUnreachable:   "Site unreachable",
	CodeScanCanceled:      "Scan canceled",
	CodeOverloaded:        "Scanner busy",
	CodeNotFound:          "Not found",
	CodeMethodNotAllowed:  "Method not allowed",
	CodeNotImplemented:    "Not built yet",
	CodeServedByEdge:      "Served by the edge",
	CodeInvalidToken:      "Unauthorized",
	CodeInsufficientScope: "Forbidden",
	CodeInternal:          "Internal error",
	CodeShuttingDown:      "Server shutting down",
	CodeUnsupportedFormat: "Unsupported format",
	CodeInvalidIdentity:   "Unsigned caller identity",
}

// APIError is an error with its HTTP status and envelope.
type APIError struct {
	Status     int
	Code       string
	Message    string
	RetryAfter int // seconds; 0 = none
}

func (e *APIError) Error() string { return e.Message }

func apiErr(status int, code, msg string) *APIError {
	return &APIError{Status: status, Code: code, Message: msg}
}

// envelope renders the error body.
func (e *APIError) envelope() []byte {
	b, _ := json.Marshal(report.NewError(titles[e.Code], e.Code, e.Message))
	return b
}

func writeError(ctx *fasthttp.RequestCtx, e *APIError) {
	ctx.Response.Reset()
	ctx.SetStatusCode(e.Status)
	ctx.SetContentType("application/json")
	ctx.Response.Header.Set("Cache-Control", "no-store")
	if e.RetryAfter > 0 {
		ctx.Response.Header.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	ctx.SetBody(e.envelope())
}
