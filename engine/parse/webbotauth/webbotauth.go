package webbotauth

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"mime"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/agentready/agentready/engine/clip"
	"github.com/agentready/agentready/engine/internal/jsonerr"
	"github.com/agentready/agentready/engine/internal/signal"
	"github.com/agentready/agentready/engine/report"
)

const (
	// Path is the well-known location of the directory.
	Path = "/.well-known/http-message-signatures-directory"
	// MediaType is the type the draft requires the directory to be served as.
	MediaType = "application/http-message-signatures-directory+json"
	// SignatureTag is the `tag` a directory's own response signature carries.
	SignatureTag = "http-message-signatures-directory"
	// MaxBytes bounds the body read; a directory holds a handful of keys.
	MaxBytes = 256 << 10
	// MaxKeys bounds the keys examined.
	MaxKeys = 64
)

// Key is one JWK of the directory, as far as a verifier needs it.
type Key struct {
	Index      int    `json:"index"`
	Kid        string `json:"kid,omitempty"`
	Kty        string `json:"kty,omitempty"`
	Crv        string `json:"crv,omitempty"`
	Alg        string `json:"alg,omitempty"`
	Use        string `json:"use,omitempty"`
	X          string `json:"x,omitempty"`
	Thumbprint string `json:"thumbprint,omitempty"` // RFC 7638, "" when required members are missing
	// KidIsThumbprint is true when kid equals the RFC 7638 thumbprint, which
	// is what a directory signature's keyid must be.
	KidIsThumbprint bool       `json:"kidIsThumbprint"`
	NotBefore       *time.Time `json:"nbf,omitempty"`
	Expires         *time.Time `json:"exp,omitempty"`
	// Private names the private or secret members the key publishes.
	Private []string `json:"private,omitempty"`
	// KnownTestKey names the document that prints this key's private half.
	KnownTestKey string `json:"knownTestKey,omitempty"`
	// Problems say why the key cannot verify signatures (empty when it can).
	Problems []string `json:"problems,omitempty"`
}

// ValidAt reports a well-formed public key inside its validity window.
func (k Key) ValidAt(now time.Time) bool {
	if len(k.Problems) > 0 || len(k.Private) > 0 || k.KnownTestKey != "" {
		return false
	}
	if k.Expires != nil && !now.Before(*k.Expires) {
		return false
	}
	return k.NotBefore == nil || !now.Before(*k.NotBefore)
}

// Directory is a parsed key directory.
type Directory struct {
	Keys     []Key    `json:"keys"`
	Findings []string `json:"findings,omitempty"` // stray members, caps reached
}

// ErrNotJWKS means the body is a JSON object without a `keys` array.
var ErrNotJWKS = errors.New("the document is JSON but not a JWKS: it has no `keys` array")

// Parse reads a directory. Members no rule reads are ignored; a member of an
// unexpected type becomes a Problem or a Finding, never a rejection. err is a
// plain sentence: the body is not a JSON object, or not a JWKS.
func Parse(body []byte) (*Directory, error) {
	if len(body) > MaxBytes {
		return nil, fmt.Errorf("the document is larger than %d KiB", MaxBytes>>10)
	}
	var root map[string]json.RawMessage
	if err := json.Unmarshal(body, &root); err != nil {
		return nil, errors.New("not a JSON object: " + jsonerr.Describe(body, err))
	}
	rawKeys, ok := root["keys"]
	if !ok {
		return nil, ErrNotJWKS
	}
	var list []json.RawMessage
	if json.Unmarshal(rawKeys, &list) != nil {
		return nil, errors.New("the document is JSON but not a JWKS: `keys` is not an array")
	}
	d := &Directory{Keys: []Key{}}
	if len(list) > MaxKeys {
		d.Findings = append(d.Findings, fmt.Sprintf("%d keys; only the first %d were examined", len(list), MaxKeys))
		list = list[:MaxKeys]
	}
	for i, raw := range list {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			d.Findings = append(d.Findings, fmt.Sprintf("keys[%d] is not an object", i))
			continue
		}
		d.Keys = append(d.Keys, readKey(i, m))
	}
	return d, nil
}

// curves maps (kty, crv) to the coordinate length RFC 9421's registered
// algorithms use: ed25519, ecdsa-p256-sha256, ecdsa-p384-sha384.
var curves = map[string]int{"OKP/Ed25519": 32, "EC/P-256": 32, "EC/P-384": 48}

