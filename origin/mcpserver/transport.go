package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Transport limits of /api/mcp.
const (
	// MaxRequestBytes bounds a request body (one message or a legacy batch).
	MaxRequestBytes = 64 << 10
	// MaxBatch bounds the messages of a legacy batch: every call in it runs,
	// so the length is the work one POST can ask for.
	MaxBatch = 16
	// MaxBatchResponseBytes bounds what one batch answers. Calls whose answers
	// would cross it get an error in place of their result, so a small POST
	// cannot draw megabytes (1,000 tools/list used to answer 21 MB).
	MaxBatchResponseBytes = 256 << 10
)

// batchesRemoved is the first protocol version without JSON-RPC batching.
const batchesRemoved = "2025-06-18"

// JSON-RPC error codes: the specification's, and the MCP ones (SEP-2575).
const (
	CodeParseError          = -32700
	CodeInvalidRequest      = -32600
	CodeMethodNotFound      = -32601
	CodeInvalidParams       = -32602
	CodeInternalError       = -32603
	CodeServerError         = -32000 // implementation-defined: an answer withheld by a limit
	CodeHeaderMismatch      = -32020
	CodeUnsupportedProtocol = -32022
)

// DocsURL explains the MCP endpoint and its errors.
const DocsURL = "https://github.com/agentready/agentready/blob/main/docs/mcp.md#errors"

// transportGuard answers every transport-level refusal of /api/mcp as a
// JSON-RPC error object (the SDK answers many as text/plain), enforces the
// batch rules, and rewrites whatever error the SDK still produces so that no
// library message or request byte reaches the client.
type transportGuard struct {
	next http.Handler
	// args names each tool's arguments (from its input schema): argument
	// errors may name those, never what the client sent.
	args map[string][]string
}

// rpcID is a request id as the client sent it, re-encoded (a string or a
// number), or JSON null when the request has none or could not be read.
type rpcID json.RawMessage

var nullID = rpcID("null")

type rpcErrorBody struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

type rpcErrorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcErrorBody    `json:"error"`
}

func errorObject(id rpcID, code int, msg string) []byte {
	if len(id) == 0 {
		id = nullID
	}
	data := map[string]any{"docs": DocsURL}
	if code == CodeUnsupportedProtocol {
		data["supported"] = ProtocolVersions
	}
	b, _ := json.Marshal(rpcErrorResponse{JSONRPC: "2.0", ID: json.RawMessage(id), Error: rpcErrorBody{Code: code, Message: msg, Data: data}})
	return b
}

func writeRPCError(w http.ResponseWriter, status int, id rpcID, code int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(errorObject(id, code, msg))
}

// TooLargeResponse is the body of the 413 the origin's HTTP server answers
// when it refuses an /api/mcp body before this handler runs.
func TooLargeResponse() []byte {
	return errorObject(nullID, CodeInvalidRequest, msgTooLarge)
}

