//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/testing/testenv"
)

// `make demo` looped forever when the fixture server did
// not start. Now it gives up after DEMO_TIMEOUT seconds, or as soon as the
// server exits, with a message and the server's log, and exits non-zero.
func TestMakeDemoGivesUp(t *testing.T) {
	mk, err := exec.LookPath("make")
	if err != nil {
		testenv.Require(t, "make (apt-get install make)")
	}
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goCmd); err != nil {
		if goCmd, err = exec.LookPath("go"); err != nil {
			t.Fatalf("no go command: %v", err)
		}
	}
	bin := t.TempDir() // the demo's binaries, away from the repository's bin/
	for _, c := range []struct {
		name, server, want string
	}{
		{"never prints its URL", "sleep 60", "did not print its URL within 1 s"},
		{"exits at once", "sh -c 'echo listen: address already in use >&2; exit 1'", "exited before printing its URL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, mk, "-s", "-C", testenv.RepoRoot(), "demo", "GO="+goCmd, "BIN="+bin, "DEMO_TIMEOUT=1", "DEMO_SERVER="+c.server)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) } // make, the shell and the server
			// A make running this test (make test) passes its own flags and
			// variables down through the environment; this make gets only these.
			cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
				return strings.HasPrefix(kv, "MAKEFLAGS=") || strings.HasPrefix(kv, "MFLAGS=") || strings.HasPrefix(kv, "MAKELEVEL=")
			})
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			start := time.Now()
			err := cmd.Run()
			if ctx.Err() != nil {
				t.Fatalf("make demo still running after %s:\n%s", time.Since(start).Round(time.Second), out.String())
			}
			if err == nil {
				t.Fatalf("make demo succeeded without a server:\n%s", out.String())
			}
			if !strings.Contains(out.String(), "make demo: the fixture server "+c.want) {
				t.Errorf("the message does not say what went wrong:\n%s", out.String())
			}
			if c.name == "exits at once" && !strings.Contains(out.String(), "listen: address already in use") {
				t.Errorf("the server's log is not shown:\n%s", out.String())
			}
		})
	}
}
