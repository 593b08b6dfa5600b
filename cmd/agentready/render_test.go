package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentready/agentready/internal/testing/testenv"
)

// scan --render ends with what agents that do not run JavaScript miss,
// rendered by real Chromium; --json carries the same as the rendered block.
func TestScanRender(t *testing.T) {
	t.Setenv("CHROME_PATH", testenv.Chromium(t))
	url := site(t, "spa")
	code, out, stderr := runCLI("scan", "--render", url)
	if code != exitOK {
		t.Fatalf("scan --render: exit %d: %s", code, stderr)
	}
	i := strings.Index(out, "What agents that do not run JavaScript miss")
	if i < 0 {
		t.Fatalf("no rendered section:\n%s", out)
	}
	for _, want := range []string{"h1: Acme Widgets for busy teams", url + "/docs/api", "types only after rendering: Organization"} {
		if !strings.Contains(out[i:], want) {
			t.Errorf("rendered section lacks %q:\n%s", want, out[i:])
		}
	}
	code, out, _ = runCLI("scan", "--render", "--json", url)
	var res struct {
		Rendered *struct {
			WordsOnlyRendered int      `json:"wordsOnlyRendered"`
			JSONLDTypes       []string `json:"jsonLdTypesOnlyRendered"`
		} `json:"rendered"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != exitOK || res.Rendered == nil || res.Rendered.WordsOnlyRendered == 0 {
		t.Fatalf("scan --render --json: exit %d, %v, %+v", code, err, res.Rendered)
	}
	// Without the flag: no browser, no section, no block.
	_, out, _ = runCLI("scan", url)
	if strings.Contains(out, "do not run JavaScript") {
		t.Error("the rendered section is printed without --render")
	}
}

// Without Chromium, --render is refused with what to install, before any scan.
func TestScanRenderWithoutChromium(t *testing.T) {
	t.Setenv("CHROME_PATH", "/nonexistent/chromium")
	code, out, stderr := runCLI("scan", "--render", "http://127.0.0.1:9/")
	if code != exitUsage || out != "" || !strings.Contains(stderr, "apt-get install chromium") || !strings.Contains(stderr, "CHROME_PATH") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}