// Messages: what went wrong and what to do, never the request's bytes.
const (
	msgMethod         = "Method not allowed: /api/mcp is a stateless Streamable HTTP endpoint; send each JSON-RPC message as the body of a POST."
	msgContentType    = "Unsupported media type: send the JSON-RPC message with Content-Type: application/json."
	msgAccept         = "Not acceptable: send Accept: application/json, text/event-stream (the Streamable HTTP transport requires both)."
	msgTooLarge       = "Request too large: an /api/mcp body may hold at most 64 KiB; send smaller messages, one per POST."
	msgUnreadable     = "The request body could not be read completely; send it again."
	msgEmpty          = "Parse error: the body is empty; send one JSON-RPC 2.0 message, e.g. {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}."
	msgParse          = "Parse error: the body is not valid JSON; send one JSON-RPC 2.0 message, e.g. {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}."
	msgNotMessage     = "Invalid request: the body must be a JSON-RPC 2.0 message (an object with \"jsonrpc\": \"2.0\" and a string \"method\")."
	msgVersionTag     = "Invalid request: every message needs \"jsonrpc\": \"2.0\"."
	msgBadID          = "Invalid request: \"id\" must be a string or an integer."
	msgBadMethod      = "Invalid request: \"method\" must be a non-empty string."
	msgNoResult       = "Invalid request: a message without \"method\" is a response and needs an \"id\" and a \"result\" or \"error\"."
	msgEmptyBatch     = "Invalid request: the batch is empty; send one JSON-RPC message per POST."
	msgBatchRemoved   = "Invalid request: JSON-RPC batches were removed from MCP in protocol version 2025-06-18; send one message per POST."
	msgBatchTooLong   = "Invalid request: a batch may hold at most 16 messages; send one message per POST (batches were removed from MCP in 2025-06-18)."
	msgBatchDupID     = "Invalid request: two calls in the batch share an id; give every call its own id."
	msgBatchWithheld  = "Answer withheld: the answers to this batch exceed 256 KiB, so this one was dropped (the call ran); send it again on its own POST."
	msgVersion        = "Unsupported protocol version: the MCP-Protocol-Version header names a version this server does not speak; use one of the versions in error.data.supported."
	msgMethodNotFound = "Method not found: this server answers initialize, ping, tools/list, tools/call and server/discover (and the initialized and cancelled notifications); see the docs in error.data."
	msgNeedsID        = "Invalid request: this method is a call and needs an \"id\"."
	msgNoID           = "Invalid request: notifications carry no \"id\"; drop it, or call a method that answers."
	msgNeedsParams    = "Invalid request: this method needs \"params\" (an object)."
	msgInvalid        = "Invalid request: the message does not follow the MCP Streamable HTTP transport; see the docs in error.data."
	msgLastEventID    = "Invalid request: a POST may not carry Last-Event-ID; this server keeps no resumable streams."
	msgHost           = "Forbidden: the Host header does not name this loopback server (DNS-rebinding protection); call it as 127.0.0.1 or localhost."
	msgCrossOrigin    = "Forbidden: a browser page on another origin may not call this server (cross-origin protection); call it from a server-side MCP client."
	msgHeaders        = "Header mismatch: with MCP-Protocol-Version 2026-07-28 the Mcp-Method header (and Mcp-Name for tools/call) must be present and equal the body's method and params.name, and the header must equal params._meta[\"io.modelcontextprotocol/protocolVersion\"]."
	msgParams         = "Invalid params: the params do not fit this method; check them against the MCP schema (2026-07-28 requests carry params._meta with the protocol version, client info and capabilities)."
	msgToolParams     = "Invalid params: tools/call needs params.name, one of the tools tools/list returns, and params.arguments, an object."
	msgInitParams     = "Invalid params: initialize needs params with protocolVersion (a string), capabilities (an object) and clientInfo (name and version)."
	msgInternal       = "Internal error: the server could not answer this request; retry shortly."
	msgDuplicateCall  = "Invalid request: a call with this id is already in flight; give every call its own id."
)

// inbound is what the guard learned about a message before the SDK sees it.
type inbound struct {
	id      rpcID
	method  string
	isCall  bool
	version string // protocolVersion of initialize, or of _meta (2026-07-28)
	tool    string // params.name of a tools/call
}

