package origin

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"

	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/origin/store"
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
	CodeBadRequest        = "bad_request"
	CodeURLTooLong        = "url_too_long"
	CodeHeadersTooLarge   = "headers_too_large"
	CodeRequestTimeout    = "request_timeout"
	CodeTooManyConns      = "too_many_connections" // answered by internal/connlimit before a request is read
	CodeStateUnavailable  = "state_unavailable"
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
	CodeBadRequest:        "Bad request",
	CodeURLTooLong:        "URL too long",
	CodeHeadersTooLarge:   "Request headers too large",
	CodeRequestTimeout:    "Request timeout",
	CodeTooManyConns:      "Too many connections",
	CodeStateUnavailable:  "State store unavailable",
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

// stateUnavailable answers a request that needs the state store (scan cache,
// idempotency keys) while the store does not answer.
func stateUnavailable(err error) *APIError {
	return &APIError{Status: 503, Code: CodeStateUnavailable, RetryAfter: retryAfter(err),
		Message: "The state store (scan cache, idempotency keys) does not answer; retry after Retry-After seconds."}
}

// retryAfter is how many whole seconds to wait before the store is tried
// again: what the circuit breaker says, at least 1.
func retryAfter(err error) int {
	var ue *store.UnavailableError
	if errors.As(err, &ue) {
		return max(1, int(math.Ceil(ue.RetryAfter.Seconds())))
	}
	return 1
}

const errorCodeKey = "agentready.errorCode"

// outcome is how a request ended, for the audit log: its status, and the
// error code when it failed.
func outcome(ctx *fasthttp.RequestCtx) string {
	s := strconv.Itoa(ctx.Response.StatusCode())
	if code, ok := ctx.UserValue(errorCodeKey).(string); ok {
		s += " " + code
	}
	return s
}

func writeError(ctx *fasthttp.RequestCtx, e *APIError) {
	ctx.SetUserValue(errorCodeKey, e.Code)
	ctx.Response.Reset()
	ctx.SetStatusCode(e.Status)
	ctx.SetContentType("application/json")
	ctx.Response.Header.Set("Cache-Control", "no-store")
	if e.RetryAfter > 0 {
		ctx.Response.Header.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	ctx.SetBody(e.envelope())
}
