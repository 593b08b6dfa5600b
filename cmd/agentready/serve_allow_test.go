package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/edge"
)

// An allow-list entry that does not parse stops serve before anything
// starts, naming the setting, the entry and what to write instead.
func TestServeAllowListErrors(t *testing.T) {
	for _, tc := range []struct {
		name, env string
		args      []string
		want      string
	}{
		{"a host name", "localhost:8080", nil, `"localhost:8080" is not an address with a port (host names are not accepted`},
		{"port 0 by flag", "", []string{"--allow", "127.0.0.1:0"}, `"127.0.0.1:0" names port 0`},
		{"a metadata address", "10.0.0.0/8,169.254.169.254", nil, "cloud metadata address"},
		{"a non-standard IPv4 notation", "127.1", nil, "is not an IP address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("AGENTREADY_ALLOW", tc.env)
			code, _, errb := runCLI(append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--edge-wasm", ""}, tc.args...)...)
			if code != exitUsage || !strings.Contains(errb, "--allow (AGENTREADY_ALLOW)") || !strings.Contains(errb, tc.want) || !strings.Contains(errb, "write an IP address") {
				t.Errorf("exit %d (want %d), stderr %q (want it to say %q)", code, exitUsage, errb, tc.want)
			}
		})
	}
}

// liveServe is a running `agentready serve` of a built binary.
type liveServe struct {
	base string
	out  *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var servingOn = regexp.MustCompile(`serving on (http://\S+)`)

// serveBinary starts `bin serve` on a free loopback port with the native
// edge, embedded state, no Chromium and allowances no test exhausts, plus
// args; it is stopped (SIGTERM, then killed) when the test ends.
func serveBinary(t *testing.T, bin string, args ...string) *liveServe {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--edge-wasm", ""}, args...)...)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "AGENTREADY_") || strings.HasPrefix(kv, "REDIS_URL=") || strings.HasPrefix(kv, "CHROME_PATH=")
	})
	cmd.Env = append(cmd.Env, "CHROME_PATH=/nonexistent/chromium", "AGENTREADY_FREE_DAILY=100000")
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := servingOn.FindStringSubmatch(out.String()); m != nil {
			return &liveServe{base: m[1], out: out}
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("agentready serve exited (%v):\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("agentready serve did not say where it serves within 30 s:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// getJSON GETs path and decodes the answer into v; it returns the status.
func (s *liveServe) getJSON(t *testing.T, path string, v any) int {
	t.Helper()
	resp, err := (&http.Client{Timeout: time.Minute}).Get(s.base + path)
	if err != nil {
		t.Fatalf("GET %s: %v\nserve's output:\n%s", path, err, s.out.String())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %d %q is not JSON: %v", path, resp.StatusCode, b, err)
	}
	return resp.StatusCode
}

// With an allow-list, a loopback port not on it was
// refused with "the scanner only scans public sites", naming neither
// --allow nor AGENTREADY_ALLOW, and linked the error table. Now the refusal
// names the entry that admits the target and links the README's paragraph
// on scanning your own machine; for a name, not the address it resolves to.
func TestServeAllowRefusalSaysWhatToDo(t *testing.T) {
	bin := madeCLI(t, "")
	listed := site(t, "full")
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(closed.Addr().(*net.TCPAddr).Port)
	closed.Close()
	s := serveBinary(t, bin, "--allow", strings.TrimPrefix(listed, "http://"))

	var env struct{ Code, Message, Docs string }
	scan := func(target string) int {
		env.Code, env.Message, env.Docs = "", "", ""
		return s.getJSON(t, "/api/scan?format=json&url="+url.QueryEscape(target), &env)
	}
	says := func(what string, want []string, not ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(env.Message, w) {
				t.Errorf("%s: %q does not say %q", what, env.Message, w)
			}
		}
		for _, n := range not {
			if strings.Contains(env.Message, n) {
				t.Errorf("%s: %q says %q", what, env.Message, n)
			}
		}
		if env.Docs != apierr.LocalScansDocs {
			t.Errorf("%s: docs %q, want the README's paragraph %q", what, env.Docs, apierr.LocalScansDocs)
		}
	}

	// A literal: refused before any connection, saying what kind of
	// address it is and how to list it, without echoing it.
	if status := scan("http://127.0.0.1:" + port + "/"); status != 400 || env.Code != "invalid_url" {
		t.Fatalf("an unlisted loopback port: %d %s %q", status, env.Code, env.Message)
	}
	says("an unlisted loopback port", []string{"its host is a loopback address", "add the address with its port (IP:port) to --allow or AGENTREADY_ALLOW", "--allow-private"}, "only scans public sites", "127.0.0.1", port)

	// A name: refused at the dial, without the address it resolves to.
	if status := scan("http://localhost:" + port + "/"); status != 422 || env.Code != "site_unreachable" {
		t.Fatalf("localhost on an unlisted port: %d %s %q", status, env.Code, env.Message)
	}
	says("localhost on an unlisted port", []string{"localhost resolves to a loopback address", "(IP:" + port + ")", "--allow or AGENTREADY_ALLOW", "--allow-private"}, "127.0.0.1")

	// What the list names is scanned.
	var res struct {
		URL   string
		Score struct{ Value int }
	}
	if status := s.getJSON(t, "/api/scan?format=json&url="+url.QueryEscape(listed), &res); status != 200 || res.Score.Value == 0 {
		t.Errorf("the listed fixture: %d, score %d", status, res.Score.Value)
	}
}

// `keygen "bad name:x"` printed an entry serve then
// refused. One rule (edge.CheckAPIKeyName) for both: every name keygen
// accepts gives an entry serve's parser accepts, and the others exit 2.
func TestKeygenNamesAreServesNames(t *testing.T) {
	for _, name := range []string{"acme-ci", "a", "ops@acme.example", "team_2.prod", strings.Repeat("k", 64),
		"bad name:x", "bad name", "x:y", "a,b", "-flag", ".hidden", "", strings.Repeat("k", 65), "tab\tname", "naïve"} {
		code, out, errb := runCLI("keygen", "--", name)
		_, entry, _ := strings.Cut(out, "entry: ")
		entry, _, _ = strings.Cut(entry, "\n")
		_, parseErr := edge.ParseAPIKeys(entry)
		switch {
		case edge.CheckAPIKeyName(name) == nil:
			if code != exitOK || !strings.HasPrefix(entry, name+":") || parseErr != nil {
				t.Errorf("keygen %q: exit %d, entry %q, which serve reads as %v", name, code, entry, parseErr)
			}
		case code != exitUsage || out != "" || !strings.Contains(errb, "AGENTREADY_API_KEYS accepts no other name"):
			t.Errorf("keygen %q: exit %d, stdout %q, stderr %q; want exit 2 and the rule", name, code, out, errb)
		}
		// serve's side: an entry with that name parses exactly when keygen accepts it.
		sum := strings.Repeat("ab", 32)
		if _, err := edge.ParseAPIKeys(name + ":" + sum); (err == nil) != (edge.CheckAPIKeyName(name) == nil) && !strings.ContainsAny(name, ":,") && strings.TrimSpace(name) == name {
			t.Errorf("AGENTREADY_API_KEYS with %q: %v, keygen's rule: %v", name, err, edge.CheckAPIKeyName(name))
		}
	}
	// As a user runs it.
	bin := madeCLI(t, "")
	if code, out, errb := runBinary(t, bin, "keygen", "bad name:x"); code != exitUsage || out != "" || !strings.Contains(errb, `the API key name "bad name:x" has ' ' at position 4`) {
		t.Errorf(`keygen "bad name:x": exit %d, stdout %q, stderr %q`, code, out, errb)
	}
}
