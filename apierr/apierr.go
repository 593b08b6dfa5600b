// Package apierr is the service's one error vocabulary: the envelope every
// transport answers with ({error, code, message, docs}), the stable codes,
// their HTTP statuses and titles. It has no dependencies beyond the standard
// library so the engine, the edge (compiled to WebAssembly), the origin, the
// wasm host and the CLI can all share it; docs/api.md lists the same codes
// and a test keeps the two in step.
package apierr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
)

// DocsURL is where every code is explained.
const DocsURL = "https://github.com/agentready/agentready/blob/main/docs/api.md#error-codes"

// Code is a stable, machine-readable error code.
type Code string

// The codes, grouped by status.
const (
	MissingURL            Code = "missing_url"
	InvalidURL            Code = "invalid_url"
	InvalidJSON           Code = "invalid_json"
	UnsupportedFormat     Code = "unsupported_format"
	InvalidIdempotencyKey Code = "invalid_idempotency_key"
	BadRequest            Code = "bad_request"
	InvalidProfile        Code = "invalid_profile"

	InvalidIdentity Code = "invalid_identity"
	InvalidAPIKey   Code = "invalid_api_key"
	InvalidToken    Code = "invalid_token"

	PaymentRequired      Code = "payment_required"
	InsufficientScope    Code = "insufficient_scope"
	CredentialsRequired  Code = "credentials_required"
	CrossSiteRequest     Code = "cross_site_request"
	NotFound             Code = "not_found"
	MethodNotAllowed     Code = "method_not_allowed"
	RequestTimeout       Code = "request_timeout"
	IdempotencyInFlight  Code = "idempotency_in_flight"
	PayloadTooLarge      Code = "payload_too_large"
	URLTooLong           Code = "url_too_long"
	UnsupportedMedia     Code = "unsupported_media_type"
	ServedByEdge         Code = "served_by_edge"
	NoScreenshot         Code = "no_screenshot"
	SiteUnreachable      Code = "site_unreachable"
	IdempotencyKeyReused Code = "idempotency_key_reused"
	TooManyConnections   Code = "too_many_connections"
	HeadersTooLarge      Code = "headers_too_large"

	Internal               Code = "internal_error"
	NotImplemented         Code = "not_implemented"
	OriginUnavailable      Code = "origin_unavailable"
	Overloaded             Code = "overloaded"
	ScanCanceled           Code = "scan_canceled"
	ShuttingDown           Code = "shutting_down"
	RateLimiterUnavailable Code = "rate_limiter_unavailable"
	StateUnavailable       Code = "state_unavailable"
	BrowserUnavailable     Code = "browser_unavailable"
	Busy                   Code = "busy"

	InvalidPath Code = "invalid_path"
	// Monitors
	InvalidCallbackURL Code = "invalid_callback_url"
	InvalidCadence     Code = "invalid_cadence"
	CadenceTooShort    Code = "cadence_too_short"
	InvalidEvents      Code = "invalid_events"
	TooManyMonitors    Code = "too_many_monitors"
	MonitorDisabled    Code = "monitor_disabled"
	DeliveryInFlight   Code = "delivery_in_flight"
	// Payments
	PaymentInvalid         Code = "payment_invalid"
	PaymentsDisabled       Code = "payments_disabled"
	FacilitatorUnavailable Code = "facilitator_unavailable"
	AllowanceExhausted     Code = "allowance_exhausted"

	// The token endpoint answers RFC 6749 §5.2 codes; their envelope's
	// `error` is the code itself, as OAuth clients expect.
	OAuthInvalidRequest         Code = "invalid_request"
	OAuthUnsupportedGrantType   Code = "unsupported_grant_type"
	OAuthInvalidScope           Code = "invalid_scope"
	OAuthSlowDown               Code = "slow_down"
	OAuthTemporarilyUnavailable Code = "temporarily_unavailable"
	OAuthServerError            Code = "server_error"
)

type info struct {
	status int
	title  string
}

