package weburl

import (
	"net/url"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	ok := map[string]string{
		"example.com":                    "https://example.com/",
		"  Example.COM/path?q=1#f ":      "https://example.com/",
		"http://example.com":             "http://example.com/",
		"https://example.com:443/x":      "https://example.com/",
		"http://example.com:8080":        "http://example.com:8080/",
		"example.com:8443":               "https://example.com:8443/",
		"https://bücher.example/":        "https://xn--bcher-kva.example/",
		"http://127.0.0.1:8765":          "http://127.0.0.1:8765/",
		"http://[::1]:8080/":             "http://[::1]:8080/",
		"localhost:3000":                 "https://localhost:3000/",
		"https://example.com./":          "https://example.com/",
		"HTTPS://EXAMPLE.COM":            "https://example.com/",
		"https://sub.domain.example.org": "https://sub.domain.example.org/",
	}
	for in, want := range ok {
		u, err := Normalize(in)
		if err != nil || u.String() != want {
			t.Errorf("Normalize(%q) = %v, %v; want %s", in, u, err, want)
		}
	}
	bad := map[string]string{
		"":                            "empty",
		"javascript:alert(1)":         "scheme",
		"file:///etc/passwd":          "scheme",
		"ftp://example.com":           "scheme",
		"mailto:a@example.com":        "scheme",
		"http://":                     "no host",
		"https://u:p@example.com":     "user name",
		"http://0x7f.1/":              "numeric",
		"http://2130706433/":          "numeric",
		"http://017700000001/":        "numeric",
		"http://exa mple.com":         "whitespace",
		"http://example.com:99999":    "port",
		"intranet":                    "fully qualified",
		strings.Repeat("a", 3000):     "limit",
		"http://ex\x00ample.com":      "control",
		"https://xn--bcher-kva..com/": "domain",
	}
	for in, want := range bad {
		_, err := Normalize(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Normalize(%q) error %v, want one mentioning %q", in, err, want)
		}
	}
}

func TestSameSite(t *testing.T) {
	base, _ := url.Parse("https://www.example.co.uk/")
	for ref, want := range map[string]bool{
		"https://api.example.co.uk/openapi.json": true,
		"http://example.co.uk/":                  true,
		"https://other.co.uk/":                   false,
		"https://example.com/":                   false,
		"javascript:alert(1)":                    false,
	} {
		if got := SameSite(base, ref); got != want {
			t.Errorf("SameSite(%s) = %v", ref, got)
		}
	}
	ip, _ := url.Parse("http://127.0.0.1:8080/")
	if !SameSite(ip, "http://127.0.0.1:9090/x") || SameSite(ip, "http://127.0.0.2/") {
		t.Error("IP sites compare by address")
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"example.com", "http://[::1]:80/", "https://bücher.example", "0x7f.1", "a:b@c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		u, err := Normalize(in)
		if err != nil {
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.Path != "/" || u.User != nil {
			t.Fatalf("Normalize(%q) = %s", in, u)
		}
		again, err := Normalize(u.String())
		if err != nil || again.String() != u.String() {
			t.Fatalf("not idempotent: %q -> %s -> %v, %v", in, u, again, err)
		}
	})
}

// Host is the scanner's reading of a host, shared with the other URLs the
// service dials (monitor callbacks).
func TestHost(t *testing.T) {
	ok := map[string]string{
		"LOCALHOST": "localhost", "localhost.": "localhost", "Hooks.Example.COM.": "hooks.example.com", "bücher.example": "xn--bcher-kva.example",
		"127.0.0.2": "127.0.0.2", "::1": "[::1]", "[::ffff:127.0.0.2]": "127.0.0.2", "[2001:db8::1]": "[2001:db8::1]",
	}
	for in, want := range ok {
		if got, err := Host(in); err != nil || got != want {
			t.Errorf("Host(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := map[string]string{
		"2130706434": "numeric", "0x7f000002": "numeric", "127.2": "numeric", "0177.0.0.2": "numeric", "0": "numeric",
		"127.0.0.2.": "numeric", "１２７.０.０.２": "numeric", "１２７．０．０．２": "numeric", "intranet": "fully qualified",
		"a..b": "empty label", "": "no host", "exa_mple.com": "valid domain",
	}
	for in, want := range bad {
		if _, err := Host(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Host(%q) error %v, want one mentioning %q", in, err, want)
		}
	}
}
