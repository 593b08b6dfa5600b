package workers

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// A minimal RESP2 client: one EVAL per decision. go-redis would add about
// 2 MB gzip to the module (over the Workers free plan's 3 MiB limit) for this.

// redisError is an error reply, its text as Redis sent it ("MOVED 3999 …").
type redisError string

func (e redisError) Error() string { return "redis: " + string(e) }

// writeCommand encodes a command as a RESP array of bulk strings.
func writeCommand(w io.Writer, args ...string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// readReply decodes one RESP2 reply: string, int64, []any, nil, or an error.
func readReply(r *bufio.Reader, depth int) (any, error) {
	if depth > 8 {
		return nil, errors.New("RESP reply nested too deeply")
	}
	raw, err := r.ReadSlice('\n') // a line longer than r's buffer is an error, not a growing string
	if errors.Is(err, bufio.ErrBufferFull) {
		return nil, errors.New("RESP line too long")
	}
	if err != nil {
		return nil, err
	}
	line := strings.TrimSuffix(string(raw), "\r\n")
	if line == "" {
		return nil, errors.New("empty RESP line")
	}
	switch line[0] {
	case '+':
		return line[1:], nil
	case '-':
		return nil, redisError(line[1:])
	case ':':
		return strconv.ParseInt(line[1:], 10, 64)
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < -1 || n > 1<<20 {
			return nil, errors.New("bad RESP bulk length")
		}
		if n == -1 {
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(line[1:])
		// CLUSTER SLOTS is an array of one entry per slot range: up to
		// 16384 at the top; nested arrays are small.
		if err != nil || n < -1 || n > 16384 || (depth > 0 && n > 1024) {
			return nil, errors.New("bad RESP array length")
		}
		if n == -1 {
			return nil, nil
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = readReply(r, depth+1); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown RESP type %q", line[0])
}

// gcraScript is redis_rate v10's allowN script, byte for byte in behaviour,
// so that a Worker and an origin using redis_rate agree on every count.
const gcraScript = `redis.replicate_commands()
local rate_limit_key = KEYS[1]
local burst = ARGV[1]
local rate = ARGV[2]
local period = ARGV[3]
local cost = tonumber(ARGV[4])
local emission_interval = period / rate
local increment = emission_interval * cost
local burst_offset = emission_interval * burst
local jan_1_2017 = 1483228800
local now = redis.call("TIME")
now = (now[1] - jan_1_2017) + (now[2] / 1000000)
local tat = redis.call("GET", rate_limit_key)
if not tat then
  tat = now
else
  tat = tonumber(tat)
end
tat = math.max(tat, now)
local new_tat = tat + increment
local allow_at = new_tat - burst_offset
local diff = now - allow_at
local remaining = diff / emission_interval
if remaining < 0 then
  local reset_after = tat - now
  local retry_after = diff * -1
  return {0, 0, tostring(retry_after), tostring(reset_after)}
end
local reset_after = new_tat - now
if reset_after > 0 then
  redis.call("SET", rate_limit_key, new_tat, "EX", math.ceil(reset_after))
end
local retry_after = -1
return {cost, remaining, tostring(retry_after), tostring(reset_after)}`

// verdict is the script's answer: events allowed (0: denied), events left,
// and the seconds until a denied request may succeed (-1 when allowed) and
// until the allowance is whole again.
type verdict struct {
	allowed, remaining int64
	retry, reset       float64
}

// gcraReply parses the script's reply.
func gcraReply(v any) (verdict, error) {
	arr, ok := v.([]any)
	if !ok || len(arr) != 4 {
		return verdict{}, errors.New("unexpected reply from the rate-limit script")
	}
	var out verdict
	out.allowed, _ = arr[0].(int64)
	out.remaining, _ = arr[1].(int64)
	rs, _ := arr[2].(string)
	ts, _ := arr[3].(string)
	out.retry, _ = strconv.ParseFloat(rs, 64)
	out.reset, _ = strconv.ParseFloat(ts, 64)
	return out, nil
}
