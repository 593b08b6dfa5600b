package workers

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agentready/agentready/internal/ratelimit"
	"github.com/agentready/agentready/internal/testenv"
)

func TestRESP(t *testing.T) {
	var b strings.Builder
	writeCommand(&b, "EVAL", "return 1", "0")
	if b.String() != "*3\r\n$4\r\nEVAL\r\n$8\r\nreturn 1\r\n$1\r\n0\r\n" {
		t.Errorf("%q", b.String())
	}
	r := bufio.NewReader(strings.NewReader("*4\r\n:1\r\n:7\r\n$2\r\n-1\r\n$3\r\n2.5\r\n"))
	v, err := readReply(r, 0)
	a, rem, retry, reset, err2 := gcraReply(v)
	if err != nil || err2 != nil || a != 1 || rem != 7 || retry != -1 || reset != 2.5 {
		t.Errorf("%v %v %v", v, err, err2)
	}
	if _, err := readReply(bufio.NewReader(strings.NewReader("-ERR nope\r\n")), 0); err == nil {
		t.Error("error replies are errors")
	}
}

// The script this package sends gives the same answers as redis_rate itself.
func TestScriptAgreesWithRedisRate(t *testing.T) {
	u := testenv.RedisURL(t)
	opt, _ := redis.ParseURL(u)
	target, err := ParseTarget(u, "")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", target.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	key := "rltest-resp:" + strconv.FormatInt(time.Now().UnixNano(), 10)
	rc := redis.NewClient(opt)
	defer rc.Close()
	lib := ratelimit.NewRedis(rc)
	// Through decide, as the Worker does (with SELECT when REDIS_URL names a database).
	script := func() (int64, int64) {
		a, rem, _, _, err := decide(conn, target, "rate:"+key, 3, 24*time.Hour, 1)
		if err != nil {
			t.Fatal(err)
		}
		return a, rem
	}
	// Alternate our script and redis_rate on one key: they share one count.
	if a, rem := script(); a != 1 || rem != 2 {
		t.Fatalf("first call: %d %d", a, rem)
	}
	if res, err := lib.AllowN(context.Background(), key, ratelimit.PerDay(3), 1); err != nil || res.Allowed != 1 || res.Remaining != 1 {
		t.Fatalf("second call through redis_rate: %+v %v", res, err)
	}
	if a, rem := script(); a != 1 || rem != 0 {
		t.Fatalf("third call: %d %d", a, rem)
	}
	if res, _ := lib.AllowN(context.Background(), key, ratelimit.PerDay(3), 1); res.Allowed != 0 {
		t.Fatalf("fourth call through redis_rate must be denied: %+v", res)
	}
	if a, _, retry, _, err := decide(conn, target, "rate:"+key, 3, 24*time.Hour, 1); a != 0 || retry <= 0 || err != nil {
		t.Errorf("fifth call over a limit of 3 must be denied: %d %v %v", a, retry, err)
	}
}

// Whatever Redis (or something posing as it) sends, decoding ends with a value or an error.
func FuzzReadReply(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "-ERR x\r\n", ":12\r\n", "$3\r\nabc\r\n", "$-1\r\n", "*2\r\n:1\r\n$1\r\nx\r\n", "*4\r\n:1\r\n:7\r\n$2\r\n-1\r\n$3\r\n2.5\r\n", "*-1\r\n", "$99999999999\r\n", "*99999999\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := readReply(bufio.NewReader(bytes.NewReader(b)), 0)
		if err == nil {
			gcraReply(v)
		}
	})
}

func TestParseTarget(t *testing.T) {
	for _, c := range []struct {
		url, addr string
		want      Target
		bad       bool
	}{
		{"", "10.0.0.1:6380", Target{Addr: "10.0.0.1:6380"}, false},
		{"redis://cache.example:6390/2", "ignored:1", Target{Addr: "cache.example:6390", DB: 2}, false},
		{"rediss://default:s3cret@cache.example", "", Target{Addr: "cache.example:6379", User: "default", Password: "s3cret", TLS: true}, false},
		{"redis://s3cret@cache.example:6379", "", Target{Addr: "cache.example:6379", Password: "s3cret"}, false},
		{"", "", Target{}, true},
		{"http://cache.example", "", Target{}, true},
		{"redis://cache.example/x", "", Target{}, true},
	} {
		got, err := ParseTarget(c.url, c.addr)
		if (err != nil) != c.bad || (!c.bad && got != c.want) {
			t.Errorf("%q %q: %+v %v", c.url, c.addr, got, err)
		}
	}
}

// AUTH and SELECT go before the script, and a refused AUTH is an error, not a decision.
func TestDecidePreamble(t *testing.T) {
	var sent bytes.Buffer
	conn := struct {
		io.Reader
		io.Writer
	}{strings.NewReader("-WRONGPASS invalid username-password pair\r\n+OK\r\n*4\r\n:1\r\n:2\r\n$2\r\n-1\r\n$1\r\n9\r\n"), &sent}
	_, _, _, _, err := decide(conn, Target{Password: "p", DB: 3}, "k", 3, time.Hour, 1)
	if err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Errorf("refused AUTH: %v", err)
	}
	if !strings.HasPrefix(sent.String(), "*2\r\n$4\r\nAUTH\r\n$1\r\np\r\n*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n*8\r\n$4\r\nEVAL\r\n") {
		t.Errorf("sent %q", sent.String()[:80])
	}
}