var catalog = map[Code]info{
	MissingURL:                  {400, "Missing url"},
	InvalidURL:                  {400, "Invalid url"},
	InvalidJSON:                 {400, "Invalid JSON body"},
	UnsupportedFormat:           {400, "Unsupported format"},
	InvalidIdempotencyKey:       {400, "Invalid Idempotency-Key"},
	BadRequest:                  {400, "Bad request"},
	InvalidProfile:              {400, "Invalid profile"},
	InvalidIdentity:             {401, "Unsigned caller identity"},
	InvalidAPIKey:               {401, "Invalid API key"},
	InvalidToken:                {401, "Unauthorized"},
	CredentialsRequired:         {401, "Credentials required"},
	PaymentRequired:             {402, "Payment required"},
	InsufficientScope:           {403, "Forbidden"},
	CrossSiteRequest:            {403, "Cross-site request"},
	NotFound:                    {404, "Not found"},
	MethodNotAllowed:            {405, "Method not allowed"},
	RequestTimeout:              {408, "Request timeout"},
	IdempotencyInFlight:         {409, "Request with this Idempotency-Key still in progress"},
	PayloadTooLarge:             {413, "Request body too large"},
	URLTooLong:                  {414, "URL too long"},
	UnsupportedMedia:            {415, "Unsupported media type"},
	ServedByEdge:                {421, "Served by the edge"},
	SiteUnreachable:             {422, "Site unreachable"},
	IdempotencyKeyReused:        {422, "Idempotency-Key reused with another body"},
	TooManyConnections:          {429, "Too many connections"},
	HeadersTooLarge:             {431, "Request headers too large"},
	Internal:                    {500, "Internal error"},
	NotImplemented:              {501, "Not built yet"},
	OriginUnavailable:           {502, "Origin unavailable"},
	Overloaded:                  {503, "Scanner busy"},
	ScanCanceled:                {503, "Scan canceled"},
	ShuttingDown:                {503, "Server shutting down"},
	RateLimiterUnavailable:      {503, "Allowance store unavailable"},
	StateUnavailable:            {503, "State store unavailable"},
	NoScreenshot:                {404, "No screenshot"},
	BrowserUnavailable:          {503, "Browser unavailable"},
	Busy:                        {503, "Browser busy"},
	InvalidPath:                 {400, "Invalid path"},
	InvalidCallbackURL:          {400, "Invalid callback_url"},
	InvalidCadence:              {400, "Invalid cadence"},
	CadenceTooShort:             {400, "Cadence too short"},
	InvalidEvents:               {400, "Invalid events"},
	TooManyMonitors:             {400, "Too many monitors"},
	MonitorDisabled:             {409, "Monitor disabled"},
	DeliveryInFlight:            {409, "Delivery in progress"},
	PaymentInvalid:              {402, "Payment refused"},
	PaymentsDisabled:            {503, "Payments disabled"},
	FacilitatorUnavailable:      {503, "Payment facilitator unavailable"},
	AllowanceExhausted:          {429, "Daily allowance used up"},
	OAuthInvalidRequest:         {400, "invalid_request"},
	OAuthUnsupportedGrantType:   {400, "unsupported_grant_type"},
	OAuthInvalidScope:           {400, "invalid_scope"},
	OAuthSlowDown:               {429, "slow_down"},
	OAuthTemporarilyUnavailable: {503, "temporarily_unavailable"},
	OAuthServerError:            {500, "server_error"},
}

// Status is the HTTP status the code is answered with (500 for an unknown code).
func (c Code) Status() int {
	if i, ok := catalog[c]; ok {
		return i.status
	}
	return 500
}

// Title is the envelope's short `error` text.
func (c Code) Title() string {
	if i, ok := catalog[c]; ok {
		return i.title
	}
	return "Error"
}

// Known reports a code of the catalog.
func (c Code) Known() bool {
	_, ok := catalog[c]
	return ok
}

// All lists every code, sorted.
func All() []Code {
	out := make([]Code, 0, len(catalog))
	for c := range catalog {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Envelope is the body of every error: error is a short title, code the
// stable value, message a sentence saying what went wrong and what to do.
type Envelope struct {
	Error   string `json:"error"`
	Code    Code   `json:"code"`
	Message string `json:"message"`
	Docs    string `json:"docs"`
}

// New builds the envelope of code with message.
func New(code Code, message string) Envelope {
	return Envelope{Error: code.Title(), Code: code, Message: message, Docs: DocsURL}
}

// JSON encodes the envelope, with a final newline. HTML characters are not
// escaped: messages quote paths and markup.
func (e Envelope) JSON() []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return []byte(`{"error":"Internal error","code":"internal_error","message":"the error could not be encoded","docs":"` + DocsURL + `"}` + "\n")
	}
	return buf.Bytes()
}

// Write answers code's status with the envelope on a net/http response (the
// edge, the wasm host and the public listener). A length or encoding set for
// another body (a forwarded answer refused late) is dropped, and errors are
// never cached.
func Write(w http.ResponseWriter, code Code, msg string) {
	h := w.Header()
	h.Del("Content-Length")
	h.Del("Content-Encoding")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "application/json")
	w.WriteHeader(code.Status())
	w.Write(New(code, msg).JSON())
}

// LocalScansDocs is where a refusal to scan a non-public address points:
// the README's paragraph on scanning a site on your own machine.
const LocalScansDocs = "https://github.com/agentready/agentready/blob/main/README.md#scanning-a-site-on-your-own-machine"

// Error is the one refusal or failure every layer returns (the engine's
// failed scan, the origin's API errors, a monitor's or a payment's
// refusal) and every transport answers the same way: its code, and so its
// title and status, a message written for the caller, an optional
// Retry-After and docs link, and the cause, which is for logs and
// errors.Is/As and is never shown.
type Error struct {
	Code    Code
	Message string
	// Status overrides the code's status (0: Code.Status()).
	Status int
	// RetryAfter is in seconds (0: none).
	RetryAfter int
	// Docs overrides DocsURL: a page that says more about this refusal.
	Docs string
	Err  error
}

// Errorf builds an Error of code with a formatted message.
func Errorf(code Code, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }

// HTTPStatus is the status the error is answered with.
func (e *Error) HTTPStatus() int {
	if e.Status != 0 {
		return e.Status
	}
	return e.Code.Status()
}

// Envelope is the error's body.
func (e *Error) Envelope() Envelope {
	env := New(e.Code, e.Message)
	if e.Docs != "" {
		env.Docs = e.Docs
	}
	return env
}

// As finds the *Error in err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
