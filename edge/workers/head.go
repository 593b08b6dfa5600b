package workers

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// The entry module and Go pass a request's or an answer's head as one
// string, which costs one crossing between JavaScript and Go instead of one
// per header.

// parseRequest reads the request as the entry module writes it: "METHOD
// URL\n" and then one "name: value\n" line per header (the Headers object
// joins repeated request headers with ", "), plus the body it read, at most
// edge.MaxBody+1 bytes (nil for none).
func parseRequest(head string, body []byte) (*http.Request, error) {
	line, rest, _ := strings.Cut(head, "\n")
	method, rawURL, ok := strings.Cut(line, " ")
	if !ok {
		return nil, errors.New("no request line")
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	r := &http.Request{Method: method, URL: u, Host: u.Host, RequestURI: u.RequestURI(),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: parseHeader(rest), Body: http.NoBody}
	r.RemoteAddr = r.Header.Get("CF-Connecting-IP")
	if body != nil {
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	}
	return r, nil
}

func parseHeader(lines string) http.Header {
	h := http.Header{}
	for lines != "" {
		var line string
		line, lines, _ = strings.Cut(lines, "\n")
		if k, v, ok := strings.Cut(line, ": "); ok {
			k = http.CanonicalHeaderKey(k)
			h[k] = append(h[k], v)
		}
	}
	return h
}

// formatHeader writes h as parseHeader reads it, one line per value; values
// a response header cannot carry are dropped rather than break the framing.
func formatHeader(h http.Header) string {
	var b strings.Builder
	for k, vs := range h {
		for _, v := range vs {
			if strings.ContainsAny(k, ": \r\n") || strings.ContainsAny(v, "\r\n") {
				continue
			}
			b.WriteString(k)
			b.WriteString(": ")
			b.WriteString(v)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
