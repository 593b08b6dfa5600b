package engine_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/testenv"
)

// statefulMCP is tests/node/statefulmcp.mjs: a stateful Streamable HTTP
// server built with the official MCP TypeScript SDK, serving a site whose
// server card names it, and counting the sessions it opened and those
// ended with DELETE.
type statefulMCP struct{ URL string }

type mcpSessionCounts struct {
	Opened    int      `json:"opened"`
	Closed    int      `json:"closed"`
	Open      []string `json:"open"`
	ToolCalls int      `json:"toolCalls"`
}

func startStatefulMCP(t *testing.T) *statefulMCP {
	t.Helper()
	node := testenv.Node(t, "@modelcontextprotocol/sdk")
	cmd := exec.Command(node, filepath.Join(testenv.NodeDir(), "statefulmcp.mjs"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Scan()
		line <- sc.Text()
	}()
	var first string
	select {
	case first = <-line:
	case <-time.After(20 * time.Second):
		t.Fatalf("statefulmcp.mjs printed nothing within 20s: %s", stderr.String())
	}
	var hello struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal([]byte(first), &hello); err != nil || !strings.HasPrefix(hello.URL, "http://127.0.0.1:") {
		t.Fatalf("statefulmcp.mjs said %q (%v): %s", first, err, stderr.String())
	}
	return &statefulMCP{URL: hello.URL}
}

func (s *statefulMCP) counts(t *testing.T) mcpSessionCounts {
	t.Helper()
	resp, err := http.Get(s.URL + "/__counts")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c mcpSessionCounts
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

// Every MCP handshake a scan makes ends the session it opened, as the MCP
// transport spec asks (DELETE with the Mcp-Session-Id): the free scan's
// handshake and, in a deep scan, the live SDK client too. Sessions are
// counted per scan by the server itself; the scan has returned, so each
// DELETE has been answered.
func TestMCPSessionsEnded(t *testing.T) {
	srv := startStatefulMCP(t)
	sc := loopbackScanner(30 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name string
		// sessions the scan opens: the free handshake's initialize (the
		// server refuses server/discover), and in a deep scan the live
		// client's too.
		sessions int
		scan     func(t *testing.T) *report.Result
	}{
		{"free", 1, func(t *testing.T) *report.Result {
			res, err := sc.Scan(ctx, srv.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			return res
		}},
		{"deep", 2, func(t *testing.T) *report.Result {
			res, _, err := sc.DeepScan(ctx, srv.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			return res
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := srv.counts(t)
			res := tc.scan(t)
			after := srv.counts(t)
			opened, closed := after.Opened-before.Opened, after.Closed-before.Closed
			if opened != tc.sessions || closed != opened || len(after.Open) != 0 {
				t.Errorf("%s scan: %d sessions opened, %d ended with DELETE, still open %v; want %d opened, all ended", tc.name, opened, closed, after.Open, tc.sessions)
			}
			if after.ToolCalls != 0 {
				t.Errorf("%d tool calls: a scan calls no tool", after.ToolCalls)
			}
			// The sessions were used, not only opened: the free scan listed
			// the tool through its session, the deep one through the SDK's.
			if c, ok := res.Check("3.7"); !ok || !strings.Contains(c.Message, "1 of 1") {
				t.Errorf("3.7 did not grade the listed tool: %+v", c)
			}
			if tc.name == "deep" {
				live := deepProbe(res, "mcp.live")
				if live == nil || live.Status != report.Pass {
					t.Errorf("mcp.live: %+v", live)
				}
			}
		})
	}
}

func deepProbe(res *report.Result, id string) *report.DeepProbe {
	if res.Deep == nil {
		return nil
	}
	for i := range res.Deep.Probes {
		if res.Deep.Probes[i].ID == id {
			return &res.Deep.Probes[i]
		}
	}
	return nil
}
