package webbotauth

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/engine/report"
	"github.com/agentready/agentready/internal/testing/testenv"
)

const corpus = "../../../../shared/corpus/identity/" // fuzz seeds only; tests use testenv.Shared

var now = time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)

// Every key directory in the corpus has its row: what the parser must extract
// and the verdict it must reach when the file is served with the right media
// type, so a lenient parser cannot silently drop what matters.
func TestCorpus(t *testing.T) {
	cases := map[string]struct {
		kid        string
		thumbprint bool // kid is the RFC 7638 thumbprint
		nbf, exp   string
		status     report.Status
		says       string // in the message or details
	}{
		// kid computed as the thumbprint, alg EdDSA, use sig
		"adrianub-dev.json": {"yyJHdfUjUZuqQNcSQEvGdaMHLpj-m3RgoteH4RnzTsI", true, "", "", report.Pass, "kid is the RFC 7638 thumbprint"},
		// only kty, crv, x: still a usable key; the detail offers the thumbprint
		"scalekit-docs.json": {"", false, "", "", report.Pass, "no kid (thumbprint gTlWfGO2NZpWbCxvT19cTyRs0Y1yJ4y-kB9DsrDynr4)"},
		// nbf/exp in seconds: 2026-07-02T23:00Z to 2027-07-02T23:00Z
		"laisky-blog.json": {"laisky-blog-public-2026-07-03", false, "2026-07-02T23:00:00Z", "2027-07-02T23:00:00Z", report.Pass, "valid 2026-07-02 to 2027-07-02"},
		// x is the literal "placeholder-public-key-for-discovery"
		"ant-design.json": {"ant-design-2026-01", false, "", "", report.Partial, "a placeholder, not a key"},
	}
	files, _ := filepath.Glob(testenv.Shared(t, "corpus/identity") + "/*")
	if len(files) != len(cases) {
		t.Errorf("corpus %d files, table %d", len(files), len(cases))
	}
	for _, f := range files {
		w, ok := cases[filepath.Base(f)]
		if !ok {
			t.Errorf("%s has no row", filepath.Base(f))
			continue
		}
		b, _ := os.ReadFile(f)
		d, err := Parse(b)
		if err != nil || len(d.Keys) != 1 {
			t.Fatalf("%s: %v %+v", f, err, d)
		}
		k := d.Keys[0]
		if k.Kid != w.kid || k.KidIsThumbprint != w.thumbprint || stamp(k.NotBefore) != w.nbf || stamp(k.Expires) != w.exp || len(k.Private) != 0 {
			t.Errorf("%s: %+v", filepath.Base(f), k)
		}
		v := Grade(Response{URL: "https://example.com" + Path, Status: 200, ContentType: MediaType, Body: b}, now)
		if v.Status != w.status || !strings.Contains(v.Message+"|"+v.DetailString(), w.says) {
			t.Errorf("%s: %+v", filepath.Base(f), v)
		}
	}
}

func stamp(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.Format(time.RFC3339)
}

// RFC 7638 thumbprints against published vectors, and the canonical form's
// independence from member order and optional members.
func TestThumbprint(t *testing.T) {
	vectors := map[string]string{
		`{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}`:                       "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k", // RFC 8037 A.3
		`{"x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs","kid":"k","crv":"Ed25519","use":"sig","kty":"OKP"}`: "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U", // RFC 9421 B.1.4
		`{"kty":"OKP","crv":"Ed25519"}`:       "",
		`{"kty":"OKP","crv":"Ed25519","x":7}`: "",
		`{"kty":"XYZ","x":"a"}`:               "",
	}
	for in, want := range vectors {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(in), &m); err != nil {
			t.Fatal(err)
		}
		if got := Thumbprint(m); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}

const goodKey = `{"kty":"OKP","crv":"Ed25519","kid":"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U","x":"7xCz-xVVuWAvUDEAy9Vbw23V6p7SYR7sxYpnUESJ2TU"`

