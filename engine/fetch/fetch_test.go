package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestAddressPolicy(t *testing.T) {
	hosted := AddressPolicy{}
	dev := AddressPolicy{AllowPrivate: true}
	cases := []struct {
		addr          string
		hostedOK, dev bool
	}{
		{"93.184.216.34", true, true},
		{"2606:2800:220:1:248:1893:25c8:1946", true, true},
		{"127.0.0.1", false, true},
		{"10.1.2.3", false, true},
		{"172.16.0.1", false, true},
		{"192.168.1.1", false, true},
		{"100.64.0.1", false, true},
		{"::1", false, true},
		{"fd00::1", false, true},
		{"169.254.169.254", false, false},
		{"fe80::1", false, false},
		{"0.0.0.0", false, false},
		{"::", false, false},
		{"224.0.0.1", false, false},
		{"ff02::1", false, false},
		{"255.255.255.255", false, false},
		{"::ffff:169.254.169.254", false, false},
		{"::ffff:127.0.0.1", false, true},
		{"64:ff9b::a9fe:a9fe", false, false}, // NAT64 of 169.254.169.254
		{"2002:a9fe:a9fe::", false, false},   // 6to4 of 169.254.169.254
		{"2002:0a00:0001::", false, true},    // 6to4 of 10.0.0.1
		{"fd00:ec2::254", false, false},      // AWS metadata over IPv6
		{"100.100.100.200", false, false},    // Alibaba metadata
		{"192.0.2.1", false, false},
		{"198.18.0.1", false, false},
	}
	for _, c := range cases {
		a := netip.MustParseAddr(c.addr)
		if err := hosted.CheckAddr(a); (err == nil) != c.hostedOK {
			t.Errorf("hosted %s: %v", c.addr, err)
		}
		if err := dev.CheckAddr(a); (err == nil) != c.dev {
			t.Errorf("allow-private %s: %v", c.addr, err)
		}
	}
	if hosted.CheckPort(8080) == nil || hosted.CheckPort(443) != nil || (AddressPolicy{AllowAnyPort: true}).CheckPort(8080) != nil {
		t.Error("ports: only 80 and 443 unless any port is allowed")
	}
}

func devClient(cfg Config) *Client {
	cfg.Policy = AddressPolicy{AllowPrivate: true, AllowAnyPort: true}
	return NewClient(cfg)
}

// Concurrent callers asking for the same representation share one round trip.
func TestSessionFetchesOnce(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		time.Sleep(20 * time.Millisecond)
		fmt.Fprint(w, r.Header.Get("Accept"))
	}))
	defer srv.Close()
	s := devClient(Config{}).NewSession()
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := s.Do(context.Background(), Request{URL: srv.URL + "/x", Accept: "text/plain"}); string(r.Body) != "text/plain" {
				t.Errorf("body %q", r.Body)
			}
		}()
	}
	wg.Wait()
	s.Do(context.Background(), Request{URL: srv.URL + "/x", Accept: "text/markdown"})
	if n := hits.Load(); n != 2 {
		t.Errorf("%d requests, want 2 (one per representation)", n)
	}
	if len(s.Records()) != 2 || len(s.Responses()) != 2 {
		t.Errorf("records %d responses %d", len(s.Records()), len(s.Responses()))
	}
}

