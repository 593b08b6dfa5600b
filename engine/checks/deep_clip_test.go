package checks

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentready/agentready/engine/clip"
	"github.com/agentready/agentready/engine/gather"
)

// A long value the site wrote in a multibyte script reaches a deep probe's
// message cut by runes (engine/clip): valid UTF-8, the cut marked with "…",
// never a split sequence (a byte cut at 160 would land inside a 3-byte
// character here).
func TestDeepProbesCutSiteTextByRunes(t *testing.T) {
	long := strings.Repeat("日本語", 200) // 600 runes, 1800 bytes

	oauthMeta := goodOAuthMeta(t)
	oauthMeta.ASFields.TokenEndpoint = "http://shop.example/" + long // not https: the message quotes it
	badTool := goodEndpoint("https://s.example/mcp")
	badTool.Tools = []gather.MCPLiveTool{{Name: long, InputSchema: map[string]any{"type": long}}}

	for _, c := range []struct {
		name    string
		message string
		quoted  int // the cap the probe applies, in runes
	}{
		{"oauth.metadata", judgeOAuth(t, "oauth.metadata", oauthMeta, goodOAuthToken(), &gather.OAuthChallenge{}).Message, oauthMaxQuoted},
		{"mcp.live", judgeLive(t, &gather.MCPLiveDoc{CardURL: "https://s.example/.well-known/mcp/server-card", Endpoints: []gather.MCPLiveEndpoint{badTool}}).Message, mcpMaxQuoted},
	} {
		if !utf8.ValidString(c.message) {
			t.Errorf("%s: message is not valid UTF-8: %q", c.name, c.message)
		}
		if !strings.Contains(c.message, clip.Mark) {
			t.Errorf("%s: the long value is not cut: %q", c.name, c.message)
		}
		if strings.Contains(c.message, long[:3*c.quoted]) {
			t.Errorf("%s: more than %d runes of the value are quoted: %q", c.name, c.quoted, c.message)
		}
		if !strings.Contains(c.message, strings.Repeat("日本語", (c.quoted-25)/3)) {
			t.Errorf("%s: the value's first runes are not quoted: %q", c.name, c.message)
		}
	}
}