func (g *transportGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeRPCError(w, http.StatusMethodNotAllowed, nullID, CodeInvalidRequest, msgMethod)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeRPCError(w, http.StatusUnsupportedMediaType, nullID, CodeInvalidRequest, msgContentType)
		return
	}
	if jsonOK, streamOK := accepts(r.Header.Values("Accept")); !jsonOK || !streamOK {
		writeRPCError(w, http.StatusNotAcceptable, nullID, CodeInvalidRequest, msgAccept)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBytes+1))
	switch {
	case len(body) > MaxRequestBytes:
		w.Header().Set("Connection", "close") // the rest of the body is not read
		writeRPCError(w, http.StatusRequestEntityTooLarge, nullID, CodeInvalidRequest, msgTooLarge)
		return
	case err != nil:
		writeRPCError(w, http.StatusBadRequest, nullID, CodeInvalidRequest, msgUnreadable)
		return
	}
	msgs, isBatch, id, code, msg := parseMessages(body)
	if code != 0 {
		writeRPCError(w, http.StatusBadRequest, id, code, msg)
		return
	}
	var first rpcID
	if !isBatch {
		first = msgs[0].id
	}
	version := r.Header.Get("MCP-Protocol-Version")
	if version != "" && !slices.Contains(ProtocolVersions, version) {
		writeRPCError(w, http.StatusBadRequest, first, CodeUnsupportedProtocol, msgVersion)
		return
	}
	if isBatch {
		if code, msg := checkBatch(msgs, version); code != 0 {
			writeRPCError(w, http.StatusBadRequest, nullID, code, msg)
			return
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	rec := &recorder{w: w, hdr: http.Header{}, batch: isBatch, args: g.args}
	g.next.ServeHTTP(rec, r)
	rec.finish(first, msgs)
}

// accepts applies the transport's Accept rule (both media types, wildcards
// allowed) the way the SDK does, so the guard never refuses what it would take.
func accepts(values []string) (jsonOK, streamOK bool) {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// parseMessages reads the body as one JSON-RPC message or a batch of them.
// On failure code is non-zero and msg says why (id is the message's, when known).
func parseMessages(body []byte) (msgs []inbound, isBatch bool, id rpcID, code int, msg string) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil, false, nullID, CodeParseError, msgEmpty
	}
	if !json.Valid(trimmed) {
		return nil, false, nullID, CodeParseError, msgParse
	}
	var raws []json.RawMessage
	switch trimmed[0] {
	case '[':
		isBatch = true
		if err := json.Unmarshal(trimmed, &raws); err != nil {
			return nil, true, nullID, CodeParseError, msgParse
		}
		if len(raws) == 0 {
			return nil, true, nullID, CodeInvalidRequest, msgEmptyBatch
		}
		if len(raws) > MaxBatch {
			return nil, true, nullID, CodeInvalidRequest, msgBatchTooLong
		}
	case '{':
		raws = []json.RawMessage{trimmed}
	default:
		return nil, false, nullID, CodeInvalidRequest, msgNotMessage
	}
	for _, raw := range raws {
		m, id, code, msg := parseMessage(raw)
		if code != 0 {
			if isBatch {
				id = nullID // which element failed is in the message, not the id
			}
			return nil, isBatch, id, code, msg
		}
		msgs = append(msgs, m)
	}
	return msgs, isBatch, nullID, 0, ""
}

