package stack

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/origin"
)

// publicHeaderBuffer is how much of a request line and headers net/http
// reads before refusing a request itself: generous, so that public sees
// the usual oversize requests and says which part is too long.
const publicHeaderBuffer = 64 << 10

// public applies the service's request limits in front of the edge: a
// request refused here never reaches the edge, so it is never charged to
// the caller's allowance, and the origin never sees a request the edge
// forwarded but it would refuse for size. It also turns an upload cut by
// the server's read timeout into an honest 408.
type public struct {
	next        http.Handler
	bodyTimeout time.Duration  // what the read timeout leaves the body, for the 408's message
	proxies     []netip.Prefix // trusted reverse proxies (proxies.go)
}

func (p public) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fromProxy(p.proxies, r)
	if len(r.RequestURI) > origin.MaxURLBytes {
		apierr.Write(w, origin.CodeURLTooLong, "The request URL is longer than "+strconv.Itoa(origin.MaxURLBytes>>10)+" KiB; give the site as a short url (its home page, not a long deep link), then retry.")
		return
	}
	if headerBytes(r) > origin.MaxHeaderBytes {
		apierr.Write(w, origin.CodeHeadersTooLarge, "The request headers are larger than "+strconv.Itoa(origin.MaxHeaderBytes>>10)+" KiB; drop large cookies or other oversized headers, then retry.")
		return
	}
	if r.Body == nil || r.Body == http.NoBody {
		p.next.ServeHTTP(w, r)
		return
	}
	body := &timedBody{ReadCloser: r.Body}
	r.Body = body
	p.next.ServeHTTP(&uploadTimeoutWriter{ResponseWriter: w, body: body, timeout: p.bodyTimeout}, r)
}

// headerBytes is the size of the header fields as sent (name, value, ": ", CRLF).
func headerBytes(r *http.Request) int {
	n := len("Host: \r\n") + len(r.Host)
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// timedBody notes an upload cut by the server's read timeout.
type timedBody struct {
	io.ReadCloser
	timedOut atomic.Bool
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && isTimeout(err) {
		b.timedOut.Store(true)
	}
	return n, err
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &t) && t.Timeout())
}

// uploadTimeoutWriter answers 408 request_timeout when the body missed its
// deadline, whatever the edge makes of the failed read (a proxy would call
// it a bad gateway): the caller hears what actually went wrong.
type uploadTimeoutWriter struct {
	http.ResponseWriter
	body     *timedBody
	timeout  time.Duration
	wrote    bool // the handler's own header went out
	replaced bool // the 408 went out instead
}

// claim reports whether the handler's response may go out, sending the 408
// in its place when the upload timed out before anything was written.
func (w *uploadTimeoutWriter) claim() bool {
	if w.replaced {
		return false
	}
	if w.wrote {
		return true
	}
	if !w.body.timedOut.Load() {
		w.wrote = true
		return true
	}
	w.replaced = true
	h := w.ResponseWriter.Header()
	for k := range h {
		delete(h, k)
	}
	h.Set("Connection", "close")
	apierr.Write(w.ResponseWriter, origin.CodeRequestTimeout,
		"The request body did not arrive within about "+w.timeout.String()+" (a stalled or very slow upload); send the whole request at once, then retry.")
	return false
}

func (w *uploadTimeoutWriter) WriteHeader(code int) {
	if code >= 100 && code < 200 {
		if !w.replaced {
			w.ResponseWriter.WriteHeader(code)
		}
		return
	}
	if w.claim() {
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *uploadTimeoutWriter) Write(p []byte) (int, error) {
	if !w.claim() {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

func (w *uploadTimeoutWriter) Flush() {
	w.claim()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *uploadTimeoutWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// plainErrors turns the answers net/http writes by itself, before any
// handler runs, into the API's error envelope: 431 for a request over
// MaxHeaderBytes, 400 for a malformed one, 501/505 for an unsupported
// transfer coding or protocol. net/http writes each as one fixed
// plain-text block straight to the connection (never a handler's layout:
// no Date, no Content-Length), so they are recognised exactly.
type plainErrors struct{ net.Listener }

func (l plainErrors) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &plainErrorConn{Conn: c}, nil
}

type plainErrorConn struct{ net.Conn }

const goErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

func (c *plainErrorConn) Write(p []byte) (int, error) {
	if len(p) < 512 && bytes.HasPrefix(p, []byte("HTTP/1.1 ")) {
		if resp, ok := asEnvelope(p); ok {
			_, err := c.Conn.Write(resp)
			return len(p), err
		}
	}
	return c.Conn.Write(p)
}

// CloseWrite lets net/http half-close after its 431, as it would unwrapped.
func (c *plainErrorConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// asEnvelope rewrites one of net/http's own error answers. Its text is
// matched, never copied: the reply says what is wrong in fixed words.
func asEnvelope(p []byte) ([]byte, bool) {
	line, rest, ok := bytes.Cut(p[len("HTTP/1.1 "):], []byte("\r\n"))
	if !ok || len(line) < 4 || line[3] != ' ' || !bytes.HasPrefix(rest, []byte(goErrorHeaders[2:])) {
		return nil, false
	}
	status, err := strconv.Atoi(string(line[:3]))
	if err != nil {
		return nil, false
	}
	body := rest[len(goErrorHeaders)-2:]
	code := origin.CodeBadRequest
	msg := "The request is not valid HTTP/1.1 (malformed request line or headers); check the client, then retry."
	switch {
	case status == 431:
		code = origin.CodeHeadersTooLarge
		msg = "The request line and headers together are larger than " + strconv.Itoa(publicHeaderBuffer>>10) + " KiB, so the request could not be read; keep the url under " +
			strconv.Itoa(origin.MaxURLBytes>>10) + " KiB and the headers under " + strconv.Itoa(origin.MaxHeaderBytes>>10) + " KiB (large cookies, long tokens), then retry."
	case status == 501:
		code = origin.CodeNotImplemented
		msg = "The request's Transfer-Encoding is not supported; send the body with Content-Length or chunked encoding."
	case status == 505:
		msg = "The request's HTTP version is not supported; use HTTP/1.1."
	case bytes.Contains(body, []byte("Host header")):
		msg = "The request has no valid Host header, which HTTP/1.1 requires; check the client, then retry."
	case bytes.Contains(body, []byte("invalid header")):
		msg = "A header name or value contains characters HTTP does not allow; check the client, then retry."
	}
	env := apierr.New(code, msg).JSON()
	out := make([]byte, 0, 256+len(env))
	out = append(out, "HTTP/1.1 "...)
	out = strconv.AppendInt(out, int64(status), 10)
	out = append(out, ' ')
	out = append(out, http.StatusText(status)...)
	out = append(out, "\r\nContent-Type: application/json\r\nCache-Control: no-store\r\nConnection: close\r\nContent-Length: "...)
	out = strconv.AppendInt(out, int64(len(env)), 10)
	out = append(out, "\r\n\r\n"...)
	return append(out, env...), true
}