// Every state of the signal, from the response the scanner would get.
func TestGrade(t *testing.T) {
	ok := func(body string) Response {
		return Response{URL: "https://bot.example" + Path, Status: 200, ContentType: MediaType + "; charset=utf-8", Body: []byte(body)}
	}
	withCT := func(r Response, ct string) Response { r.ContentType = ct; return r }
	signed := ok(`{"keys":[` + goodKey + `}]}`)
	signed.SignatureInput = `sig1=("@authority";req "content-digest");created=1;keyid="poqk";tag="http-message-signatures-directory"`
	signed.Signature = "sig1=:AAAA:"
	cases := []struct {
		name   string
		r      Response
		status report.Status
		says   string
	}{
		{"404", Response{Status: 404, Body: []byte("not found")}, report.NA, "answered 404"},
		{"soft 404", Response{Status: 200, ContentType: "text/html", Body: []byte("<!doctype html><p>Oops")}, report.NA, "soft 404"},
		{"soft 404 untyped", Response{Status: 200, Body: []byte("\n <html>")}, report.NA, "soft 404"},
		{"pass", ok(`{"keys":[` + goodKey + `}]}`), report.Pass, "1 valid public key"},
		{"signed", signed, report.Pass, "present, tagged http-message-signatures-directory (not verified)"},
		{"not JSON", ok(`{"keys":[` + goodKey + `},]}`), report.Partial, "line 1, column"},
		{"not a JWKS", ok(`{"key":[]}`), report.Partial, "not a JWKS"},
		{"keys not array", ok(`{"keys":{}}`), report.Partial, "`keys` is not an array"},
		{"empty keys", ok(`{"keys":[]}`), report.Partial, "`keys` is empty"},
		{"private d", ok(`{"keys":[` + goodKey + `,"d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"}]}`), report.Partial, "PRIVATE KEY MATERIAL IS PUBLISHED"},
		{"oct secret", ok(`{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`), report.Partial, "PRIVATE KEY MATERIAL IS PUBLISHED"},
		{"expired", ok(`{"keys":[` + goodKey + `,"nbf":1700000000,"exp":1750000000}]}`), report.Partial, "expired on 2025-06-15"},
		{"not yet valid", ok(`{"keys":[` + goodKey + `,"nbf":1900000000}]}`), report.Partial, "not valid before 2030"},
		{"milliseconds", ok(`{"keys":[` + goodKey + `,"exp":1814569200000}]}`), report.Partial, "looks like milliseconds"},
		{"one of two expired", ok(`{"keys":[` + goodKey + `,"exp":1750000000},{"kty":"OKP","crv":"Ed25519","x":"i_a_HaHR_cD-xplt364jUhPt5jFHtJAlJH9XkdUiX_Y"}]}`), report.Pass, "expired 2025-06-15"},
		{"short x", ok(`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"AAAA"}]}`), report.Partial, "decodes to 3 bytes"},
		{"bad curve", ok(`{"keys":[{"kty":"OKP","crv":"X25519","x":"i_a_HaHR_cD-xplt364jUhPt5jFHtJAlJH9XkdUiX_Y"}]}`), report.Partial, "not one HTTP Message Signatures registers"},
		{"EC", ok(`{"keys":[{"kty":"EC","crv":"P-256","x":"WbbXwVYGdJoP4Xm3qCkGvBRcRvKtEfXDbWvPzpPS8LA","y":"sP4jHHxYqC89HBo8TjrtVOAGHfJDflYxw7MFMxuFMPY"}]}`), report.Pass, "EC/P-256"},
		{"RFC example key", ok(`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"}]}`), report.Partial, "RFC 9421"},
		{"wrong media type", withCT(ok(`{"keys":[`+goodKey+`}]}`), "application/json"), report.Partial, `served as "application/json"`},
		{"no media type", withCT(ok(`{"keys":[`+goodKey+`}]}`), ""), report.Partial, "no Content-Type"},
		{"stray types", ok(`{"keys":[` + goodKey + `,"use":5,"alg":["EdDSA"]}, "x", 4]}`), report.Partial, "`use` is not a string"},
	}
	for _, c := range cases {
		v := Grade(c.r, now)
		if v.Status != c.status || !strings.Contains(v.Message+"|"+v.DetailString(), c.says) {
			t.Errorf("%s: %+v", c.name, v)
		}
		if (v.Status == report.NA) != (v.FoundAt == "") {
			t.Errorf("%s: foundAt %q with status %s", c.name, v.FoundAt, v.Status)
		}
		if p := v.RawIn(); p != "" {
			t.Errorf("%s: library text %q in %+v", c.name, p, v)
		}
	}
}

// No corpus document or fuzz seed makes the parser panic or put a library's
// words in front of a user.
func TestWalkNoRawText(t *testing.T) {
	for _, b := range seeds(t) {
		for _, ct := range []string{MediaType, "application/json", "text/html", ""} {
			v := Grade(Response{Status: 200, ContentType: ct, Body: b}, now)
			if p := v.RawIn(); p != "" {
				t.Errorf("library text %q in %+v for %q", p, v, b)
			}
		}
	}
}

func seeds(tb testing.TB) [][]byte {
	var out [][]byte
	if dir, ok := testenv.SharedPath("corpus/identity"); ok {
		files, _ := filepath.Glob(dir + "/*")
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				out = append(out, b)
			}
		}
	}
	for _, s := range []string{"", "null", "[]", `{"keys":null}`, `{"keys":[null,{},[]]}`, "{\"keys\":[{\"kty\":\"OKP\"", "\xff\xfe",
		`{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"}]}`, `{"keys":[{"kty":"EC","crv":"P-384","x":"","y":"!"}]}`,
		`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"i_a_HaHR_cD-xplt364jUhPt5jFHtJAlJH9XkdUiX_Y","nbf":"yesterday","exp":-1}]}`} {
		out = append(out, []byte(s))
	}
	return out
}

func FuzzGrade(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s, MediaType)
	}
	f.Fuzz(func(t *testing.T, body []byte, ct string) {
		v := Grade(Response{Status: 200, ContentType: ct, Body: body}, now)
		switch v.Status {
		case report.Pass, report.Partial, report.NA:
		default:
			t.Fatalf("status %q", v.Status)
		}
		if v.Message == "" {
			t.Fatal("empty message")
		}
		if p := v.RawIn(); p != "" {
			t.Fatalf("library text %q in %+v", p, v)
		}
		if d, err := Parse(body); err == nil && v.Status == report.Pass {
			valid := 0
			for _, k := range d.Keys {
				if k.ValidAt(now) {
					valid++
				}
			}
			if valid == 0 {
				t.Fatal("pass without a valid key")
			}
		}
	})
}
