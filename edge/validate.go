package edge

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/edge/scanreq"
)

// The checks here run before a request is charged, so that a typo costs
// nothing. They repeat the origin's syntax rules (origin/api_scan.go and
// engine/weburl) without importing them: the engine's URL parser brings IDNA
// and public-suffix tables the WebAssembly module cannot afford. They are
// never stricter than the origin (FuzzScanURLNeverStricter), and the origin
// still validates fully: a request that passes here and fails there (a
// private address, a host IDNA rejects) is charged.

// Refusal is a 4xx answer decided at the edge, before anything is charged.
type Refusal struct {
	Code          apierr.Code // its status and title come from apierr
	Message       string
	tooLargeLimit int // for 413: the limit that was crossed
}

func (e *Refusal) Error() string { return string(e.Code) + ": " + e.Message }

func (e *Refusal) write(w http.ResponseWriter) {
	if e.Code == apierr.PayloadTooLarge {
		payloadTooLarge(w, e.tooLargeLimit)
		return
	}
	writeError(w, e.Code, e.Message)
}

func tooLarge(limit int) *Refusal {
	return &Refusal{Code: apierr.PayloadTooLarge, tooLargeLimit: limit}
}

func invalidURL(why string) *Refusal {
	return &Refusal{Code: apierr.InvalidURL, Message: "url: " + why + "."}
}

// readBody buffers a request body of at most limit bytes, so that it can be
// checked and then forwarded whole. Bodies are bounded the same way on every
// build: the Workers runtime would otherwise hand over up to 100 MB.
func readBody(r *http.Request, limit int) ([]byte, *Refusal) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if r.ContentLength > int64(limit) {
		return nil, tooLarge(limit)
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
	r.Body.Close()
	switch {
	case len(b) > limit:
		return nil, tooLarge(limit)
	case err != nil:
		return nil, &Refusal{Code: apierr.BadRequest, Message: "The request body could not be read to the end (the connection broke or the body was shorter than announced); resend it."}
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	r.TransferEncoding = nil
	return b, nil
}

// checkScan applies the origin's request rules for GET and POST /api/scan.
func checkScan(r *http.Request, body []byte) *Refusal {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		q := r.URL.Query()
		if e := CheckScanURL(q.Get("url")); e != nil {
			return e
		}
		if f := q.Get("format"); f != "" && f != "json" {
			return &Refusal{Code: apierr.UnsupportedFormat, Message: "That format is not supported; use format=json, or omit it for a Server-Sent Events stream."}
		}
		if p := q.Get("profile"); p != "" && !scanreq.ValidProfile(p) {
			// Before it charges: an unknown profile costs no scan.
			return &Refusal{Code: apierr.InvalidProfile, Message: scanreq.ProfileMessage}
		}
	case http.MethodPost:
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			return &Refusal{Code: apierr.UnsupportedMedia, Message: "Send the body as JSON with Content-Type: application/json, e.g. {\"url\": \"https://example.com\"}."}
		}
		if len(body) > scanreq.MaxBody {
			return tooLarge(scanreq.MaxBody)
		}
		var req struct {
			URL *string `json:"url"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			return &Refusal{Code: apierr.InvalidJSON, Message: "The body is not JSON of the form {\"url\": \"https://example.com\"} (" + jsonProblem(err) + ")."}
		}
		if req.URL == nil {
			return &Refusal{Code: apierr.MissingURL, Message: "The body must carry url: {\"url\": \"https://example.com\"}."}
		}
		if e := CheckScanURL(*req.URL); e != nil {
			return e
		}
		if v, present := r.Header[http.CanonicalHeaderKey("Idempotency-Key")]; present && !scanreq.ValidIdempotencyKey(v[0]) {
			return &Refusal{Code: apierr.InvalidIdempotencyKey, Message: "Idempotency-Key must be 1–255 visible ASCII characters (a UUID is ideal)."}
		}
	}
	return nil
}

// jsonProblem describes a decoding error in our words: encoding/json's
// messages quote the input.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return "a syntax error at byte " + strconv.FormatInt(syn.Offset, 10)
	case errors.As(err, &typ) && typ.Field != "":
		return typ.Field + " must be a string"
	}
	return "the body must be a JSON object"
}

// CheckScanURL is the edge's plausibility check of a scan's url: nil when the
// origin may accept it, else the 400 the origin would answer. It follows
// engine/weburl.Normalize rule for rule, except where that needs IDNA tables:
// hosts with non-ASCII characters and punycode labels are left to the origin.
func CheckScanURL(raw string) *Refusal {
	s := strings.TrimSpace(raw)
	if s == "" {
		return &Refusal{Code: apierr.MissingURL, Message: "A url is required: give a domain such as example.com or a full http(s) URL."}
	}
	if len(s) > 2048 {
		return invalidURL("it is " + strconv.Itoa(len(s)) + " characters long; the limit is 2048")
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == ' ' {
			return invalidURL("it contains whitespace or control characters")
		}
	}
	if !strings.Contains(s, "://") {
		if i := strings.IndexByte(s, ':'); i > 0 && !strings.ContainsAny(s[:i], "./[") {
			if _, err := strconv.Atoi(strings.SplitN(s[i+1:], "/", 2)[0]); err != nil {
				return invalidURL("only http and https URLs can be scanned")
			}
		}
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return invalidURL("it does not parse as a URL")
	}
	if scheme := strings.ToLower(u.Scheme); scheme != "http" && scheme != "https" {
		return invalidURL("only http and https URLs can be scanned")
	}
	if u.User != nil {
		return invalidURL("it must not carry a user name or password")
	}
	host := u.Hostname()
	if host == "" {
		return invalidURL("it has no host")
	}
	if port := u.Port(); port != "" {
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return invalidURL("the port is not between 1 and 65535")
		}
	}
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return nil
	}
	host = strings.TrimSuffix(host, ".")
	if strings.Contains(host, "..") || strings.HasPrefix(host, ".") || strings.HasSuffix(host, ".") {
		return invalidURL("the host has an empty label")
	}
	for _, r := range host {
		if r > unicode.MaxASCII {
			return nil // IDNA decides: the origin has the tables
		}
	}
	host = strings.ToLower(host)
	for _, label := range strings.Split(host, ".") {
		if strings.HasPrefix(label, "xn--") {
			continue // punycode: the origin decodes and judges it
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return invalidURL("the host is not a valid domain name (letters, digits and hyphens only)")
			}
		}
		if strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") || len(label) >= 4 && label[2:4] == "--" {
			return invalidURL("the host is not a valid domain name (a label starts or ends with a hyphen, or has two in the third and fourth places)")
		}
	}
	if numericHost(host) {
		return invalidURL("the host is a numeric address in a non-standard form; write it as a dotted IPv4 address")
	}
	if !strings.Contains(host, ".") && host != "localhost" {
		return invalidURL("the host is not a fully qualified domain name")
	}
	return nil
}

// numericHost catches hex, octal and dotless forms (0x7f.1, 2130706433) that
// resolvers read as IP addresses, as engine/weburl does.
func numericHost(h string) bool {
	for _, part := range strings.Split(h, ".") {
		if part == "" {
			continue
		}
		if strings.HasPrefix(part, "0x") {
			return true
		}
		if _, err := strconv.ParseUint(part, 10, 64); err != nil {
			return false
		}
	}
	return true
}
