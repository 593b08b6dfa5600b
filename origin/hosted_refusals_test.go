package origin_test

import (
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/edge"
	"github.com/agentready/agentready/edge/identity"
	"github.com/agentready/agentready/edge/native"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/origin"
	"github.com/agentready/agentready/origin/browser"
	"github.com/agentready/agentready/origin/monitor"
)

// The hosted service (an Opaque policy: no --allow-private, no allow-list)
// answers a loopback name, a private literal, link-local addresses and
// names, and names that do not resolve identically on every surface that
// shows a refusal: the scan API's JSON (GET and POST) and stream, the MCP
// tools, the badge, the screenshot endpoint, and monitor creation (target
// and callback). Only the host, which the caller wrote, differs. The
// precise policy (the CLI, --allow-private) keeps telling them apart.
func TestHostedRefusalsAreIndistinguishable(t *testing.T) {
	res := resolverOf{"loopback.example.com": "127.0.0.1", "private.example.com": "10.20.30.40", "linklocal.example.com": "169.254.10.10",
		"mapped.example.com": "::ffff:127.0.0.1"}
	hosts := []string{"loopback.example.com", "10.20.30.40", "169.254.169.254", "linklocal.example.com", "private.example.com",
		"mapped.example.com", "does-not-exist.example.com", "servfail.example.com", "[fd00::1]"}

	chromium := testenv.Chromium(t) // the screenshot endpoint answers only with a browser
	start := func(opaque bool) (*testOrigin, string) {
		policy := fetch.AddressPolicy{Opaque: opaque}
		sc := engine.New(engine.Options{Deadline: 5 * time.Second, Fetch: fetch.Config{Resolver: res, Policy: policy}})
		secret := []byte("edge-secret-for-the-hosted-refusals")
		mc := monitor.Config{Resolver: res, MaxPerTier: map[identity.Tier]int{identity.Anonymous: 100}}
		shots := browser.New(browser.Config{ExecPath: chromium, Policy: policy, Resolver: res})
		o := serveOrigin(t, origin.Config{EdgeSecret: secret, Monitors: mc, Browser: shots}, embedded(t), sc)
		plat, err := native.New(o.URL, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		e := httptest.NewServer(edge.New(edge.Config{IdentitySecret: secret}, plat))
		t.Cleanup(e.Close)
		return o, e.URL
	}

	// answers is what each surface says of host, with the host replaced.
	answers := func(t *testing.T, o *testOrigin, edgeURL, host string) map[string]string {
		target := "https://" + host + "/"
		bare := strings.Trim(host, "[]")
		blank := func(s string) string {
			return strings.ReplaceAll(strings.ReplaceAll(s, target, "TARGET"), bare, "HOST")
		}
		out := map[string]string{}
		envelopeOf := func(status int, b []byte) string {
			e := envelope(t, b)
			return blank(strconv.Itoa(status) + " " + string(e.Code) + " " + e.Message + " docs=" + e.Docs)
		}

		resp, b := get(t, o.URL+"/api/scan?format=json&url="+url.QueryEscape(target))
		out["GET /api/scan"] = envelopeOf(resp.StatusCode, b)
		body, _ := json.Marshal(map[string]string{"url": target})
		resp, b = post(t, nil, o.URL+"/api/scan", "application/json", string(body))
		out["POST /api/scan"] = envelopeOf(resp.StatusCode, b)

		var names []string
		for _, ev := range readStream(t, o.URL+"/api/scan?url="+url.QueryEscape(target)) {
			switch ev.Name {
			case "error":
				names = append(names, "error "+envelopeOf(422, []byte(ev.Data)))
			case "heartbeat", "message":
			default:
				names = append(names, ev.Name)
			}
		}
		out["stream"] = blank(strings.Join(names, " | "))

		cs := connect(t, o, "")
		r := call(t, cs, "scan_url", map[string]any{"url": target})
		out["MCP scan_url"] = blank(errText(r))
		r = call(t, cs, "validate_llms_txt", map[string]any{"url": target})
		out["MCP validate_llms_txt"] = blank(errText(r))

		resp, b = get(t, edgeURL+"/api/badge?format=shields&url="+url.QueryEscape(target))
		out["badge"] = blank(string(b))

		resp, b = get(t, o.URL+"/api/screenshot?url="+url.QueryEscape(target))
		out["screenshot"] = envelopeOf(resp.StatusCode, b)

		resp, b = post(t, nil, o.URL+"/api/monitors", "application/json", `{"url":"example.com","callback_url":"`+target+`hook"}`)
		out["monitor callback"] = envelopeOf(resp.StatusCode, b)
		resp, _ = post(t, nil, o.URL+"/api/monitors", "application/json", `{"url":"`+target+`","callback_url":"https://93.184.216.34/hook"}`)
		out["monitor target"] = resp.Status
		return out
	}

	t.Run("hosted", func(t *testing.T) {
		o, edgeURL := start(true)
		first := answers(t, o, edgeURL, hosts[0])
		for surface, a := range first {
			// The precise words, and what the resolver answered.
			for _, leak := range []string{"resolves to a", "is a loopback", "is a private", "is a link-local", "(DNS:", "could not be resolved", "127.0.0.1", "10.9.8.7"} {
				if strings.Contains(a, leak) {
					t.Errorf("%s says %q: %q", surface, leak, a)
				}
			}
		}
		if !strings.Contains(first["GET /api/scan"], "422 site_unreachable TARGET could not be reached: HOST is not a public address the service can reach") {
			t.Errorf("GET /api/scan: %q", first["GET /api/scan"])
		}
		// The refusal points at how to scan your own machine; other errors
		// at the error table.
		if !strings.HasSuffix(first["GET /api/scan"], "docs="+apierr.LocalScansDocs) || !strings.HasSuffix(first["POST /api/scan"], "docs="+apierr.LocalScansDocs) ||
			!strings.Contains(first["stream"], "docs="+apierr.LocalScansDocs) || !strings.Contains(first["MCP scan_url"], "See "+apierr.LocalScansDocs) {
			t.Errorf("the refusal's docs link does not lead to the README's paragraph: %q", first)
		}
		if !strings.HasSuffix(first["monitor callback"], "docs="+apierr.DocsURL) {
			t.Errorf("monitor callback: %q", first["monitor callback"])
		}
		if !strings.HasPrefix(first["screenshot"], "404 no_screenshot") {
			t.Errorf("screenshot: %q", first["screenshot"])
		}
		if !strings.Contains(first["monitor callback"], "400 invalid_callback_url") || first["monitor target"] != "201 Created" {
			t.Errorf("monitors: %q, %q", first["monitor callback"], first["monitor target"])
		}
		for _, host := range hosts[1:] {
			got := answers(t, o, edgeURL, host)
			for surface, want := range first {
				if got[surface] != want {
					t.Errorf("%s, %s:\n  %q\nwhere %s gets\n  %q", surface, host, got[surface], hosts[0], want)
				}
			}
		}
	})

	t.Run("precise", func(t *testing.T) {
		o, edgeURL := start(false)
		seen := map[string]bool{}
		for _, host := range []string{"loopback.example.com", "linklocal.example.com", "does-not-exist.example.com"} {
			seen[answers(t, o, edgeURL, host)["GET /api/scan"]] = true
		}
		if len(seen) != 3 {
			t.Errorf("the precise policy should say three different things: %v", seen)
		}
	})
}