// knownTestKeys are Ed25519 public keys whose private halves are printed in
// RFCs; a directory publishing one lets anyone sign as its operator.
var knownTestKeys = map[string]string{
	"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo": "RFC 8037 Appendix A",
	"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs": "RFC 9421 Appendix B.1.4 (test-key-ed25519)",
}

func readKey(i int, m map[string]json.RawMessage) Key {
	k := Key{Index: i}
	str := func(name string) string {
		raw, ok := m[name]
		if !ok {
			return ""
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			k.Problems = append(k.Problems, fmt.Sprintf("`%s` is not a string", name))
		}
		return s
	}
	k.Kid, k.Kty, k.Crv, k.Alg, k.Use, k.X = str("kid"), str("kty"), str("crv"), str("alg"), str("use"), str("x")
	for _, p := range []string{"d", "p", "q", "dp", "dq", "qi", "k"} {
		if _, ok := m[p]; ok {
			k.Private = append(k.Private, p)
		}
	}
	if k.Use != "" && k.Use != "sig" {
		k.Problems = append(k.Problems, fmt.Sprintf("`use` is %q; a signing key has `use: \"sig\"` or none", k.Use))
	}
	switch k.Kty {
	case "":
		k.Problems = append(k.Problems, "no `kty`")
	case "OKP", "EC":
		want, ok := curves[k.Kty+"/"+k.Crv]
		if !ok {
			k.Problems = append(k.Problems, fmt.Sprintf("%s curve %q is not one HTTP Message Signatures registers (Ed25519, P-256, P-384)", k.Kty, k.Crv))
			break
		}
		checkCoord(&k, "x", k.X, want)
		if k.Kty == "EC" {
			checkCoord(&k, "y", str("y"), want)
		}
	case "RSA":
		n, e := str("n"), str("e")
		nb, err := base64.RawURLEncoding.DecodeString(n)
		switch {
		case n == "" || e == "":
			k.Problems = append(k.Problems, "an RSA key needs `n` and `e`")
		case err != nil:
			k.Problems = append(k.Problems, "`n` is not base64url")
		case len(nb)*8 < 2048:
			k.Problems = append(k.Problems, fmt.Sprintf("the RSA modulus is %d bits; use at least 2048", len(nb)*8))
		}
	case "oct":
		k.Problems = append(k.Problems, "`kty: \"oct\"` is a shared secret, not a public key")
	default:
		k.Problems = append(k.Problems, fmt.Sprintf("key type %q is not one HTTP Message Signatures uses", k.Kty))
	}
	if src, ok := knownTestKeys[k.X]; ok && k.Kty == "OKP" {
		k.KnownTestKey = src
	}
	k.NotBefore = numericDate(&k, m, "nbf")
	k.Expires = numericDate(&k, m, "exp")
	if k.NotBefore != nil && k.Expires != nil && !k.Expires.After(*k.NotBefore) {
		k.Problems = append(k.Problems, "`exp` is not after `nbf`")
	}
	k.Thumbprint = Thumbprint(m)
	k.KidIsThumbprint = k.Kid != "" && k.Kid == k.Thumbprint
	return k
}

// placeholder matches words joined by hyphens or underscores, which happen
// to be valid base64url but are plainly not key bytes.
var placeholder = regexp.MustCompile(`(?i)^[a-z]+([-_][a-z]+)+$`)

func checkCoord(k *Key, name, v string, want int) {
	b, err := base64.RawURLEncoding.DecodeString(v)
	switch {
	case v == "":
		k.Problems = append(k.Problems, fmt.Sprintf("no `%s`", name))
	case err != nil:
		k.Problems = append(k.Problems, fmt.Sprintf("`%s` is not base64url (%q looks like a placeholder, not a key)", name, clip.To(v, maxQuoted)))
	case len(b) != want && placeholder.MatchString(v):
		k.Problems = append(k.Problems, fmt.Sprintf("`%s` is %q, a placeholder, not a key", name, clip.To(v, maxQuoted)))
	case len(b) != want:
		k.Problems = append(k.Problems, fmt.Sprintf("`%s` decodes to %d bytes; %s %s needs %d", name, len(b), k.Kty, k.Crv, want))
	}
}

