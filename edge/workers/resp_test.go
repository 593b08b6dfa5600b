package workers

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/ratelimit"
	"github.com/redis/go-redis/v9"
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
	u := os.Getenv("REDIS_URL")
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but REDIS_URL is not set")
		}
		t.Skip("REDIS_URL not set")
	}
	opt, _ := redis.ParseURL(u)
	conn, err := net.Dial("tcp", opt.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rd := bufio.NewReader(conn)
	key := "rltest-resp:" + strconv.FormatInt(time.Now().UnixNano(), 10)
	rc := redis.NewClient(opt)
	defer rc.Close()
	lib := ratelimit.NewRedis(rc)
	script := func() (int64, int64) {
		writeCommand(conn, "EVAL", gcraScript, "1", "rate:"+key, "3", "3", "86400", "1")
		v, err := readReply(rd, 0)
		a, rem, _, _, err2 := gcraReply(v)
		if err != nil || err2 != nil {
			t.Fatalf("%v %v %v", v, err, err2)
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
	writeCommand(conn, "EVAL", gcraScript, "1", "rate:"+key, "3", "3", "86400", "1")
	v, _ := readReply(rd, 0)
	if a, _, retry, _, _ := gcraReply(v); a != 0 || retry <= 0 {
		t.Errorf("fifth call over a limit of 3 must be denied: %v", v)
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
