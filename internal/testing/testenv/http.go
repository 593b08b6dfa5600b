package testenv

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// Request is a request for a test: body (none when empty) and headerKV, a
// header name then its value, as many pairs as needed (a name without a
// value is ignored). A target that does not parse fails tb.
func Request(tb testing.TB, method, target, body string, headerKV ...string) *http.Request {
	tb.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, target, rd)
	if err != nil {
		tb.Fatal(err)
	}
	for i := 0; i+1 < len(headerKV); i += 2 {
		req.Header.Set(headerKV[i], headerKV[i+1])
	}
	return req
}

// Do sends req with c (http.DefaultClient when nil) and returns the response
// with its whole body, read and closed; a request that fails, or a body that
// cannot be read, fails tb.
func Do(tb testing.TB, c *http.Client, req *http.Request) (*http.Response, []byte) {
	tb.Helper()
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("%s %s: reading the body: %v", req.Method, req.URL, err)
	}
	return resp, b
}

// Get is Do of a GET of target with headerKV (see Request) by
// http.DefaultClient.
func Get(tb testing.TB, target string, headerKV ...string) (*http.Response, []byte) {
	tb.Helper()
	return Do(tb, nil, Request(tb, http.MethodGet, target, "", headerKV...))
}