// numericDate reads a JWT NumericDate (seconds since the epoch).
func numericDate(k *Key, m map[string]json.RawMessage, name string) *time.Time {
	raw, ok := m[name]
	if !ok || string(raw) == "null" {
		return nil
	}
	var f float64
	if json.Unmarshal(raw, &f) != nil || math.IsNaN(f) || f < 0 || f > 1e13 {
		k.Problems = append(k.Problems, fmt.Sprintf("`%s` is not a number of seconds since 1970", name))
		return nil
	}
	if f > 1e11 {
		k.Problems = append(k.Problems, fmt.Sprintf("`%s` looks like milliseconds; JWK dates are seconds", name))
		return nil
	}
	t := time.Unix(int64(f), 0).UTC()
	return &t
}

// thumbprintMembers are RFC 7638's required members per key type (RFC 8037
// §2 for OKP), already in the lexicographic order the canonical form uses.
var thumbprintMembers = map[string][]string{
	"EC":  {"crv", "kty", "x", "y"},
	"OKP": {"crv", "kty", "x"},
	"RSA": {"e", "kty", "n"},
	"oct": {"k", "kty"},
}

// Thumbprint computes the RFC 7638 JWK SHA-256 thumbprint, base64url without
// padding: the hash of a JSON object holding only the required members, in
// lexicographic order, with no whitespace. "" when a member is missing or is
// not a string.
func Thumbprint(m map[string]json.RawMessage) string {
	var kty string
	if json.Unmarshal(m["kty"], &kty) != nil {
		return ""
	}
	names, ok := thumbprintMembers[kty]
	if !ok {
		return ""
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, n := range names {
		var v string
		if json.Unmarshal(m[n], &v) != nil || v == "" {
			return ""
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		writeString(&buf, n)
		buf.WriteByte(':')
		writeString(&buf, v)
	}
	buf.WriteByte('}')
	sum := sha256.Sum256(buf.Bytes())
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// writeString writes a JSON string without HTML escaping, which RFC 7638's
// canonical form does not use (json.Marshal would turn < into \u003c).
func writeString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	buf.Truncate(buf.Len() - 1) // Encode appends a newline
}

// MediaTypeOK reports the draft's media type, parameters aside.
func MediaTypeOK(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == MediaType
}

// Response is what the scanner received from the well-known URL.
type Response struct {
	URL            string
	Status         int
	ContentType    string
	SignatureInput string // the Signature-Input header, if any
	Signature      string // the Signature header, if any
	Body           []byte
}

// Signed describes the response's own HTTP Message Signature, which the draft
// recommends (one per key, tag "http-message-signatures-directory"). It is
// not verified.
func (r Response) Signed() (bool, string) {
	switch {
	case r.SignatureInput == "" || r.Signature == "":
		return false, "response signature: none"
	case strings.Contains(r.SignatureInput, `tag="`+SignatureTag+`"`):
		return true, "response signature: present, tagged " + SignatureTag + " (not verified)"
	}
	return false, "response signature: present but without tag=\"" + SignatureTag + "\""
}

// Grade decides the `webbotauth` signal at time now.
func Grade(r Response, now time.Time) signal.Verdict {
	v := grade(r, now)
	v.FoundAt = r.URL
	if v.Status == report.NA {
		v.FoundAt = ""
	}
	return v
}

func grade(r Response, now time.Time) signal.Verdict {
	if absent, why := signal.Absent(r.Status, r.ContentType, r.Body); absent {
		return signal.NA("No Web Bot Auth key directory is published at " + Path + ": " + why + ".")
	}
	d, err := Parse(r.Body)
	if err != nil {
		return signal.Partial("A document is served at "+Path+" but it is not a usable key directory: "+err.Error()+".",
			`Serve a JWKS: {"keys": [{"kty": "OKP", "crv": "Ed25519", "x": "<32-byte public key, base64url>", "kid": "<its RFC 7638 thumbprint>"}]}.`)
	}
	details := Details(d, now)
	_, sig := r.Signed()
	details = append(details, sig)
	for _, k := range d.Keys {
		if len(k.Private) > 0 {
			return signal.Partial(fmt.Sprintf("PRIVATE KEY MATERIAL IS PUBLISHED: key %s carries %s. Anyone can sign requests as this bot.",
				name(k), backtick(k.Private)),
				"Remove the key from the directory now, stop signing with it, and publish a new key pair's public half only (kty, crv, x, kid).",
				details...)
		}
	}
	for _, k := range d.Keys {
		if k.KnownTestKey != "" {
			return signal.Partial(fmt.Sprintf("Key %s is the published example key of %s: its private half is public, so anyone can sign requests as this bot.",
				name(k), k.KnownTestKey),
				"Generate your own Ed25519 key pair and publish its public half; never deploy an example key from a specification.",
				details...)
		}
	}
	valid := 0
	for _, k := range d.Keys {
		if k.ValidAt(now) {
			valid++
		}
	}
	if valid == 0 {
		return signal.Partial("The key directory has no public key a verifier can use now: "+whyNone(d, now)+".",
			"Publish at least one current Ed25519 public key: `x` is the 32-byte key in base64url, `exp` (if any) in the future.",
			details...)
	}
	if !MediaTypeOK(r.ContentType) {
		mt := r.ContentType
		if mt == "" {
			mt = "no Content-Type"
		}
		return signal.Partial(fmt.Sprintf("The key directory has %s but is served as %q.", plural(valid, "valid public key"), mt),
			"Serve "+Path+" with Content-Type: "+MediaType+".", details...)
	}
	return signal.Pass(fmt.Sprintf("Web Bot Auth key directory with %s.", plural(valid, "valid public key")), details...)
}

// Details lists, per key, what a site owner needs to check by eye.
func Details(d *Directory, now time.Time) []string {
	var out []string
	for _, k := range d.Keys {
		var parts []string
		kind := strings.Trim(k.Kty+"/"+k.Crv, "/")
		if kind == "" {
			kind = "unknown type"
		}
		parts = append(parts, kind)
		switch {
		case k.Kid == "":
			parts = append(parts, "no kid (thumbprint "+k.Thumbprint+")")
		case k.KidIsThumbprint:
			parts = append(parts, "kid is the RFC 7638 thumbprint")
		case k.Thumbprint != "":
			parts = append(parts, "kid is not the RFC 7638 thumbprint ("+k.Thumbprint+")")
		}
		parts = append(parts, window(k, now))
		if len(k.Private) > 0 {
			parts = append(parts, "PUBLISHES PRIVATE MEMBERS "+backtick(k.Private))
		}
		if k.KnownTestKey != "" {
			parts = append(parts, "example key of "+k.KnownTestKey)
		}
		parts = append(parts, k.Problems...)
		out = append(out, name(k)+": "+strings.Join(parts, ", "))
	}
	out = append(out, d.Findings...)
	if len(d.Keys) == 0 {
		out = append(out, "`keys` is empty")
	}
	return out
}

func window(k Key, now time.Time) string {
	day := func(t *time.Time) string { return t.Format("2006-01-02") }
	switch {
	case k.Expires != nil && !now.Before(*k.Expires):
		return "expired " + day(k.Expires)
	case k.NotBefore != nil && now.Before(*k.NotBefore):
		s := "not valid before " + day(k.NotBefore)
		if k.Expires != nil {
			s += ", expires " + day(k.Expires)
		}
		return s
	case k.NotBefore != nil && k.Expires != nil:
		return "valid " + day(k.NotBefore) + " to " + day(k.Expires)
	case k.Expires != nil:
		return "expires " + day(k.Expires)
	case k.NotBefore != nil:
		return "valid from " + day(k.NotBefore) + ", no expiry"
	}
	return "no validity window"
}

func whyNone(d *Directory, now time.Time) string {
	if len(d.Keys) == 0 {
		return "`keys` is empty"
	}
	seen := map[string]bool{}
	var why []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			why = append(why, s)
		}
	}
	for _, k := range d.Keys {
		switch {
		case len(k.Problems) > 0:
			add(name(k) + ": " + k.Problems[0])
		case k.Expires != nil && !now.Before(*k.Expires):
			add(name(k) + " expired on " + k.Expires.Format("2006-01-02"))
		case k.NotBefore != nil && now.Before(*k.NotBefore):
			add(name(k) + " is not valid before " + k.NotBefore.Format("2006-01-02"))
		}
	}
	sort.Strings(why)
	return strings.Join(why, "; ")
}

func name(k Key) string {
	if k.Kid != "" {
		return fmt.Sprintf("%q", clip.To(k.Kid, maxQuoted))
	}
	return fmt.Sprintf("keys[%d]", k.Index)
}

func backtick(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	return strings.Join(q, ", ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// maxQuoted bounds, in runes, a site's string quoted in a message.
const maxQuoted = 60
