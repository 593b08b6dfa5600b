package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// rawText are fragments of Go's own error strings and of our infrastructure
// that must never reach a caller.
var rawText = []string{" on 10.", "10.9.8.7", ":53", "dial tcp", "connect:", "read tcp", "x509:", "tls:", "context deadline exceeded",
	"net/http", "remote error", "EOF", "i/o timeout", "127.0.0.1:"}

func assertClean(t *testing.T, what string, err error, kind ErrorKind, want string) {
	t.Helper()
	var fe *Error
	if !errors.As(err, &fe) {
		t.Errorf("%s: %T %v is not a *fetch.Error", what, err, err)
		return
	}
	if fe.Kind != kind {
		t.Errorf("%s: kind %q, want %q (%v)", what, fe.Kind, kind, fe.Err)
	}
	msg := err.Error()
	if !strings.Contains(msg, want) {
		t.Errorf("%s: message %q does not contain %q", what, msg, want)
	}
	for _, raw := range rawText {
		if strings.Contains(msg, raw) {
			t.Errorf("%s: message %q leaks %q", what, msg, raw)
		}
	}
	if Describe(err) != msg {
		t.Errorf("%s: Describe %q differs from the message", what, Describe(err))
	}
}

// Each way of getting no answer has a plain cause without Go's raw text or
// an address of the scanner's network (the resolver's address above all).
func TestFailureCauses(t *testing.T) {
	ctx := context.Background()
	res := newMapResolver()
	res.err["servfail.test"] = &net.DNSError{Err: "server misbehaving", Name: "servfail.test", Server: "10.9.8.7:53", IsTemporary: true}
	res.err["slowdns.test"] = &net.DNSError{Err: "i/o timeout", Name: "slowdns.test", Server: "10.9.8.7:53", IsTimeout: true}
	dev := AddressPolicy{AllowPrivate: true, AllowAnyPort: true}
	c := NewClient(Config{Resolver: res, Policy: dev}) // 5 s: TLS under -race on a loaded machine is slow
	quick := NewClient(Config{Resolver: res, Policy: dev, RequestTimeout: 300 * time.Millisecond})

	t.Run("name does not resolve", func(t *testing.T) {
		r := c.NewSession().Do(ctx, Request{URL: "https://example.invalid/"})
		assertClean(t, "nxdomain", r.Err, KindDNS, "the name example.invalid does not resolve")
	})
	t.Run("resolver fails", func(t *testing.T) {
		r := c.NewSession().Do(ctx, Request{URL: "https://servfail.test/"})
		assertClean(t, "servfail", r.Err, KindDNSFailure, "servfail.test could not be resolved")
		r = c.NewSession().Do(ctx, Request{URL: "https://slowdns.test/"})
		assertClean(t, "dns timeout", r.Err, KindDNSFailure, "timed out")
	})
	t.Run("real resolver", func(t *testing.T) {
		// Go's own message names the resolver ("lookup x on 10.255.255.53:53");
		// whether this machine has DNS or not, the cause must not.
		r := NewClient(Config{Policy: dev}).NewSession().Do(ctx, Request{URL: "https://does-not-exist.invalid/"})
		var fe *Error
		if !errors.As(r.Err, &fe) || (fe.Kind != KindDNS && fe.Kind != KindDNSFailure) {
			t.Fatalf("%T %v: want a DNS failure", r.Err, r.Err)
		}
		var dns *net.DNSError
		if errors.As(r.Err, &dns) && dns.Server != "" && strings.Contains(r.Err.Error(), dns.Server) {
			t.Errorf("message %q names the resolver %s", r.Err, dns.Server)
		}
		assertClean(t, "real resolver", r.Err, fe.Kind, "does-not-exist.invalid")
	})
	t.Run("connection refused", func(t *testing.T) {
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		addr := l.Addr().String()
		l.Close()
		r := c.NewSession().Do(ctx, Request{URL: "http://" + addr + "/"})
		assertClean(t, "refused", r.Err, KindRefused, "refused the connection")
	})
	t.Run("timeout", func(t *testing.T) {
		hung, _ := net.Listen("tcp", "127.0.0.1:0")
		defer hung.Close()
		go func() {
			for {
				conn, err := hung.Accept()
				if err != nil {
					return
				}
				defer conn.Close()
			}
		}()
		r := quick.NewSession().Do(ctx, Request{URL: "http://" + hung.Addr().String() + "/"})
		assertClean(t, "timeout", r.Err, KindTimeout, "did not answer in time (300ms per request)")
	})
	t.Run("scan deadline and cancel", func(t *testing.T) {
		hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
		defer hung.Close()
		slow := NewClient(Config{Policy: dev, RequestTimeout: 5 * time.Second})
		dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		r := slow.NewSession().Do(dctx, Request{URL: hung.URL + "/"})
		assertClean(t, "deadline", r.Err, KindDeadline, "the scan's deadline passed")
		cctx, cancel2 := context.WithCancel(ctx)
		cancel2()
		r = slow.NewSession().Do(cctx, Request{URL: hung.URL + "/"})
		assertClean(t, "canceled", r.Err, KindCanceled, "canceled")
	})
	t.Run("closed without answering", func(t *testing.T) {
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		defer l.Close()
		go func() {
			for {
				conn, err := l.Accept()
				if err != nil {
					return
				}
				buf := make([]byte, 1024)
				conn.Read(buf)
				conn.Close()
			}
		}()
		r := c.NewSession().Do(ctx, Request{URL: "http://" + l.Addr().String() + "/"})
		assertClean(t, "closed", r.Err, KindReset, "closed the connection before answering")
	})
	t.Run("not HTTP", func(t *testing.T) {
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		defer l.Close()
		go func() {
			for {
				conn, err := l.Accept()
				if err != nil {
					return
				}
				buf := make([]byte, 1024)
				conn.Read(buf)
				conn.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n\r\n"))
				conn.Close()
			}
		}()
		r := c.NewSession().Do(ctx, Request{URL: "http://" + l.Addr().String() + "/"})
		assertClean(t, "garbage", r.Err, KindProtocol, "not valid HTTP")
	})

	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	tlsSrv.Config.ErrorLog = quietLog()
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	_, tlsPort, _ := net.SplitHostPort(tlsSrv.Listener.Addr().String())
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer plain.Close()
	t.Run("untrusted certificate", func(t *testing.T) {
		r := c.NewSession().Do(ctx, Request{URL: tlsSrv.URL + "/"})
		assertClean(t, "untrusted", r.Err, KindTLSCert, "not signed by a trusted authority")
	})
	t.Run("certificate for another name", func(t *testing.T) {
		res.set("other-name.test", "127.0.0.1")
		pool := x509.NewCertPool()
		pool.AddCert(tlsSrv.Certificate())
		trusting := NewClient(Config{Resolver: res, Policy: dev, TLS: &tls.Config{RootCAs: pool}})
		r := trusting.NewSession().Do(ctx, Request{URL: "https://other-name.test:" + tlsPort + "/"})
		assertClean(t, "hostname", r.Err, KindTLSCert, "not valid for that name")
	})
	t.Run("https to a plain HTTP port", func(t *testing.T) {
		r := c.NewSession().Do(ctx, Request{URL: "https" + strings.TrimPrefix(plain.URL, "http") + "/"})
		assertClean(t, "plain port", r.Err, KindTLS, "did not answer in TLS")
	})
	t.Run("redirect problems", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/loop":
				http.Redirect(w, r, "/loop", http.StatusFound)
			case "/ftp":
				http.Redirect(w, r, "ftp://example.com/", http.StatusFound)
			case "/bad":
				w.Header().Set("Location", "http://[::1/"+strings.Repeat("x", 5000))
				w.WriteHeader(http.StatusFound)
			}
		}))
		defer srv.Close()
		r := c.NewSession().Do(ctx, Request{URL: srv.URL + "/loop"})
		assertClean(t, "loop", r.Err, KindRedirects, "redirects too many times")
		if !errors.Is(r.Err, ErrTooManyRedirects) {
			t.Error("the redirect limit no longer matches ErrTooManyRedirects")
		}
		r = c.NewSession().Do(ctx, Request{URL: srv.URL + "/ftp"})
		assertClean(t, "ftp", r.Err, KindInvalidURL, "redirects to a URL that is not")
		r = c.NewSession().Do(ctx, Request{URL: srv.URL + "/bad"})
		assertClean(t, "bad location", r.Err, KindBadRedirect, "not a valid URL")
		if len(r.Err.Error()) > 200 {
			t.Errorf("a 5 KB Location made a %d-byte message", len(r.Err.Error()))
		}
	})
	t.Run("records carry the clean cause", func(t *testing.T) {
		s := c.NewSession()
		s.Do(ctx, Request{URL: "https://servfail.test/"})
		recs := s.Records()
		if len(recs) != 1 || strings.Contains(recs[0].Err, "10.9.8.7") || !strings.Contains(recs[0].Err, "could not be resolved") {
			t.Errorf("records %+v", recs)
		}
	})
}