func parseMessage(raw json.RawMessage) (m inbound, id rpcID, code int, msg string) {
	var wire struct {
		JSONRPC *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if bytes.TrimSpace(raw)[0] != '{' || json.Unmarshal(raw, &wire) != nil {
		return m, nullID, CodeInvalidRequest, msgNotMessage
	}
	m.id = nullID
	if len(wire.ID) > 0 && string(wire.ID) != "null" {
		var v any
		dec := json.NewDecoder(bytes.NewReader(wire.ID))
		dec.UseNumber()
		if dec.Decode(&v) != nil {
			return m, nullID, CodeInvalidRequest, msgBadID
		}
		switch v := v.(type) {
		case string:
			b, _ := json.Marshal(v)
			m.id, m.isCall = rpcID(b), true
		case json.Number:
			// The SDK keeps numeric ids as int64: 1.5 and 1.0 would both
			// become 1, and two calls with one id lose an answer.
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
				return m, nullID, CodeInvalidRequest, msgBadID
			}
			m.id, m.isCall = rpcID(strconv.FormatInt(int64(f), 10)), true
		default:
			return m, nullID, CodeInvalidRequest, msgBadID
		}
	}
	if wire.JSONRPC == nil || *wire.JSONRPC != "2.0" {
		return m, m.id, CodeInvalidRequest, msgVersionTag
	}
	if len(wire.Method) == 0 {
		if !m.isCall || (len(wire.Result) == 0 && len(wire.Error) == 0) {
			return m, m.id, CodeInvalidRequest, msgNoResult
		}
		m.isCall = false // a response to the server, not a call
		return m, m.id, 0, ""
	}
	if json.Unmarshal(wire.Method, &m.method) != nil || m.method == "" {
		return m, m.id, CodeInvalidRequest, msgBadMethod
	}
	var params struct {
		ProtocolVersion string `json:"protocolVersion"`
		Name            string `json:"name"`
		Meta            struct {
			ProtocolVersion string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	}
	if json.Unmarshal(wire.Params, &params) == nil {
		m.version = params.Meta.ProtocolVersion
		switch m.method {
		case "initialize":
			m.version = params.ProtocolVersion
		case "tools/call":
			m.tool = params.Name
		}
	}
	return m, m.id, 0, ""
}

// checkBatch applies the batch rules: none from 2025-06-18 on (as the header
// or any message in the batch declares it), distinct call ids.
func checkBatch(msgs []inbound, version string) (int, string) {
	if version >= batchesRemoved {
		return CodeInvalidRequest, msgBatchRemoved
	}
	seen := map[string]bool{}
	for _, m := range msgs {
		if m.version >= batchesRemoved {
			return CodeInvalidRequest, msgBatchRemoved
		}
		if m.isCall {
			if seen[string(m.id)] {
				return CodeInvalidRequest, msgBatchDupID
			}
			seen[string(m.id)] = true
		}
	}
	return 0, ""
}

// recorder holds what the SDK answers until it can be checked. An event
// stream goes straight through; anything else (JSON answers, errors) is kept
// and rewritten if needed. The SDK writes a JSON answer in one piece, so
// holding it costs no more than the SDK's own buffer.
type recorder struct {
	w           http.ResponseWriter
	hdr         http.Header
	status      int
	buf         bytes.Buffer
	batch       bool
	wroteHeader bool
	passthrough bool
	args        map[string][]string
}

func (r *recorder) Header() http.Header { return r.hdr }

func (r *recorder) WriteHeader(code int) {
	if r.wroteHeader {
		return
	}
	r.wroteHeader, r.status = true, code
	if code < 400 && strings.HasPrefix(r.hdr.Get("Content-Type"), "text/event-stream") {
		r.passthrough = true
		copyHeader(r.w.Header(), r.hdr)
		r.w.WriteHeader(code)
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	if !r.wroteHeader {
		r.WriteHeader(http.StatusOK)
	}
	if r.passthrough {
		return r.w.Write(p)
	}
	return r.buf.Write(p)
}

func (r *recorder) Flush() {
	if r.passthrough {
		_ = http.NewResponseController(r.w).Flush()
	}
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.w }

func copyHeader(dst, src http.Header) {
	for k, v := range src {
		dst[k] = v
	}
}

// finish writes the held answer: errors rewritten, a batch's answers bounded.
func (r *recorder) finish(id rpcID, msgs []inbound) {
	if r.passthrough {
		return
	}
	if !r.wroteHeader {
		r.status = http.StatusOK
	}
	body := r.buf.Bytes()
	method := ""
	if len(msgs) == 1 {
		method = msgs[0].method
	}
	if r.status >= 400 {
		status, code, msg, sid := sdkError(r.status, r.hdr.Get("Content-Type"), body, method)
		if len(sid) > 0 {
			id = sid
		}
		if r.status == http.StatusMethodNotAllowed {
			r.w.Header().Set("Allow", "POST")
		}
		writeRPCError(r.w, status, id, code, msg)
		return
	}
	if len(body) > 0 && strings.HasPrefix(r.hdr.Get("Content-Type"), "application/json") {
		if r.batch {
			body = boundBatch(body)
		} else if b, ok := rewriteError(body, method); ok {
			body = b
		} else if method == "tools/call" && bytes.Contains(body, sdkArgsError) {
			body = rewriteArgsError(body, r.args[msgs[0].tool])
		}
		r.hdr.Set("Content-Length", strconv.Itoa(len(body)))
	}
	copyHeader(r.w.Header(), r.hdr)
	r.w.WriteHeader(r.status)
	r.w.Write(body)
}

// sdkError maps an error the SDK wrote (text/plain, or a JSON-RPC error at an
// HTTP error status) to a status, a code and one of our messages.
func sdkError(status int, ctype string, body []byte, method string) (int, int, string, rpcID) {
	if strings.HasPrefix(ctype, "application/json") {
		var e struct {
			ID    json.RawMessage `json:"id"`
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(body, &e) == nil && e.Error.Code != 0 {
			return status, e.Error.Code, messageFor(e.Error.Code, method), reencodeID(e.ID)
		}
	}
	text := string(body)
	switch {
	case status == http.StatusMethodNotAllowed:
		return status, CodeInvalidRequest, msgMethod, nil
	case status == http.StatusRequestEntityTooLarge:
		return status, CodeInvalidRequest, msgTooLarge, nil
	case status == http.StatusUnsupportedMediaType:
		return status, CodeInvalidRequest, msgContentType, nil
	case strings.HasPrefix(text, "Accept must contain"):
		return http.StatusNotAcceptable, CodeInvalidRequest, msgAccept, nil
	case strings.HasPrefix(text, "Forbidden: invalid Host"):
		return status, CodeInvalidRequest, msgHost, nil
	case status == http.StatusForbidden:
		return status, CodeInvalidRequest, msgCrossOrigin, nil
	case strings.HasPrefix(text, "JSON RPC not handled"):
		return status, CodeMethodNotFound, msgMethodNotFound, nil
	case strings.Contains(text, "missing id"):
		return status, CodeInvalidRequest, msgNeedsID, nil
	case strings.Contains(text, "unexpected id"):
		return status, CodeInvalidRequest, msgNoID, nil
	case strings.Contains(text, "missing required \"params\""):
		return status, CodeInvalidRequest, msgNeedsParams, nil
	case strings.Contains(text, "Last-Event-ID"):
		return status, CodeInvalidRequest, msgLastEventID, nil
	case strings.Contains(text, "batching"):
		return status, CodeInvalidRequest, msgBatchRemoved, nil
	case strings.Contains(text, "protocol version"):
		return status, CodeUnsupportedProtocol, msgVersion, nil
	case status >= 500 || status == http.StatusNotFound: // a session that closed under the call
		return http.StatusInternalServerError, CodeInternalError, msgInternal, nil
	}
	return status, CodeInvalidRequest, msgInvalid, nil
}

// messageFor is our message for a JSON-RPC error code.
func messageFor(code int, method string) string {
	switch code {
	case CodeParseError:
		return msgParse
	case CodeInvalidRequest:
		return msgInvalid
	case CodeMethodNotFound:
		return msgMethodNotFound
	case CodeInvalidParams:
		switch method {
		case "tools/call":
			return msgToolParams
		case "initialize":
			return msgInitParams
		}
		return msgParams
	case CodeHeaderMismatch:
		return msgHeaders
	case CodeUnsupportedProtocol:
		return msgVersion
	case CodeInternalError:
		return msgInternal
	}
	return "Request refused (JSON-RPC error " + strconv.Itoa(code) + "); see the docs in error.data."
}

func reencodeID(raw json.RawMessage) rpcID {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if len(raw) == 0 || dec.Decode(&v) != nil {
		return nil
	}
	switch v.(type) {
	case string, json.Number:
		b, _ := json.Marshal(v)
		return rpcID(b)
	}
	return nil
}

// isErrorResponse reports whether a JSON-RPC response is an error, reading only
// its first members (the SDK writes jsonrpc, id, then result or error), so a
// large result is not scanned twice.
func isErrorResponse(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return false
		}
		switch k {
		case "error":
			return true
		case "result":
			return false
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

// rewriteError replaces the message of a JSON-RPC error answer (HTTP 200)
// with ours: the SDK's can quote the request (a method name, raw params).
func rewriteError(body []byte, method string) ([]byte, bool) {
	if !isErrorResponse(body) {
		return nil, false
	}
	var e struct {
		ID    json.RawMessage `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return errorObject(nullID, CodeInternalError, msgInternal), true
	}
	code := e.Error.Code
	if code == 0 { // the SDK leaves some failures uncoded: params it could not decode, or its own
		code = CodeInternalError
		if strings.Contains(e.Error.Message, "unmarshal") {
			code = CodeInvalidParams
		}
	}
	return errorObject(reencodeID(e.ID), code, messageFor(code, method)), true
}

// boundBatch rewrites error answers in a batch and withholds answers past
// MaxBatchResponseBytes (an error for their id takes their place).
func boundBatch(body []byte) []byte {
	var items []json.RawMessage
	if json.Unmarshal(body, &items) != nil {
		return errorObject(nullID, CodeInternalError, msgInternal)
	}
	var out bytes.Buffer
	out.WriteByte('[')
	for i, item := range items {
		if b, ok := rewriteError(item, ""); ok {
			item = b
		}
		if out.Len()+len(item)+2 > MaxBatchResponseBytes {
			var head struct {
				ID json.RawMessage `json:"id"`
			}
			json.Unmarshal(item, &head)
			item = errorObject(reencodeID(head.ID), CodeServerError, msgBatchWithheld)
		}
		if i > 0 {
			out.WriteByte(',')
		}
		out.Write(item)
	}
	out.WriteByte(']')
	return out.Bytes()
}

// sdkArgsError marks the SDK's tool result for arguments that fail the input
// schema, as it appears JSON-encoded in the answer's text.
var sdkArgsError = []byte(`validating \"arguments\"`)

var (
	reProperty = regexp.MustCompile(`/properties/([A-Za-z0-9_]+)`)
	reMissing  = regexp.MustCompile(`missing properties: \[([^\]]*)\]`)
)

// rewriteArgsError replaces the SDK's message for arguments that fail a
// tool's input schema (it quotes the offending value or member name) with
// one that names only arguments the tool declares.
func rewriteArgsError(body []byte, known []string) []byte {
	var resp struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if json.Unmarshal(body, &resp) != nil || !resp.Result.IsError || len(resp.Result.Content) != 1 || !strings.HasPrefix(resp.Result.Content[0].Text, `validating "arguments"`) {
		return body
	}
	sdk := resp.Result.Content[0].Text
	isKnown := func(name string) bool { return slices.Contains(known, name) }
	takes := "it takes no arguments"
	if len(known) > 0 {
		takes = "it takes " + strings.Join(known, ", ")
	}
	msg := "Invalid arguments: they do not match the tool's inputSchema (see tools/list); " + takes + "."
	switch {
	case strings.Contains(sdk, "unmarshaling arguments"):
		msg = "Invalid arguments: arguments must be a JSON object; " + takes + "."
	case strings.Contains(sdk, "additional properties"):
		msg = "Invalid arguments: an argument the tool does not take was given; " + takes + "."
	case reMissing.MatchString(sdk):
		var names []string
		for _, n := range strings.Split(reMissing.FindStringSubmatch(sdk)[1], ",") {
			if n = strings.Trim(strings.TrimSpace(n), `"`); isKnown(n) {
				names = append(names, n)
			}
		}
		if len(names) > 0 {
			msg = "Invalid arguments: missing required " + strings.Join(names, ", ") + "; " + takes + "."
		}
	case reProperty.MatchString(sdk) && isKnown(reProperty.FindStringSubmatch(sdk)[1]):
		msg = "Invalid arguments: " + reProperty.FindStringSubmatch(sdk)[1] + " has the wrong type or value for the tool's inputSchema (see tools/list)."
	}
	out, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(reencodeID(resp.ID)), "result": map[string]any{
		"content": []map[string]string{{"type": "text", "text": msg}}, "isError": true}})
	if err != nil || reencodeID(resp.ID) == nil {
		return body
	}
	return out
}
