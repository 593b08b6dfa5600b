package origin

import (
	"errors"
	"math"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/origin/store"
)

// The origin's names for the codes it answers; apierr owns the values,
// statuses and titles (and docs/api.md documents them).
const (
	CodeMissingURL        = apierr.MissingURL
	CodeInvalidURL        = apierr.InvalidURL
	CodeInvalidJSON       = apierr.InvalidJSON
	CodeUnsupportedMedia  = apierr.UnsupportedMedia
	CodePayloadTooLarge   = apierr.PayloadTooLarge
	CodeInvalidIdemKey    = apierr.InvalidIdempotencyKey
	CodeIdemKeyReused     = apierr.IdempotencyKeyReused
	CodeIdemInFlight      = apierr.IdempotencyInFlight
	CodeSiteUnreachable   = apierr.SiteUnreachable
	CodeScanCanceled      = apierr.ScanCanceled
	CodeOverloaded        = apierr.Overloaded
	CodeNotFound          = apierr.NotFound
	CodeMethodNotAllowed  = apierr.MethodNotAllowed
	CodeNotImplemented    = apierr.NotImplemented
	CodeServedByEdge      = apierr.ServedByEdge
	CodeInvalidToken      = apierr.InvalidToken
	CodeInsufficientScope = apierr.InsufficientScope
	CodeInternal          = apierr.Internal
	CodeShuttingDown      = apierr.ShuttingDown
	CodeUnsupportedFormat = apierr.UnsupportedFormat
	CodeInvalidIdentity   = apierr.InvalidIdentity
	CodeBadRequest        = apierr.BadRequest
	CodeInvalidProfile    = apierr.InvalidProfile
	CodeURLTooLong        = apierr.URLTooLong
	CodeHeadersTooLarge   = apierr.HeadersTooLarge
	CodeRequestTimeout    = apierr.RequestTimeout
	CodeTooManyConns      = apierr.TooManyConnections // answered by internal/connlimit before a request is read
	CodeStateUnavailable  = apierr.StateUnavailable
)

// apiErr is an *apierr.Error answered with status (the one vocabulary of
// refusals: the engine's failed scans, monitors' and payments' refusals
// are the same type, so writeError answers any of them).
func apiErr(status int, code apierr.Code, msg string) *apierr.Error {
	return &apierr.Error{Status: status, Code: code, Message: msg}
}

// stateUnavailable answers a request that needs the state store (scan cache,
// idempotency keys) while the store does not answer.
func stateUnavailable(err error) *apierr.Error {
	return &apierr.Error{Status: 503, Code: CodeStateUnavailable, RetryAfter: retryAfter(err),
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
	if code, ok := ctx.UserValue(errorCodeKey).(apierr.Code); ok {
		s += " " + string(code)
	}
	return s
}

func writeError(ctx *fasthttp.RequestCtx, e *apierr.Error) {
	ctx.SetUserValue(errorCodeKey, e.Code)
	ctx.Response.Reset()
	ctx.SetStatusCode(e.HTTPStatus())
	ctx.SetContentType("application/json")
	ctx.Response.Header.Set("Cache-Control", "no-store")
	if e.RetryAfter > 0 {
		ctx.Response.Header.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	ctx.SetBody(e.Envelope().JSON())
}
