package abi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
)

// Requests and responses cross between host and module as frames: length-
// prefixed fields, little-endian uint32 lengths, no text to parse.
//
//	request:  method, request URI, Host, peer address, header count,
//	          (name, value) per header value, body
//	response: status (uint32), header count, (name, value) per value, body
//	forward:  0 (uint32), the response headers to add as above, then the
//	          request headers to add, as above
//
// A forward asks the host to send the request to the origin itself and
// stream the answer (Server-Sent Events): the module never holds it.
//
// They replaced HTTP/1.1 text, whose parsing and formatting cost the module
// more than the edge's own work (Go compiled to WebAssembly runs an order of
// magnitude slower than natively, and net/http's reader and header writer are
// among its busiest paths). Both sides use this file, so they cannot drift.

// MaxFields bounds the header fields of a frame: a frame claiming more is malformed.
const MaxFields = 1 << 12

var errFrame = errors.New("malformed frame")

func appendField(dst []byte, s string) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(s)))
	return append(dst, s...)
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}

// appendHeader frames h's fields, leaving out the header named skip (none
// when skip is empty). A field with an empty name is framed as it is, and the
// reading side refuses the frame: no header has an empty name.
func appendHeader(dst []byte, h http.Header, skip string) []byte {
	n := 0
	for k, vs := range h {
		if skip == "" || k != skip {
			n += len(vs)
		}
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	for k, vs := range h {
		if skip != "" && k == skip {
			continue
		}
		for _, v := range vs {
			dst = appendField(dst, k)
			dst = appendField(dst, v)
		}
	}
	return dst
}

// AppendRequest frames a request for the module. The header named PeerHeader
// is never copied from h: the peer is the host's to state.
func AppendRequest(dst []byte, method, uri, host, peer string, h http.Header, body []byte) []byte {
	dst = appendField(dst, method)
	dst = appendField(dst, uri)
	dst = appendField(dst, host)
	dst = appendField(dst, peer)
	dst = appendHeader(dst, h, PeerHeader)
	return appendBytes(dst, body)
}

// AppendResponse frames a response for the host.
func AppendResponse(dst []byte, status int, h http.Header, body []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(status))
	dst = appendHeader(dst, h, "")
	return appendBytes(dst, body)
}

// AppendForward frames the module's request to forward: respHeader goes on
// the origin's answer, reqHeader on the request to the origin.
func AppendForward(dst []byte, respHeader, reqHeader http.Header) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, 0)
	dst = appendHeader(dst, respHeader, "")
	return appendHeader(dst, reqHeader, "")
}

// reader takes fields off a frame; the first error sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uint32() uint32 {
	if r.err != nil || len(r.b) < 4 {
		r.err = errFrame
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *reader) bytes() []byte {
	n := r.uint32()
	if r.err != nil || uint64(n) > uint64(len(r.b)) {
		r.err = errFrame
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) string() string { return string(r.bytes()) }

func (r *reader) header(canonical bool) http.Header {
	n := r.uint32()
	if r.err != nil || n > MaxFields || uint64(n)*8 > uint64(len(r.b)) {
		r.err = errFrame
		return nil
	}
	h := make(http.Header, n)
	for i := uint32(0); i < n && r.err == nil; i++ {
		k, v := r.string(), r.string()
		if k == "" {
			r.err = errFrame // a field without a name is no header (RFC 9110 §5.1: a name is a non-empty token)
			return nil
		}
		if canonical {
			k = textproto.CanonicalMIMEHeaderKey(k)
		}
		h[k] = append(h[k], v)
	}
	return h
}

// span is where a field lies in a frame.
type span struct{ off, n int }

func (r *reader) span(frame []byte) span {
	v := r.bytes()
	if r.err != nil {
		return span{}
	}
	return span{len(frame) - len(r.b) - len(v), len(v)}
}

// ParseRequest reads a request frame as http.ReadRequest would have read the
// same request as HTTP/1.1 text: Host moved out of the header, the peer in
// PeerHeader, Content-Length in the header and in ContentLength, and no body
// (http.NoBody) when it is empty. The body aliases b.
//
// It runs inside the module, where every allocation is dear: all the strings
// are cut from one copy of the frame's text, and single header values share
// one backing array.
func ParseRequest(b []byte) (*http.Request, error) {
	r := reader{b: b}
	var fixed [4]span // method, request URI, Host, peer
	for i := range fixed {
		fixed[i] = r.span(b)
	}
	n := r.uint32()
	if r.err != nil || n > MaxFields || uint64(n)*8 > uint64(len(r.b)) {
		return nil, errFrame
	}
	var small [32]span
	fields := small[:0]
	if 2*int(n) > len(small) {
		fields = make([]span, 0, 2*n)
	}
	for i := 0; i < 2*int(n) && r.err == nil; i++ {
		fields = append(fields, r.span(b))
	}
	textEnd := len(b) - len(r.b)
	body := r.bytes()
	if r.err != nil || len(r.b) != 0 {
		return nil, errFrame
	}
	text := string(b[:textEnd])
	str := func(s span) string { return text[s.off : s.off+s.n] }
	method, uri, host, peer := str(fixed[0]), str(fixed[1]), str(fixed[2]), str(fixed[3])
	if method == "" || !validMethod(method) {
		return nil, errors.New("invalid method")
	}
	u, err := url.ParseRequestURI(uri)
	if err != nil {
		return nil, err
	}
	h := make(http.Header, n+2)
	values := make([]string, n+2)
	for i := 0; i < int(n); i++ {
		k, v := str(fields[2*i]), str(fields[2*i+1])
		if k == "" {
			return nil, errFrame // as in reader.header: no header has an empty name
		}
		if old, ok := h[k]; ok {
			h[k] = append(old, v)
			continue
		}
		values[i] = v
		h[k] = values[i : i+1 : i+1]
	}
	delete(h, "Host")
	delete(h, "Transfer-Encoding")
	if peer != "" {
		values[n] = peer
		h[PeerHeader] = values[n : n+1 : n+1]
	} else {
		delete(h, PeerHeader)
	}
	values[n+1] = strconv.Itoa(len(body))
	h["Content-Length"] = values[n+1 : n+2 : n+2]
	req := &http.Request{
		Method: method, URL: u, RequestURI: uri, Host: host, Header: h,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		ContentLength: int64(len(body)), Body: http.NoBody,
	}
	if len(body) > 0 {
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	return req, nil
}

func validMethod(m string) bool {
	for i := 0; i < len(m); i++ {
		c := m[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`()<>@,;:\"/[]?={}`, c) >= 0 {
			return false
		}
	}
	return true
}

// Response is a response or forward frame read by the host.
type Response struct {
	Status int         // 0 for a forward
	Header http.Header // canonical names
	Body   []byte      // aliases the frame
	// Forward is the request headers of a forward (Status 0), canonical.
	Forward http.Header
}

// ParseResponse reads a response or forward frame.
func ParseResponse(b []byte) (Response, error) {
	r := reader{b: b}
	resp := Response{Status: int(r.uint32())}
	resp.Header = r.header(true)
	if resp.Status == 0 {
		resp.Forward = r.header(true)
	} else {
		resp.Body = r.bytes()
	}
	if r.err != nil || len(r.b) != 0 || resp.Status != 0 && (resp.Status < 100 || resp.Status > 999) {
		return Response{}, errFrame
	}
	return resp, nil
}
