package commerce

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentready/agentready/engine/internal/signal"
	"github.com/agentready/agentready/engine/parse/openapi"
	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/testenv"
)

const corpus = "../../../../shared/corpus/" // fuzz seeds only; tests use testenv.Shared

// Every commerce document in the corpus has its row: what it is (Sniff), what
// the UCP or ACP parser must extract, and the verdict when it is served at
// the path its kind belongs to, so a lenient parser cannot drop what matters.
func TestCorpus(t *testing.T) {
	type ucpRow struct {
		generation, version   string
		services              string // "name:transport,transport;…"
		capabilities          int
		handlers, signingKeys string // comma-joined
	}
	type acpRow struct {
		shape   string
		missing int
		marker  string
	}
	cases := map[string]struct {
		kind   Kind
		ucp    *ucpRow
		acp    *acpRow
		status report.Status // at the path of its kind (/.well-known/ucp or acp.json)
		says   string
	}{
		// spec scaffold, 2026-01-01: maps of arrays, capabilities {} (empty), top-level `keys`
		"ucp-spec-scaffold-profile.json": {KindUCP, &ucpRow{"2026-04-08", "2026-01-01", "dev.ucp.shopping:rest", 0, "com.google.pay,dev.shopify.shop_pay", "key_2026"}, nil,
			report.Partial, "no capabilities"},
		// official sample, 2026-01-11: services as objects, `{{ENDPOINT}}` template, capabilities array, payment.handlers[]
		"ucp-samples-rest-discovery-profile.json": {KindUCP, &ucpRow{"2026-01-11", "2026-01-11", "dev.ucp.shopping:rest", 5, "dev.shopify.shop_pay,com.google.pay", ""}, nil,
			report.Partial, "unexpanded template"},
		// same shape, a2a binding pointing at localhost
		"ucp-samples-business-agent-a2a.json": {KindUCP, &ucpRow{"2026-01-11", "2026-01-11", "dev.ucp.shopping:a2a", 2, "example.payment.provider", ""}, nil,
			report.Partial, "points at the publisher's own machine"},
		// 2026-04-08 with a real https endpoint, one capability, a PEM signing key
		"shopware-ats-ucp.json": {KindUCP, &ucpRow{"2026-04-08", "2026-04-08", "dev.ucp.shopping:rest", 1, "", "codex-temp-20260609"}, nil,
			report.Pass, "PEM string, not JWK members"},
		// pre-spec ACP: `protocol` is a string, `endpoints` map, no api_base_url/transports
		"a-ok-shop-acp.json": {KindACPDraft, nil, &acpRow{"pre-spec", 4, `"acp-draft-2024-12"`},
			report.Partial, "predates the discovery RFC"},
		// pre-spec ACP: top-level version "1.0", relative endpoints
		"acp-merchant-demo-acp.json": {KindACPDraft, nil, &acpRow{"pre-spec", 4, `top-level ` + "`version`" + ` "1.0"`},
			report.Partial, "endpoints (pre-spec): checkout, checkout_complete"},
		// an x402 discovery document (/.well-known/x402): paid resources with
		// per-network `accepts`; neither a UCP profile nor an ACP document,
		// and served at either path it is named for what it is
		"x402-skill-registry.json": {KindX402, &ucpRow{}, &acpRow{"unknown", 4, ""},
			report.Partial, "x402 discovery document"},
	}
	files, _ := filepath.Glob(testenv.Shared(t, "corpus/commerce") + "/*")
	if len(files) != len(cases) {
		t.Errorf("corpus %d files, table %d", len(files), len(cases))
	}
	for _, f := range files {
		name := filepath.Base(f)
		w, ok := cases[name]
		if !ok {
			t.Errorf("%s has no row", name)
			continue
		}
		b, _ := os.ReadFile(f)
		if k := Sniff(b); k != w.kind {
			t.Errorf("%s: sniffed %q, want %q", name, k, w.kind)
		}
		if w.ucp != nil {
			p, err := ParseUCP(b)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var svcs []string
			for _, s := range p.Services {
				var ts []string
				for _, b := range s.Transports {
					ts = append(ts, b.Transport)
				}
				svcs = append(svcs, s.Name+":"+strings.Join(ts, ","))
			}
			got := ucpRow{p.Generation, p.Version, strings.Join(svcs, ";"), len(p.Capabilities), strings.Join(p.PaymentHandlers, ","), strings.Join(p.SigningKeys, ",")}
			if got != *w.ucp || p.IsUCP() != (w.kind == KindUCP) {
				t.Errorf("%s: UCP %+v, want %+v", name, got, *w.ucp)
			}
			for _, c := range p.Capabilities {
				if !ReverseDomain(c) {
					t.Errorf("%s: capability %q", name, c)
				}
			}
		}
		if w.acp != nil {
			d, err := ParseACP(b, nil)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if d.Shape != w.acp.shape || len(d.Missing) != w.acp.missing || !strings.Contains(d.LegacyMarker, w.acp.marker) || d.Valid() {
				t.Errorf("%s: ACP %+v", name, d)
			}
		}
		var v signal.Verdict
		if w.kind == KindUCP {
			v = GradeUCP("https://shop.example"+UCPPath, 200, "application/json", b)
		} else {
			v = GradeACP("https://shop.example"+ACPPath, 200, "application/json", b)
			if u := GradeUCP("https://shop.example"+UCPPath, 200, "application/json", b); u.Status != report.Partial || !strings.Contains(u.Message, "no top-level `ucp` object") {
				t.Errorf("%s at %s: %+v", name, UCPPath, u)
			}
		}
		if v.Status != w.status || !strings.Contains(v.Message+"|"+v.DetailString(), w.says) {
			t.Errorf("%s: %+v", name, v)
		}
	}
}

