package workers

import (
	"net"
	"reflect"
	"strings"
	"testing"
)

// REDIS_URL's two forms, as origin/store reads them (TestParseRedisURL
// there): one Redis, or several seed nodes of a Redis Cluster.
func TestParseTarget(t *testing.T) {
	for _, c := range []struct {
		url, addr string
		want      Target
		err       string // a fragment of the refusal
	}{
		{addr: "10.0.0.1:6380", want: Target{Seeds: []string{"10.0.0.1:6380"}}},
		{addr: "10.0.0.1:7000,10.0.0.2:7000", want: Target{Seeds: []string{"10.0.0.1:7000", "10.0.0.2:7000"}}},
		{url: "redis://cache.example:6390/2", addr: "ignored:1", want: Target{Seeds: []string{"cache.example:6390"}, DB: 2}},
		{url: "rediss://default:s3cret@cache.example", want: Target{Seeds: []string{"cache.example:6379"}, User: "default", Password: "s3cret", TLS: true}},
		{url: "redis://s3cret@cache.example:6379", want: Target{Seeds: []string{"cache.example:6379"}, Password: "s3cret"}},
		{url: "redis://[::1]/0", want: Target{Seeds: []string{"[::1]:6379"}}},
		{url: "redis://127.0.0.1:17001,127.0.0.1:17002,127.0.0.1:17003", want: Target{Seeds: []string{"127.0.0.1:17001", "127.0.0.1:17002", "127.0.0.1:17003"}}},
		{url: "rediss://u:p,w@d@h1:7000,h2:7000/0", want: Target{Seeds: []string{"h1:7000", "h2:7000"}, User: "u", Password: "p,w@d", TLS: true}},
		{url: "redis://:secret@h1:7000,h2:7000/0", want: Target{Seeds: []string{"h1:7000", "h2:7000"}, Password: "secret"}},
		{url: "redis://[::1]:7000,[::1]:7001/", want: Target{Seeds: []string{"[::1]:7000", "[::1]:7001"}}},
		{url: "redis://h1:7000,h2:7000/3", err: "only database 0"},
		{url: "redis://h1:7000,h2/0", err: "host:port,host:port"},
		{url: "redis://h1:7000,,h2:7000", err: "host:port,host:port"},
		{url: "redis://h1:7000,h2:0", err: "host:port,host:port"},
		{url: "redis://cache.example:99999", err: "not a valid redis://"},
		{url: "http://h1:7000", err: "not a valid redis://"},
		{url: "redis://cache.example/x", err: "is not a number"},
		{url: "redis://default:1234/abc@cache.example:6379", err: "percent-encode"}, // else "default:1234" would be the host
		{url: "redis://u:12#x@cache.example:1", err: "percent-encode"},
		{addr: "10.0.0.1", err: "REDIS_ADDR is not host:port"},
		{err: "neither REDIS_URL nor REDIS_ADDR"},
	} {
		t.Run(c.url+c.addr, func(t *testing.T) {
			got, err := ParseTarget(c.url, c.addr)
			switch {
			case c.err != "":
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("%+v, %v; want an error saying %q", got, err, c.err)
				}
			case err != nil:
				t.Fatal(err)
			case !reflect.DeepEqual(got, c.want):
				t.Errorf("%+v, want %+v", got, c.want)
			}
		})
	}
}

// Whatever REDIS_URL holds, reading it ends with a target the Worker can
// dial or a refusal that repeats none of it (it may carry a password).
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"redis://127.0.0.1:6379/0", "redis://:pw@h1:1,h2:2/0", "rediss://u:p@[::1]:7000,[::1]:7001/", "redis://h1:1,h2:2/3", "redis://%zz@h:1,h:2", "redis://h", "redis://u:p@h:1/2?x=y#z", "redis://u:1234/pw@h:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := ParseTarget(raw, "")
		if err != nil {
			if msg := err.Error(); len(raw) > 12 && strings.Contains(msg, raw) {
				t.Fatalf("the refusal repeats the URL: %q", msg)
			}
			return
		}
		if len(got.Seeds) == 0 || (len(got.Seeds) > 1 && got.DB != 0) || got.DB < 0 {
			t.Fatalf("%q: %+v", raw, got)
		}
		for _, s := range got.Seeds {
			if _, _, err := net.SplitHostPort(s); err != nil || !hostPort(s) || strings.Contains(s, "@") {
				t.Fatalf("%q: seed %q is not host:port", raw, s)
			}
		}
	})
}
