package edge

import (
	"encoding/json"
	"net/http"
)

// DocsURL is where error codes are documented.
const DocsURL = "https://github.com/agentready/agentready/blob/main/docs/api.md#error-codes"

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
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, envelope{Error: title, Code: code, Message: msg, Docs: DocsURL})
}

// OriginUnavailable answers 502 when the origin does not answer (every platform's forward).
func OriginUnavailable(w http.ResponseWriter) {
	writeError(w, http.StatusBadGateway, "origin_unavailable", "Origin unavailable", "The service behind the edge does not answer; retry shortly.")
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeError(w, 405, "method_not_allowed", "Method not allowed", "Use "+allow+".")
}
