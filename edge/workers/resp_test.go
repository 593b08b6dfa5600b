package workers

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agentready/agentready/internal/ratelimit"
	"github.com/agentready/agentready/internal/testing/testenv"
)

func TestRESP(t *testing.T) {
	var b strings.Builder
	writeCommand(&b, "EVAL", "return 1", "0")
	if b.String() != "*3\r\n$4\r\nEVAL\r\n$8\r\nreturn 1\r\n$1\r\n0\r\n" {
		t.Errorf("%q", b.String())
	}
	r := bufio.NewReader(strings.NewReader("*4\r\n:1\r\n:7\r\n$2\r\n-1\r\n$3\r\n2.5\r\n"))
	v, err := readReply(r, 0)
	got, err2 := gcraReply(v)
	if err != nil || err2 != nil || got != (verdict{allowed: 1, remaining: 7, retry: -1, reset: 2.5}) {
		t.Errorf("%v %v %v", v, err, err2)
	}
	_, err = readReply(bufio.NewReader(strings.NewReader("-MOVED 3999 127.0.0.1:6381\r\n")), 0)
	var re redisError
	if !errors.As(err, &re) || string(re) != "MOVED 3999 127.0.0.1:6381" {
		t.Errorf("an error reply is a redisError with Redis's text: %v", err)
	}
}

// netDial is the dialer of the tests that talk to a real Redis outside
// workerd; dials counts the connections it opened.
func netDial(dials *int) dialer {
	return func(addr string) (io.ReadWriteCloser, error) {
		*dials++
		return net.DialTimeout("tcp", addr, 5*time.Second)
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
	var dials int
	key := "rltest-resp:" + strconv.FormatInt(time.Now().UnixNano(), 10)
	rc := redis.NewClient(opt)
	defer rc.Close()
	lib := ratelimit.NewRedis(rc)
	// Through decide, as the Worker does (with SELECT when REDIS_URL names a database).
	script := func() verdict {
		v, err := decide(netDial(&dials), target, &slotMap{}, "rate:"+key, 3, 24*time.Hour, 1)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// Alternate our script and redis_rate on one key: they share one count.
	if v := script(); v.allowed != 1 || v.remaining != 2 {
		t.Fatalf("first call: %+v", v)
	}
	if res, err := lib.AllowN(context.Background(), key, ratelimit.PerDay(3), 1); err != nil || res.Allowed != 1 || res.Remaining != 1 {
		t.Fatalf("second call through redis_rate: %+v %v", res, err)
	}
	if v := script(); v.allowed != 1 || v.remaining != 0 {
		t.Fatalf("third call: %+v", v)
	}
	if res, _ := lib.AllowN(context.Background(), key, ratelimit.PerDay(3), 1); res.Allowed != 0 {
		t.Fatalf("fourth call through redis_rate must be denied: %+v", res)
	}
	if v := script(); v.allowed != 0 || v.retry <= 0 {
		t.Errorf("fifth call over a limit of 3 must be denied: %+v", v)
	}
	if dials != 3 {
		t.Errorf("3 decisions on one Redis opened %d connections, want one each", dials)
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

// AUTH and SELECT go before the script, and a refused AUTH is an error, not a decision.
func TestDecidePreamble(t *testing.T) {
	var sent bytes.Buffer
	conn := struct {
		io.Reader
		io.Writer
		io.Closer
	}{strings.NewReader("-WRONGPASS invalid username-password pair\r\n+OK\r\n*4\r\n:1\r\n:2\r\n$2\r\n-1\r\n$1\r\n9\r\n"), &sent, io.NopCloser(nil)}
	dial := func(string) (io.ReadWriteCloser, error) { return conn, nil }
	_, err := decide(dial, Target{Seeds: []string{"redis.example:6379"}, Password: "p", DB: 3}, &slotMap{}, "k", 3, time.Hour, 1)
	if err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Errorf("refused AUTH: %v", err)
	}
	if !strings.HasPrefix(sent.String(), "*2\r\n$4\r\nAUTH\r\n$1\r\np\r\n*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n*8\r\n$4\r\nEVAL\r\n") {
		t.Errorf("sent %q", sent.String()[:80])
	}
}

// A reply's size is bounded: a line no longer than the reader's buffer,
// arrays of up to 16384 at the top (CLUSTER SLOTS: one entry per slot
// range) and 1024 inside.
func TestRESPBounds(t *testing.T) {
	read := func(s string) error {
		_, err := readReply(bufio.NewReader(strings.NewReader(s)), 0)
		return err
	}
	if err := read("-ERR " + strings.Repeat("x", 8192) + "\r\n"); err == nil || !strings.Contains(err.Error(), "too long") {
		t.Errorf("an 8 KiB error line: %v", err)
	}
	top := "*2000\r\n" + strings.Repeat("*1\r\n:1\r\n", 2000)
	if err := read(top); err != nil {
		t.Errorf("2000 slot ranges: %v", err)
	}
	if err := read("*1\r\n*2000\r\n" + strings.Repeat(":1\r\n", 2000)); err == nil {
		t.Error("a nested array of 2000 was read")
	}
	if err := read("*16385\r\n"); err == nil {
		t.Error("an array over 16384 was read")
	}
}