func TestBodyCapsAndDecompression(t *testing.T) {
	var member bytes.Buffer
	zw := gzip.NewWriter(&member)
	zw.Write(make([]byte, 1<<20))
	zw.Close()
	bomb := bytes.NewBuffer(bytes.Repeat(member.Bytes(), 50)) // 50 MiB of zeros in 50 gzip members
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/bomb":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(bomb.Bytes())
		case "/small.gz":
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			zw.Write([]byte("hello"))
			zw.Close()
		case "/big":
			w.Write(bytes.Repeat([]byte("a"), 3<<20))
		}
	}))
	defer srv.Close()
	s := devClient(Config{MaxBody: 1 << 20}).NewSession()
	ctx := context.Background()
	if r := s.Do(ctx, Request{URL: srv.URL + "/bomb"}); !r.Truncated || len(r.Body) != 1<<20 {
		t.Errorf("gzip bomb: %d bytes, truncated %v", len(r.Body), r.Truncated)
	}
	if r := s.Do(ctx, Request{URL: srv.URL + "/small.gz"}); string(r.Body) != "hello" {
		t.Errorf("gzip body %q", r.Body)
	}
	if r := s.Do(ctx, Request{URL: srv.URL + "/big", MaxBody: 500 << 10}); !r.Truncated || len(r.Body) != 500<<10 {
		t.Errorf("per-request cap: %d", len(r.Body))
	}
}

func TestRedirects(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/one":
			http.Redirect(w, r, "/dest", http.StatusMovedPermanently)
		case "/meta":
			http.Redirect(w, r, "http://169.254.169.254/", http.StatusFound)
		case "/ftp":
			http.Redirect(w, r, "ftp://example.com/", http.StatusFound)
		default:
			fmt.Fprint(w, "ok")
		}
	}))
	defer srv.Close()
	s := devClient(Config{}).NewSession()
	ctx := context.Background()
	if r := s.Do(ctx, Request{URL: srv.URL + "/loop"}); !errors.Is(r.Err, ErrTooManyRedirects) || len(r.Redirects) != 5 {
		t.Errorf("loop: %v after %d redirects", r.Err, len(r.Redirects))
	}
	if r := s.Do(ctx, Request{URL: srv.URL + "/one"}); r.Status != 200 || !strings.HasSuffix(r.FinalURL, "/dest") {
		t.Errorf("one redirect: %d %s", r.Status, r.FinalURL)
	}
	if r := s.Do(ctx, Request{URL: srv.URL + "/one", NoRedirect: true}); r.Status != 301 {
		t.Errorf("NoRedirect: %d", r.Status)
	}
	if r := s.Do(ctx, Request{URL: srv.URL + "/meta"}); !errors.Is(r.Err, ErrBlockedAddress) {
		t.Errorf("redirect to metadata: %v", r.Err)
	}
	if r := s.Do(ctx, Request{URL: srv.URL + "/ftp"}); r.Err == nil {
		t.Error("redirect to ftp followed")
	}
}

func TestTimeouts(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slowbody" {
			w.WriteHeader(200)
			w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	s := devClient(Config{RequestTimeout: 200 * time.Millisecond}).NewSession()
	// The server answers nothing until the test ends, and the caller's
	// deadline is long: the 200 ms request timeout must end both requests,
	// in less than half of that deadline.
	const callerDeadline = 30 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), callerDeadline)
	defer cancel()
	start := time.Now()
	var fe *Error
	if r := s.Do(ctx, Request{URL: srv.URL + "/hang"}); !errors.As(r.Err, &fe) || fe.Kind != KindTimeout {
		t.Errorf("a hung server must time out (per request): %v", r.Err)
	}
	r := s.Do(ctx, Request{URL: srv.URL + "/slowbody"})
	if r.Status != 200 || r.BodyErr == nil || r.Found() {
		t.Errorf("slow body: status %d bodyErr %v found %v", r.Status, r.BodyErr, r.Found())
	}
	if took := time.Since(start); took >= callerDeadline/2 {
		t.Errorf("two 200 ms timeouts took %s", took)
	}
}

func TestSoftNotFound(t *testing.T) {
	for body, html := range map[string]bool{"<!DOCTYPE html><html>": true, "  \n<html lang=en>": true, "<!-- c --><html>": true, "# llms.txt": false, `{"a":1}`: false} {
		r := &Response{Status: 200, Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte(body)}
		if r.LooksHTML() != html || r.Found() == html {
			t.Errorf("%q: LooksHTML %v", body, r.LooksHTML())
		}
	}
}