// The AP2 merchant agent of the AP2 repository declares
// https://github.com/google-agentic-commerce/ap2/v1, not the URI the spec
// fixes: partial, and said so. The other corpus cards declare no AP2.
func TestAP2Corpus(t *testing.T) {
	dir := testenv.Shared(t, "corpus/a2a")
	files, _ := filepath.Glob(dir + "/*.json")
	if len(files) == 0 {
		t.Fatal("no cards")
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		v := GradeAP2("https://agent.example/.well-known/agent-card.json", b)
		if filepath.Base(f) == "ap2-merchant-agent.json" {
			x, err := FindAP2(b)
			if err != nil || x == nil || x.Exact || !x.Required || x.URI != "https://github.com/google-agentic-commerce/ap2/v1" {
				t.Errorf("ap2 card: %+v %v", x, err)
			}
			if v.Status != report.Partial || !strings.Contains(v.Message, "not the URI the AP2 specification gives") || !strings.Contains(v.DetailString(), "no `params.roles`") {
				t.Errorf("ap2 card: %+v", v)
			}
			continue
		}
		if v.Status != report.NA {
			t.Errorf("%s: %+v", filepath.Base(f), v)
		}
	}
}

func TestAP2(t *testing.T) {
	card := func(ext string) []byte {
		return []byte(`{"name":"a","skills":[],"capabilities":{"extensions":[` + ext + `]}}`)
	}
	cases := []struct {
		name   string
		card   []byte
		status report.Status
		says   string
	}{
		{"no card", nil, report.NA, "No A2A agent card"},
		{"no extension", card(`{"uri":"https://example.com/ext/rating"}`), report.NA, "declares no AP2"},
		{"exact", card(`{"uri":"` + AP2ExtensionURI + `","params":{"roles":["merchant"]},"required":true}`), report.Pass, "roles: merchant"},
		{"exact beside a near miss", card(`{"uri":"https://github.com/google-agentic-commerce/AP2/tree/v0.1"},{"uri":"` + AP2ExtensionURI + `","params":{"roles":["shopper"]}}`), report.Pass, "declares the AP2 extension"},
		{"case", card(`{"uri":"https://github.com/Google-Agentic-Commerce/AP2/tree/v0.1","params":{"roles":["merchant"]}}`), report.Partial, "not the URI"},
		{"unknown role", card(`{"uri":"` + AP2ExtensionURI + `","params":{"roles":["banker"]}}`), report.Pass, `role "banker" is not one`},
		{"stray types", []byte(`{"capabilities":{"extensions":"ap2"}}`), report.NA, "declares no AP2"},
		{"not JSON", []byte(`{"capabilities":`), report.NA, "line 1"},
	}
	for _, c := range cases {
		v := GradeAP2("https://a.example/.well-known/agent-card.json", c.card)
		if v.Status != c.status || !strings.Contains(v.Message+"|"+v.DetailString(), c.says) {
			t.Errorf("%s: %+v", c.name, v)
		}
	}
}

