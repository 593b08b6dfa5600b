// Package redistest runs a redis-server process of the caller's own on a
// free loopback port, so a test or benchmark can freeze it (SIGSTOP) and
// thaw it without disturbing the Redis other tests share (REDIS_URL).
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/testing/testenv"
)

// Server is a running redis-server.
type Server struct {
	URL  string // redis://127.0.0.1:<port>/0
	Addr string
	cmd  *exec.Cmd
}

// Start launches a server for tb and stops it at the end of the test. A
// missing redis-server binary skips tb (fails it under CI=true).
func Start(tb testing.TB) *Server {
	tb.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		testenv.Require(tb, "redis-server on the PATH (apt-get install redis-server)")
	}
	s, err := Launch()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Launch starts a server; Close stops it.
func Launch() (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New("redis-server is not on the PATH (apt-get install redis-server)")
	}
	var last error
	for attempt := 0; attempt < 5; attempt++ { // the free port may be taken between probe and start
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "no")
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd}
		s.URL = "redis://" + s.Addr + "/0"
		if last = s.waitReady(5 * time.Second); last == nil {
			return s, nil
		}
		s.Close()
	}
	return nil, fmt.Errorf("redis-server did not start: %w", last)
}

func (s *Server) waitReady(within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		err := s.ping()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *Server) ping() error {
	c, err := net.DialTimeout("tcp", s.Addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("unexpected answer %q", line)
	}
	return nil
}

// Freeze stops the process (SIGSTOP): connections stay open and new ones are
// still accepted by the kernel, but nothing is answered, as with a Redis
// stuck in a long command or a paused VM.
func (s *Server) Freeze() error { return s.cmd.Process.Signal(syscall.SIGSTOP) }

// Thaw resumes a frozen server (SIGCONT).
func (s *Server) Thaw() error { return s.cmd.Process.Signal(syscall.SIGCONT) }

// Close stops the server.
func (s *Server) Close() {
	s.cmd.Process.Kill() // SIGKILL ends a frozen process too
	s.cmd.Wait()
}
