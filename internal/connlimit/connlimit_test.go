package connlimit

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestClientKey(t *testing.T) {
	key := func(s string) string {
		a, err := net.ResolveTCPAddr("tcp", s)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := clientKey(a)
		if !ok {
			t.Fatalf("%s: no key", s)
		}
		return p.String()
	}
	for in, want := range map[string]string{
		"192.0.2.1:80":                      "192.0.2.1/32",
		"[::ffff:192.0.2.1]:80":             "192.0.2.1/32", // the same client over a dual-stack socket
		"[2001:db8:1:2:aaaa::1]:443":        "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff:ffff:ffff:1]:1": "2001:db8:1:2::/64", // another address of the same /64
	} {
		if got := key(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	if key("[2001:db8:1:3::1]:1") == key("[2001:db8:1:2::1]:1") {
		t.Error("two /64s share a count")
	}
}

// Over the cap, the client reads a complete 429 envelope (not a reset), even
// when it has already sent its request; the refused connection never reaches
// Accept's caller, and closing a held one frees the slot.
func TestRefusalIsReadable(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := Wrap(raw, 2, true).(*Listener)
	defer ln.Close()
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b := dial(), dial()
	defer a.Close()
	defer b.Close()
	first := <-accepted
	<-accepted
	c := dial()
	defer c.Close()
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10000\r\n\r\n"+strings.Repeat("x", 10000))
	c.SetReadDeadline(time.Now().Add(30 * time.Second)) // a safety net: the refusal comes at once
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the refusal: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 429 || !strings.Contains(string(body), `"code":"too_many_connections"`) || ln.Refused() != 1 {
		t.Errorf("refusal: %d %s (refused %d)", resp.StatusCode, body, ln.Refused())
	}
	select {
	case <-accepted:
		t.Fatal("the refused connection reached Accept's caller")
	default:
	}
	first.Close()
	d := dial()
	defer d.Close()
	select {
	case <-accepted:
	case <-time.After(30 * time.Second): // a safety net
		t.Fatal("a freed slot was not reused")
	}
}

// Loopback peers are not counted unless asked: a reverse proxy on the same
// host carries every client.
func TestLoopbackUncountedByDefault(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := Wrap(raw, 1, false).(*Listener)
	defer ln.Close()
	go func() {
		for {
			if _, err := ln.Accept(); err != nil {
				return
			}
		}
	}()
	var conns []net.Conn
	for i := 0; i < 5; i++ {
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		if n, _ := c.Read(make([]byte, 1)); n > 0 {
			t.Error("a loopback connection was refused")
		}
		c.Close()
	}
	if ln.Refused() != 0 {
		t.Errorf("%d refused", ln.Refused())
	}
}
