package edge

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/agentready/agentready/apierr"
)

// DocsURL is where error codes are documented.
const DocsURL = apierr.DocsURL

// MaxBody is the largest request body the edge accepts (every build answers
// 413 payload_too_large above it; the Workers runtime allows far more, and a
// host in front of the handler should refuse at the same size with
// PayloadTooLarge).
const MaxBody = 1 << 20

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// writeError answers code's status with the envelope (apierr owns codes,
// statuses and titles for every transport).
func writeError(w http.ResponseWriter, code apierr.Code, msg string) { apierr.Write(w, code, msg) }

// OriginUnavailable answers 502 when the origin does not answer (every platform's forward).
func OriginUnavailable(w http.ResponseWriter) {
	writeError(w, apierr.OriginUnavailable, "The service behind the edge does not answer; retry shortly.")
}

// PayloadTooLarge answers 413 for a body over MaxBody, for the edge and for
// hosts that refuse before the handler runs.
func PayloadTooLarge(w http.ResponseWriter) {
	payloadTooLarge(w, MaxBody)
}

func payloadTooLarge(w http.ResponseWriter, limit int) {
	writeError(w, apierr.PayloadTooLarge,
		"The request body is over "+sizeName(limit)+"; send at most "+sizeName(limit)+" (a scan request needs only {\"url\": \"https://example.com\"}).")
}

func sizeName(n int) string {
	if n%(1<<20) == 0 {
		return strconv.Itoa(n>>20) + " MiB"
	}
	return strconv.Itoa(n>>10) + " KiB"
}

// BadRequest answers 400 for a request that does not parse as HTTP (hosts
// that frame requests for the handler, and the wasip1 module).
func BadRequest(w http.ResponseWriter) {
	writeError(w, apierr.BadRequest, "The request is not well-formed HTTP; check the request line, headers and body framing, and resend.")
}

// Misconfigured answers 500 when the edge cannot start from its settings.
// setting names the variable at fault; its value and the parser's words stay
// out of the body (they may hold secrets) and go to the operator's log.
func Misconfigured(w http.ResponseWriter, setting string) {
	if setting == "" {
		setting = "its settings"
	}
	writeError(w, apierr.Internal,
		"The edge cannot start: "+setting+" is missing or invalid. This is for the operator to fix (the edge's log says what is wrong); retry later.")
}

// InternalError answers 500 when a host in front of the handler fails (a
// trapped WebAssembly instance, say); the cause goes to the operator's log.
func InternalError(w http.ResponseWriter) {
	writeError(w, apierr.Internal, "The edge failed while handling this request; retry. If it keeps failing, report it with the time of the request.")
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeError(w, apierr.MethodNotAllowed, "Use "+allow+".")
}
