package workers

import (
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestParseRequest(t *testing.T) {
	head := "POST https://agentready.example.com/api/scan?url=a.example HTTP\n" +
		"content-type: application/json\naccept: text/html, application/json\ncf-connecting-ip: 203.0.113.9\nx-note: a: b\n"
	r, err := parseRequest(head, []byte(`{"url":"a.example"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r.Body)
	if r.Method != "POST" || r.Host != "agentready.example.com" || r.URL.Path != "/api/scan" || r.URL.RawQuery != "url=a.example HTTP" ||
		r.Header.Get("Accept") != "text/html, application/json" || r.Header.Get("X-Note") != "a: b" ||
		r.RemoteAddr != "203.0.113.9" || r.ContentLength != 19 || string(body) != `{"url":"a.example"}` {
		t.Errorf("%s %s %q %+v %d %q", r.Method, r.URL, r.Host, r.Header, r.ContentLength, body)
	}
	if r, err := parseRequest("GET https://agentready.example.com/\n", nil); err != nil || r.Body != http.NoBody || r.ContentLength != 0 {
		t.Errorf("no body: %v %v", r, err)
	}
	for _, bad := range []string{"", "GET", "GET %zz\n"} {
		if _, err := parseRequest(bad, nil); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// formatHeader keeps what parseHeader can read back: names without spaces
// or colons, values without line breaks.
func framable(h http.Header) http.Header {
	out := http.Header{}
	for k, vs := range h {
		for _, v := range vs {
			if !strings.ContainsAny(k, ": \r\n") && !strings.ContainsAny(v, "\r\n") {
				out[k] = append(out[k], v)
			}
		}
	}
	return out
}

// Whatever head arrives, parsing ends in a request or an error, and the
// headers go back out through formatHeader as they came in.
func FuzzRequestHead(f *testing.F) {
	for _, s := range []string{
		"GET https://agentready.example.com/.well-known/api-catalog\nhost: agentready.example.com\naccept: */*\n",
		"POST https://a.example/api/scan\ncontent-type: application/json\nx-a: 1\nx-a: 2\n",
		"GET /relative\nno colon here\n: empty name\nname:no space\n",
		"GET https://a.example/\nweird key: v\r\nx: y: z\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, head string) {
		r, err := parseRequest(head, nil)
		if err != nil {
			return
		}
		want := framable(r.Header)
		if got := parseHeader(formatHeader(r.Header)); !reflect.DeepEqual(framable(got), want) || len(got) != len(want) {
			t.Errorf("round trip of %q: %v, want %v", head, got, want)
		}
	})
}
