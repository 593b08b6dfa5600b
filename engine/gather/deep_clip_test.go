package gather

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentready/agentready/engine/clip"
)

// What a deep gatherer keeps of a site's long multibyte text is cut by runes
// (engine/clip): valid UTF-8, at most the cap in runes, a prefix of what the
// site wrote, the cut marked. A byte cut would split a 3-byte character.
func TestDeepGatherersCutSiteTextByRunes(t *testing.T) {
	long := strings.Repeat("日本語", 200) // 600 runes, 1800 bytes
	site, _ := url.Parse("https://shop.example/")
	base, _ := url.Parse("https://shop.example/.well-known/agent-card.json")

	rep := a2aReadReply("application/json", []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"`+long+`"}}`))
	card := a2aReadReply("application/json", []byte(`{"jsonrpc":"2.0","id":1,"result":{"name":"`+long+`"}}`))
	token := ParseTokenReply([]byte(`{"access_token":"t","token_type":"` + long + `","scope":"` + long + `"}`))
	decls := ParseContract([]byte(`{"capabilities":{"auditLog":{"header":"`+long+`"},"scopedTokens":{"tokenEndpoint":"/t","scopes":["`+long+`"]}}}`), base, site, "agent card")
	if rep == nil || card == nil || token == nil || len(decls) != 2 {
		t.Fatalf("reply %+v, card %+v, token %+v, %d declarations", rep, card, token, len(decls))
	}
	type keptText struct {
		what, got string
		max       int // the gatherer's cap, in runes
	}
	kept := []keptText{
		{"A2A error message", rep.Message, a2aMaxText},
		{"A2A extended card name", card.ResultName, a2aMaxText},
		{"token_type", token.TokenType, 40},
		{"scope", token.Scope, 200},
	}
	for _, d := range decls {
		if d.Kind == "auditLog" {
			kept = append(kept, keptText{"declared audit header", d.Declared, maxDeclaredLen})
		}
		for _, s := range d.Scopes {
			kept = append(kept, keptText{"declared scope", s, 100})
		}
	}
	if len(kept) != 6 {
		t.Fatalf("%d values kept, want 6: %+v", len(kept), decls)
	}
	for _, k := range kept {
		n := utf8.RuneCountInString(k.got)
		if !utf8.ValidString(k.got) || n != k.max || !strings.HasSuffix(k.got, clip.Mark) || !strings.HasPrefix(long, strings.TrimSuffix(k.got, clip.Mark)) {
			t.Errorf("%s: %d runes %q, want the first %d runes of the site's text ending with %s", k.what, n, k.got, k.max-1, clip.Mark)
		}
	}
}