const acpGood = `{"protocol":{"name":"acp","version":"2026-01-30","supported_versions":["2025-09-29","2026-01-30"]},
	"api_base_url":"https://api.shop.example/acp","transports":["rest","mcp"],"capabilities":{"services":["checkout"],"extensions":[{"name":"discount"}]}}`

func TestACP(t *testing.T) {
	doc := "https://www.shop.example" + ACPPath
	cases := []struct {
		name   string
		status int
		ct     string
		body   string
		verd   report.Status
		says   string
	}{
		{"404", 404, "text/plain", "nope", report.NA, "answered 404"},
		{"soft 404", 200, "text/html", "<html>", report.NA, "soft 404"},
		{"pass", 200, "application/json", acpGood, report.Pass, "transports: rest, mcp"},
		{"other site", 200, "application/json", strings.Replace(acpGood, "api.shop.example", "acp.stripe.com", 1), report.Partial, "not on this site"},
		{"no transports", 200, "application/json", strings.Replace(acpGood, `"transports":["rest","mcp"],`, "", 1), report.Partial, "lacks `transports`"},
		{"wrong name", 200, "application/json", strings.Replace(acpGood, `"name":"acp"`, `"name":"ACP-v1"`, 1), report.Partial, "fixes it to \"acp\""},
		{"transports string", 200, "application/json", strings.Replace(acpGood, `["rest","mcp"]`, `"rest"`, 1), report.Partial, "`transports` is a string"},
		{"not JSON", 200, "application/json", `{"protocol":{'name':'acp'}}`, report.Partial, "single quotes"},
		{"array", 200, "application/json", `[1]`, report.Partial, "not a JSON object"},
	}
	for _, c := range cases {
		v := GradeACP(doc, c.status, c.ct, []byte(c.body))
		if v.Status != c.verd || !strings.Contains(v.Message+"|"+v.DetailString(), c.says) {
			t.Errorf("%s: %+v", c.name, v)
		}
		if (v.Status == report.NA) != (v.FoundAt == "") {
			t.Errorf("%s: foundAt %q", c.name, v.FoundAt)
		}
	}
}

const ucpGood = `{"ucp":{"version":"2026-04-08","services":{"dev.ucp.shopping":[{"transport":"rest","endpoint":"https://shop.example/ucp/v1"},{"transport":"mcp","endpoint":"https://shop.example/mcp"}]},
	"capabilities":{"dev.ucp.shopping.checkout":[{"version":"2026-04-08"}]},"payment_handlers":{"com.google.pay":[{"id":"gpay"}]}},"signing_keys":[{"kid":"k1","kty":"EC","crv":"P-256","x":"a","y":"b"}]}`

