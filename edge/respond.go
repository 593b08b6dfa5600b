package edge

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// DocsURL is where error codes are documented.
const DocsURL = "https://github.com/agentready/agentready/blob/main/docs/api.md#error-codes"

// MaxBody is the largest request body the edge accepts (every build answers
// 413 payload_too_large above it; the Workers runtime allows far more, and a
// host in front of the handler should refuse at the same size with
// PayloadTooLarge).
const MaxBody = 1 << 20

type envelope struct {
	Error   string `json:"error"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Docs    string `json:"docs"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, title, msg string) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	// A response the origin would have sent (a forwarded request refused at
	// the edge) must not keep a length or encoding set for another body.
	h.Del("Content-Length")
	h.Del("Content-Encoding")
	writeJSON(w, status, envelope{Error: title, Code: code, Message: msg, Docs: DocsURL})
}

// OriginUnavailable answers 502 when the origin does not answer (every platform's forward).
func OriginUnavailable(w http.ResponseWriter) {
	writeError(w, http.StatusBadGateway, "origin_unavailable", "Origin unavailable", "The service behind the edge does not answer; retry shortly.")
}

// PayloadTooLarge answers 413 for a body over MaxBody, for the edge and for
// hosts that refuse before the handler runs.
func PayloadTooLarge(w http.ResponseWriter) {
	payloadTooLarge(w, MaxBody)
}

func payloadTooLarge(w http.ResponseWriter, limit int) {
	writeError(w, http.StatusRequestEntityTooLarge, "payload_too_large", "Request body too large",
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
	writeError(w, http.StatusBadRequest, "bad_request", "Bad request", "The request is not well-formed HTTP; check the request line, headers and body framing, and resend.")
}

// Misconfigured answers 500 when the edge cannot start from its settings.
// setting names the variable at fault; its value and the parser's words stay
// out of the body (they may hold secrets) and go to the operator's log.
func Misconfigured(w http.ResponseWriter, setting string) {
	if setting == "" {
		setting = "its settings"
	}
	writeError(w, http.StatusInternalServerError, "internal_error", "Edge misconfigured",
		"The edge cannot start: "+setting+" is missing or invalid. This is for the operator to fix (the edge's log says what is wrong); retry later.")
}

// InternalError answers 500 when a host in front of the handler fails (a
// trapped WebAssembly instance, say); the cause goes to the operator's log.
func InternalError(w http.ResponseWriter) {
	writeError(w, http.StatusInternalServerError, "internal_error", "Internal error", "The edge failed while handling this request; retry. If it keeps failing, report it with the time of the request.")
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeError(w, 405, "method_not_allowed", "Method not allowed", "Use "+allow+".")
}
