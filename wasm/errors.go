package wasm

import (
	"net/http"

	"github.com/agentready/agentready/apierr"
)

// The host's own answers, for requests it refuses or cannot hand to the
// module. They are the edge's answers word for word (edge/respond.go; a test
// holds the two together), written here because the host depends on the
// edge only through edge/wasi/abi.

func writeError(w http.ResponseWriter, code apierr.Code, msg string) { apierr.Write(w, code, msg) }

// payloadTooLarge: a body over MaxBody (1 MiB), as edge.PayloadTooLarge.
func payloadTooLarge(w http.ResponseWriter) {
	writeError(w, apierr.PayloadTooLarge, "The request body is over 1 MiB; send at most 1 MiB (a scan request needs only {\"url\": \"https://example.com\"}).")
}

// badRequest: a body that could not be read, as edge.BadRequest.
func badRequest(w http.ResponseWriter) {
	writeError(w, apierr.BadRequest, "The request is not well-formed HTTP; check the request line, headers and body framing, and resend.")
}

// internalError: the module failed (a trap, a malformed frame), as
// edge.InternalError; the cause goes to the log.
func internalError(w http.ResponseWriter) {
	writeError(w, apierr.Internal, "The edge failed while handling this request; retry. If it keeps failing, report it with the time of the request.")
}

// originUnavailable: the origin does not answer a forward, as edge.OriginUnavailable.
func originUnavailable(w http.ResponseWriter) {
	writeError(w, apierr.OriginUnavailable, "The service behind the edge does not answer; retry shortly.")
}

// identityHeaders are the edge's identity headers (edge/identity) and the
// host's own (abi): only the module may state them, so a client's own are
// dropped before a forward.
var identityHeaders = []string{"X-Agentready-Caller", "X-Agentready-Caller-Ts", "X-Agentready-Caller-Sig", "X-Agentready-Client-Ip", "X-Agentready-Minter", "X-Agentready-Nonce", "X-Agentready-Peer", "X-Agentready-Forward-Path"}