func TestUCP(t *testing.T) {
	cases := []struct {
		name   string
		status int
		ct     string
		body   string
		verd   report.Status
		says   string
	}{
		{"404", 404, "", "", report.NA, "answered 404"},
		{"soft 404", 200, "text/html; charset=utf-8", "<!doctype html>", report.NA, "soft 404"},
		{"pass", 200, "application/json", ucpGood, report.Pass, "service dev.ucp.shopping: rest https://shop.example/ucp/v1, mcp https://shop.example/mcp"},
		{"details", 200, "application/json", ucpGood, report.Pass, "payment handlers: com.google.pay; signing keys: k1"},
		{"bad version", 200, "application/json", strings.Replace(ucpGood, `"version":"2026-04-08","services"`, `"version":"v1","services"`, 1), report.Partial, "not a YYYY-MM-DD date"},
		{"impossible date", 200, "application/json", strings.Replace(ucpGood, `"version":"2026-04-08","services"`, `"version":"2026-02-30","services"`, 1), report.Partial, "not a YYYY-MM-DD date"},
		{"flat capability", 200, "application/json", strings.Replace(ucpGood, `dev.ucp.shopping.checkout`, `checkout`, 1), report.Partial, `reverse-domain form: "checkout"`},
		{"no services", 200, "application/json", `{"ucp":{"version":"2026-04-08","services":{},"capabilities":{"dev.ucp.shopping.checkout":[]}}}`, report.Partial, "no services"},
		{"services array", 200, "application/json", `{"ucp":{"version":"2026-04-08","services":["dev.ucp.shopping"],"capabilities":["dev.ucp.shopping.checkout"]}}`, report.Partial, "`ucp.services` is an array"},
		{"ucp string", 200, "application/json", `{"ucp":"2026-04-08"}`, report.Partial, "`ucp` is a string"},
		{"private key", 200, "application/json", strings.Replace(ucpGood, `"kid":"k1"`, `"kid":"k1","d":"secret"`, 1), report.Partial, "PRIVATE KEY MATERIAL IS PUBLISHED: UCP signing key k1"},
		{"not JSON", 200, "application/json", `{"ucp":{"version":"2026-04-08",}}`, report.Partial, "trailing comma"},
	}
	for _, c := range cases {
		v := GradeUCP("https://shop.example"+UCPPath, c.status, c.ct, []byte(c.body))
		if v.Status != c.verd || !strings.Contains(v.Message+"|"+v.DetailString(), c.says) {
			t.Errorf("%s: %+v", c.name, v)
		}
	}
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

var goodChallenge = `Payment id="x7Tg2pLqR9mKvNwY3hBcZa", realm="api.example.com", method="example", intent="charge", expires="2025-01-15T12:05:00Z", request="` +
	b64(`{"amount":"1000","currency":"usd","recipient":"acct_123"}`) + `"`

func TestParseChallenges(t *testing.T) {
	cs := ParseChallenges([]string{`Basic realm="a", Bearer, Payment id=abc,realm="x\"y" , method=tempo`, `Negotiate YII+/a==, Foo`})
	if len(cs) != 5 {
		t.Fatalf("%d challenges: %+v", len(cs), cs)
	}
	want := []struct{ scheme, t68, params string }{{"Basic", "", "realm=a"}, {"Bearer", "", ""}, {"Payment", "", `id=abc realm=x"y method=tempo`}, {"Negotiate", "YII+/a==", ""}, {"Foo", "", ""}}
	for i, w := range want {
		var ps []string
		for _, k := range []string{"realm", "id", "method"} {
			if v, ok := cs[i].Params[k]; ok {
				ps = append(ps, k+"="+v)
			}
		}
		if cs[i].Scheme != w.scheme || cs[i].Token68 != w.t68 || len(cs[i].Problems) != 0 {
			t.Errorf("%d: %+v", i, cs[i])
		}
		if i == 2 && strings.Join(ps, " ") != "realm=x\"y id=abc method=tempo" {
			t.Errorf("params %v", ps)
		}
	}
	bad := map[string]string{
		`Payment id="abc`:           "not closed",
		`Payment id=a, id=b`:        "appears twice",
		`Payment id=, realm=x`:      "follows the token68",
		`Payment realm=x, id=`:      "has no value",
		`Payment id=a b`:            "unexpected \"b\"",
		`Payment, id=@`:             "where a token or quoted string belongs",
		"Payment id=\x01":           "byte 0x01",
		`Payment "quoted"`:          "expected a parameter",
		`Payment=x`:                 "instead of a space",
		strings.Repeat("a", 17<<10): "exceed 16 KiB",
	}
	for in, says := range bad {
		var probs []string
		for _, c := range ParseChallenges([]string{in}) {
			probs = append(probs, c.Problems...)
		}
		if !strings.Contains(strings.Join(probs, "|"), says) {
			t.Errorf("%q: %v", in, probs)
		}
	}
}

func TestMPP(t *testing.T) {
	declared, err := openapi.Load([]byte(`{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/paid":{"get":{"security":[{"pay":[]}],"responses":{"200":{"description":"ok"},"402":{"description":"pay"}}}}},"components":{"securitySchemes":{"pay":{"type":"http","scheme":"Payment"}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	only402, _ := openapi.Load([]byte(`{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/paid":{"get":{"responses":{"402":{"description":"pay"}}}}}}`), nil)
	at := func(status int, h ...string) []Observed {
		return []Observed{{URL: "https://api.example.com/paid", Status: status, WWWAuthenticate: h}}
	}
	cases := []struct {
		name string
		seen []Observed
		spec *openapi.Spec
		verd report.Status
		says string
	}{
		{"none", nil, nil, report.NA, "No Machine Payments Protocol"},
		{"x402 402", at(402), only402, report.NA, "without a Payment challenge"},
		{"well-formed", at(402, `Bearer realm="x"`, goodChallenge), nil, report.Pass, `method example, intent charge`},
		{"well-formed lower-case scheme", at(402, strings.Replace(goodChallenge, "Payment", "payment", 1)), nil, report.Pass, "expires 2025-01-15T12:05:00Z"},
		{"header param", at(402, goodChallenge+`, header="Payment-Authorization", opaque="`+b64(`{"pi":"pi_1"}`)+`"`), declared, report.Pass, "OpenAPI security scheme"},
		{"missing id", at(402, strings.Replace(goodChallenge, `id="x7Tg2pLqR9mKvNwY3hBcZa", `, "", 1)), nil, report.Partial, "`id` is missing"},
		{"padded request", at(402, strings.TrimSuffix(goodChallenge, `"`)+`=="`), nil, report.Partial, "padding"},
		{"request not JSON", at(402, strings.Replace(goodChallenge, `request="`, `request="`+b64("nope")+`x`, 1)), nil, report.Partial, "`request`"},
		{"upper-case method", at(402, strings.Replace(goodChallenge, `method="example"`, `method="Example"`, 1)), nil, report.Partial, "lower-case"},
		{"bad expires", at(402, strings.Replace(goodChallenge, `2025-01-15T12:05:00Z`, `tomorrow`, 1)), nil, report.Partial, "not an RFC 3339"},
		{"bad header", at(402, goodChallenge+`, header="X-Pay"`), nil, report.Partial, `only allowed value`},
		{"token68", at(402, `Payment abc==`), nil, report.Partial, "token68"},
		{"on a 401", at(401, goodChallenge), nil, report.Partial, "status 401"},
		{"declared only", nil, declared, report.Partial, "no Payment challenge was seen"},
	}
	for _, c := range cases {
		v := GradeMPP(c.seen, c.spec)
		if v.Status != c.verd || !strings.Contains(v.Message+"|"+v.DetailString(), c.says) {
			t.Errorf("%s: %+v", c.name, v)
		}
		if p := v.RawIn(); p != "" {
			t.Errorf("%s: library text %q", c.name, p)
		}
	}
}

// Every corpus document (commerce, cards, OpenAPI, identity) and every fuzz
// seed goes through every parser of the package: no panic, and no library
// text in anything a user sees.
func TestWalkNoRawText(t *testing.T) {
	for _, b := range seeds(t) {
		check := func(where string, v signal.Verdict) {
			if p := v.RawIn(); p != "" {
				t.Errorf("%s: library text %q in %+v", where, p, v)
			}
			if v.Message == "" {
				t.Errorf("%s: empty message", where)
			}
		}
		check("ucp", GradeUCP("https://s.example"+UCPPath, 200, "application/json", b))
		check("acp", GradeACP("https://s.example"+ACPPath, 200, "application/json", b))
		check("ap2", GradeAP2("https://s.example/.well-known/agent-card.json", b))
		spec, _ := openapi.Load(b, nil)
		check("mpp", GradeMPP(at402(string(b)), spec))
		_ = Sniff(b).Describe()
	}
}

func at402(h string) []Observed {
	return []Observed{{URL: "https://s.example/", Status: 402, WWWAuthenticate: []string{h}}}
}

func seeds(tb testing.TB) [][]byte {
	var out [][]byte
	for _, dir := range []string{"commerce", "a2a", "identity", "openapi", "wellknown"} {
		p, ok := testenv.SharedPath("corpus/" + dir)
		if !ok {
			continue
		}
		files, _ := filepath.Glob(p + "/*")
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				out = append(out, b)
			}
		}
	}
	for _, s := range []string{"", "null", "[]", "{}", `{"ucp":null}`, `{"ucp":{"services":{"a":5},"capabilities":7}}`,
		`{"protocol":{"name":1},"transports":{}}`, `{"capabilities":{"extensions":[{"uri":5},null]}}`, "\xff",
		goodChallenge, `Payment id="`, `Payment ,,,, id=a, , realm`, `=`, `Payment id=a, Basic, realm=b`, ucpGood, acpGood} {
		out = append(out, []byte(s))
	}
	return out
}

func FuzzDocuments(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, v := range []signal.Verdict{
			GradeUCP("https://s.example"+UCPPath, 200, "application/json", b),
			GradeACP("https://s.example"+ACPPath, 200, "application/json", b),
			GradeAP2("https://s.example/.well-known/agent-card.json", b),
		} {
			if v.Status != report.Pass && v.Status != report.Partial && v.Status != report.NA {
				t.Fatalf("status %q", v.Status)
			}
			if p := v.RawIn(); p != "" {
				t.Fatalf("library text %q in %+v", p, v)
			}
		}
		if v := GradeUCP("", 200, "application/json", b); v.Status == report.Pass {
			p, _ := ParseUCP(b)
			if !p.VersionValid || len(p.Capabilities) == 0 {
				t.Fatalf("pass without version or capabilities: %+v", p)
			}
		}
	})
}

func FuzzChallenges(f *testing.F) {
	for _, s := range seeds(f) {
		if len(s) < 4096 {
			f.Add(string(s))
		}
	}
	f.Fuzz(func(t *testing.T, h string) {
		cs := ParseChallenges([]string{h})
		if len(cs) > maxChallenges {
			t.Fatalf("%d challenges", len(cs))
		}
		for _, c := range cs {
			if len(c.Params) > maxParams {
				t.Fatalf("%d params", len(c.Params))
			}
		}
		v := GradeMPP([]Observed{{Status: 402, WWWAuthenticate: []string{h}}}, nil)
		if p := v.RawIn(); p != "" {
			t.Fatalf("library text %q in %+v", p, v)
		}
		if v.Status == report.Pass {
			ok := false
			for _, pc := range PaymentIn([]string{h}) {
				ok = ok || (pc.WellFormed() && pc.ID != "" && pc.Realm != "")
			}
			if !ok {
				t.Fatal("pass without a well-formed challenge")
			}
		}
	})
}
