// Package connlimit caps how many connections one client address may hold
// open on a listener. Timeouts bound how long a slow client keeps a
// connection; this bounds how many it can keep at once, so a thousand
// drip-feeding connections from one host cannot take every file descriptor
// and worker of the server. It works under any HTTP server (net/http for the
// edge, fasthttp for the origin).
package connlimit

import (
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentready/agentready/apierr"
)

// DefaultPerIP is the cap when none is configured: generous for browsers
// (6 per host) and agents with connection pools, small against floods.
const DefaultPerIP = 64

// Listener counts open connections per client address.
type Listener struct {
	net.Listener
	max      int
	loopback bool
	refusal  []byte

	mu      sync.Mutex
	open    map[netip.Prefix]int
	refused atomic.Uint64
}

// Wrap caps ln at max connections per client address (max ≤ 0: no cap, ln
// is returned as is). IPv4 addresses count one by one, IPv6 ones per /64,
// the block one subscriber usually holds. Loopback peers are not counted
// unless capLoopback: on loopback the peer is a reverse proxy on the same
// host, carrying every client at once, or a local tool.
func Wrap(ln net.Listener, max int, capLoopback bool) net.Listener {
	if max <= 0 {
		return ln
	}
	return &Listener{Listener: ln, max: max, loopback: capLoopback, open: map[netip.Prefix]int{}, refusal: refusal(max)}
}

// refusal is the whole HTTP response a connection over the cap gets before
// it is closed: the API's error envelope, since the client may be a program
// reading the body.
func refusal(max int) []byte {
	body := apierr.New(apierr.TooManyConnections,
		"This address already holds "+strconv.Itoa(max)+" open connections to the service; reuse them (HTTP keep-alive) or close idle ones, then retry.").JSON()
	return []byte("HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nCache-Control: no-store\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + string(body))
}

func clientKey(a net.Addr) (netip.Prefix, bool) {
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Prefix{}, false
	}
	ip := ap.Addr().Unmap()
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, err := ip.Prefix(bits)
	return p, err == nil
}

// Accept returns the next connection within the cap; connections over it
// are answered 429 and closed without reaching the server.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key, ok := clientKey(c.RemoteAddr())
		if !ok || (!l.loopback && key.Addr().IsLoopback()) { // not an IP peer (a pipe), or an uncounted loopback one
			return c, nil
		}
		l.mu.Lock()
		n := l.open[key]
		if n >= l.max {
			l.mu.Unlock()
			l.refused.Add(1)
			go l.refuse(c)
			continue
		}
		l.open[key] = n + 1
		l.mu.Unlock()
		return &conn{Conn: c, l: l, key: key}, nil
	}
}

// Refused is how many connections were turned away.
func (l *Listener) Refused() uint64 { return l.refused.Load() }

// refuse answers and closes c. The request the client is sending is read
// and dropped for a moment first: closing with unread data makes the
// kernel reset the connection, and the client would see a reset instead of
// the answer.
func (l *Listener) refuse(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write(l.refusal); err != nil {
		return
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	io.Copy(io.Discard, io.LimitReader(c, 64<<10))
}

func (l *Listener) release(key netip.Prefix) {
	l.mu.Lock()
	if l.open[key]--; l.open[key] <= 0 {
		delete(l.open, key)
	}
	l.mu.Unlock()
}

type conn struct {
	net.Conn
	l    *Listener
	key  netip.Prefix
	once sync.Once
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.key) })
	return err
}

// CloseWrite keeps half-closing available to the server (net/http uses it
// to deliver its last answer before closing).
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
