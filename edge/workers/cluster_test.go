package workers

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestKeySlot(t *testing.T) {
	// The Cluster specification's examples; TestKeySlotAgreesWithRedis
	// holds keySlot to a real Cluster's CLUSTER KEYSLOT for many more.
	for key, slot := range map[string]uint16{
		"123456789":            0x31c3 % 16384, // CRC16/XMODEM's check value
		"foo":                  12182,
		"bar":                  5061,
		"{bar}":                5061,
		"foo{bar}{zap}":        5061, // the first {…} only
		"{user1000}.following": keySlot("user1000"),
		"foo{}{bar}":           keySlot("foo{}{bar}"), // an empty tag hashes the whole key
	} {
		if got := keySlot(key); got != slot {
			t.Errorf("keySlot(%q) = %d, want %d", key, got, slot)
		}
	}
	if keySlot("foo{}{bar}") == keySlot("bar") || keySlot("foo{{bar}}zap") != keySlot("{bar") {
		t.Error("hash tags are read as the specification says")
	}
}

func TestParseRedirect(t *testing.T) {
	for _, c := range []struct {
		msg  string
		want redirect
		ok   bool
	}{
		{"MOVED 3999 127.0.0.1:6381", redirect{slot: 3999, addr: "127.0.0.1:6381"}, true},
		{"ASK 3999 10.0.0.7:7000", redirect{ask: true, slot: 3999, addr: "10.0.0.7:7000"}, true},
		{"MOVED 16383 redis-2.internal:6379", redirect{slot: 16383, addr: "redis-2.internal:6379"}, true},
		{"MOVED 0 ::1:7001", redirect{slot: 0, addr: "[::1]:7001"}, true},       // Redis prints IPv6 bare
		{"MOVED 12 :7002", redirect{slot: 12, addr: "seed.example:7002"}, true}, // unknown endpoint: the same host
		{"MOVED 16384 127.0.0.1:6381", redirect{}, false},
		{"MOVED -1 127.0.0.1:6381", redirect{}, false},
		{"MOVED 3999 127.0.0.1", redirect{}, false},
		{"MOVED 3999 127.0.0.1:0", redirect{}, false},
		{"MOVED 3999 127.0.0.1:+80", redirect{}, false},
		{"MOVED 3999 127.0.0.1:6381 extra", redirect{}, false},
		{"MOVED 3999 bad/host:6381", redirect{}, false},
		{"ERR unknown command", redirect{}, false},
		{"TRYAGAIN Multiple keys request during rehashing of slot", redirect{}, false},
		{"CLUSTERDOWN The cluster is down", redirect{}, false},
	} {
		got, ok := parseRedirect(c.msg, "seed.example:7000")
		if ok != c.ok || got != c.want {
			t.Errorf("%q: %+v %v, want %+v %v", c.msg, got, ok, c.want, c.ok)
		}
	}
}

// clusterSlotsReply is what Redis 7 answers to CLUSTER SLOTS for three
// masters, the second without a known endpoint and the third with an empty
// (same-host) one.
const clusterSlotsReply = "*3\r\n" +
	"*3\r\n:0\r\n:5460\r\n*4\r\n$9\r\n127.0.0.1\r\n:7001\r\n$3\r\nid1\r\n*0\r\n" +
	"*3\r\n:5461\r\n:10922\r\n*4\r\n$1\r\n?\r\n:7002\r\n$3\r\nid2\r\n*0\r\n" +
	"*4\r\n:10923\r\n:16383\r\n*3\r\n$0\r\n\r\n:7003\r\n$3\r\nid3\r\n*3\r\n$9\r\n127.0.0.1\r\n:7004\r\n$3\r\nid4\r\n"

func TestParseSlots(t *testing.T) {
	v, err := readReply(bufio.NewReader(strings.NewReader(clusterSlotsReply)), 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseSlots(v, "10.1.1.1:7001")
	want := []slotRange{{0, 5460, "127.0.0.1:7001"}, {10923, 16383, "10.1.1.1:7003"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("%+v %v, want %+v", got, err, want)
	}
	for _, bad := range []string{"+OK\r\n", "*1\r\n:1\r\n", "*1\r\n*3\r\n:9\r\n:1\r\n*2\r\n$1\r\nh\r\n:1\r\n", "*1\r\n*3\r\n:0\r\n:16384\r\n*2\r\n$1\r\nh\r\n:1\r\n", "*1\r\n*3\r\n:0\r\n:1\r\n*2\r\n$1\r\nh\r\n:70000\r\n"} {
		v, _ := readReply(bufio.NewReader(strings.NewReader(bad)), 0)
		if r, err := parseSlots(v, "h:1"); err == nil {
			t.Errorf("%q: %+v, want an error", bad, r)
		}
	}
	var m slotMap
	m.replace(got)
	if m.lookup(0) != "127.0.0.1:7001" || m.lookup(5460) != "127.0.0.1:7001" || m.lookup(5461) != "" || m.lookup(16383) != "10.1.1.1:7003" {
		t.Errorf("map: %q %q %q %q", m.lookup(0), m.lookup(5460), m.lookup(5461), m.lookup(16383))
	}
	m.moved(5461, "127.0.0.1:7002")
	if m.lookup(5461) != "127.0.0.1:7002" || m.lookup(5462) != "" {
		t.Error("a MOVED teaches its one slot")
	}
	m.forget()
	if m.lookup(0) != "" {
		t.Error("forget")
	}
}

// fakeNode answers each command by its name ("EVAL", "ASKING", …) with a
// RESP reply; a command it has no answer for is an error reply.
type fakeNode map[string]string

// fakeCluster is a set of nodes by address, and the log of what each
// connection sent: "addr: CMD CMD…". A refused address has no node.
type fakeCluster struct {
	nodes map[string]fakeNode
	log   []string
}

func (c *fakeCluster) dial(addr string) (io.ReadWriteCloser, error) {
	n, ok := c.nodes[addr]
	if !ok {
		c.log = append(c.log, addr+": refused")
		// A typed nil, as a dialer that wraps a func returning *conn gives:
		// decide must go by the error, never by the connection being nil.
		var none *fakeConn
		return none, syscall.ECONNREFUSED
	}
	return &fakeConn{node: n, addr: addr, c: c}, nil
}

type fakeConn struct {
	node    fakeNode
	addr    string
	c       *fakeCluster
	sent    bytes.Buffer
	replies *strings.Reader
}

func (f *fakeConn) Write(b []byte) (int, error) { return f.sent.Write(b) }
func (f *fakeConn) Close() error                { return nil }

// Read answers everything written so far (the client pipelines, then reads).
func (f *fakeConn) Read(p []byte) (int, error) {
	if f.replies == nil {
		var out strings.Builder
		var names []string
		rd := bufio.NewReader(&f.sent)
		for {
			v, err := readReply(rd, 0)
			if err != nil {
				break
			}
			name, _ := v.([]any)[0].(string)
			names = append(names, name)
			if r, ok := f.node[name]; ok {
				out.WriteString(r)
			} else {
				out.WriteString("-ERR fake node: no answer to " + name + "\r\n")
			}
		}
		f.c.log = append(f.c.log, f.addr+": "+strings.Join(names, " "))
		f.replies = strings.NewReader(out.String())
	}
	return f.replies.Read(p)
}

const allowedReply = "*4\r\n:1\r\n:2\r\n$2\r\n-1\r\n$5\r\n28800\r\n"

func moved(addr string) string { return "-MOVED 7 " + addr + "\r\n" }
func ask(addr string) string   { return "-ASK 7 " + addr + "\r\n" }

// How one decision travels through a Cluster: which nodes it dials, what it
// sends each, and what it learns of the slots. The key's slot is the one
// the fake nodes name (7), so a learnt map sends the next decision there.
func TestDecideFollowsTheCluster(t *testing.T) {
	key := "{" + slotTag(7) + "}:rate"
	slotsReply := "*1\r\n*3\r\n:0\r\n:16383\r\n*3\r\n$1\r\nb\r\n:2\r\n$2\r\nid\r\n"
	for _, c := range []struct {
		name   string
		seeds  []string
		known  string // the map's owner of the slot before the decision
		nodes  map[string]fakeNode
		target Target
		log    []string
		err    string // a fragment of the error; "" for the allowed verdict
		learnt string // the map's owner of the slot after the decision
	}{
		{name: "one Redis: one connection",
			seeds: []string{"a:1"}, nodes: map[string]fakeNode{"a:1": {"EVAL": allowedReply}},
			log: []string{"a:1: EVAL"}},
		{name: "MOVED: the script again where it lives now, and the slots from there",
			seeds: []string{"a:1"}, nodes: map[string]fakeNode{"a:1": {"EVAL": moved("b:2")}, "b:2": {"EVAL": allowedReply, "CLUSTER": slotsReply}},
			log: []string{"a:1: EVAL", "b:2: EVAL CLUSTER"}, learnt: "b:2"},
		{name: "a known slot goes straight to its node",
			seeds: []string{"a:1"}, known: "b:2", nodes: map[string]fakeNode{"a:1": {"EVAL": moved("b:2")}, "b:2": {"EVAL": allowedReply}},
			log: []string{"b:2: EVAL"}, learnt: "b:2"},
		{name: "ASK: ASKING then the script, the map unchanged",
			seeds: []string{"a:1"}, nodes: map[string]fakeNode{"a:1": {"EVAL": ask("b:2")}, "b:2": {"ASKING": "+OK\r\n", "EVAL": allowedReply}},
			log: []string{"a:1: EVAL", "b:2: ASKING EVAL"}},
		{name: "AUTH on every connection, before ASKING",
			seeds: []string{"a:1"}, target: Target{User: "u", Password: "p"},
			nodes: map[string]fakeNode{"a:1": {"AUTH": "+OK\r\n", "EVAL": ask("b:2")}, "b:2": {"AUTH": "+OK\r\n", "ASKING": "+OK\r\n", "EVAL": allowedReply}},
			log:   []string{"a:1: AUTH EVAL", "b:2: AUTH ASKING EVAL"}},
		{name: "MOVED then ASK: two redirections",
			seeds: []string{"a:1"}, nodes: map[string]fakeNode{"a:1": {"EVAL": moved("b:2")}, "b:2": {"EVAL": ask("c:3"), "CLUSTER": slotsReply}, "c:3": {"ASKING": "+OK\r\n", "EVAL": allowedReply}},
			log: []string{"a:1: EVAL", "b:2: EVAL CLUSTER", "c:3: ASKING EVAL"}, learnt: "b:2"},
		{name: "a third redirection is an error",
			seeds: []string{"a:1"}, nodes: map[string]fakeNode{"a:1": {"EVAL": moved("b:2")}, "b:2": {"EVAL": moved("c:3")}, "c:3": {"EVAL": moved("a:1")}},
			log: []string{"a:1: EVAL", "b:2: EVAL CLUSTER", "c:3: EVAL CLUSTER"}, err: "redirected one decision more than 2 times", learnt: "c:3"},
		{name: "a seed that refuses is skipped",
			seeds: []string{"a:1", "b:2", "c:3"}, nodes: map[string]fakeNode{"b:2": {"EVAL": allowedReply}},
			log: []string{"a:1: refused", "b:2: EVAL"}},
		{name: "no seed accepts",
			seeds: []string{"a:1", "b:2"}, nodes: map[string]fakeNode{},
			log: []string{"a:1: refused", "b:2: refused"}, err: "no Redis node of REDIS_URL accepted a connection (2 tried)"},
		{name: "a known node that refuses is forgotten, and the seeds asked",
			seeds: []string{"a:1"}, known: "gone:9", nodes: map[string]fakeNode{"a:1": {"EVAL": allowedReply}},
			log: []string{"gone:9: refused", "a:1: EVAL"}},
		{name: "the node a MOVED names refuses",
			seeds: []string{"a:1"}, nodes: map[string]fakeNode{"a:1": {"EVAL": moved("b:2")}},
			log: []string{"a:1: EVAL", "b:2: refused"}, err: "the Redis Cluster node b:2, which holds slot 7, did not accept a connection", learnt: "b:2"},
		{name: "any other error is the script's",
			seeds: []string{"a:1"}, nodes: map[string]fakeNode{"a:1": {"EVAL": "-CLUSTERDOWN The cluster is down\r\n"}},
			log: []string{"a:1: EVAL"}, err: "the rate-limit script: redis: CLUSTERDOWN The cluster is down"},
		{name: "a malformed MOVED is not followed",
			seeds: []string{"a:1"}, nodes: map[string]fakeNode{"a:1": {"EVAL": "-MOVED 7 b\r\n"}},
			log: []string{"a:1: EVAL"}, err: "the rate-limit script: redis: MOVED 7 b"},
		{name: "a database on a Cluster",
			seeds: []string{"a:1"}, target: Target{DB: 2}, nodes: map[string]fakeNode{"a:1": {"SELECT": "-ERR SELECT is not allowed in cluster mode\r\n", "EVAL": moved("b:2")}},
			log: []string{"a:1: SELECT EVAL"}, err: "REDIS_URL names database 2, but the Redis is a Cluster"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fc := &fakeCluster{nodes: c.nodes}
			var m slotMap
			if c.known != "" {
				m.moved(7, c.known)
			}
			target := c.target
			target.Seeds = c.seeds
			v, err := decide(fc.dial, target, &m, key, 3, 24*time.Hour, 1)
			switch {
			case c.err == "" && (err != nil || v != verdict{allowed: 1, remaining: 2, retry: -1, reset: 28800}):
				t.Errorf("%+v %v, want the allowed verdict", v, err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Errorf("%v, want an error saying %q", err, c.err)
			}
			if !reflect.DeepEqual(fc.log, c.log) {
				t.Errorf("connections:\n  %s\nwant\n  %s", strings.Join(fc.log, "\n  "), strings.Join(c.log, "\n  "))
			}
			if got := m.lookup(7); got != c.learnt {
				t.Errorf("the map says slot 7 is at %q, want %q", got, c.learnt)
			}
		})
	}
}

// slotTag is a hash tag whose slot is slot.
func slotTag(slot uint16) string {
	for i := 0; ; i++ {
		if tag := strconv.Itoa(i); keySlot(tag) == slot {
			return tag
		}
	}
}

// Whatever a node sends as an error, reading it as a redirection ends with
// a slot and a dialable address, or with no redirection.
func FuzzParseRedirect(f *testing.F) {
	for _, s := range []string{"MOVED 3999 127.0.0.1:6381", "ASK 0 ::1:7001", "MOVED 12 :7002", "MOVED 16384 h:1", "ASK 1 h:99999", "MOVED 1  h:1", "ERR x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		r, ok := parseRedirect(msg, "seed.example:7000")
		if !ok {
			return
		}
		if r.slot >= clusterSlots || !hostPort(r.addr) {
			t.Fatalf("%q: %+v", msg, r)
		}
		if _, _, err := net.SplitHostPort(r.addr); err != nil {
			t.Fatalf("%q: %+v: %v", msg, r, err)
		}
	})
}

// Whatever a node sends for CLUSTER SLOTS, the map learns valid ranges of
// dialable addresses, or nothing.
func FuzzClusterSlots(f *testing.F) {
	for _, s := range []string{clusterSlotsReply, "*0\r\n", "*1\r\n*3\r\n:0\r\n:16383\r\n*3\r\n$1\r\nb\r\n:2\r\n$2\r\nid\r\n", "*1\r\n*3\r\n:5\r\n:1\r\n*2\r\n$1\r\nh\r\n:1\r\n", "-ERR This instance has cluster support disabled\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := readReply(bufio.NewReader(bytes.NewReader(b)), 0)
		if err != nil {
			return
		}
		ranges, err := parseSlots(v, "seed.example:7000")
		if err != nil {
			return
		}
		for _, r := range ranges {
			if r.start > r.end || r.end >= clusterSlots || !hostPort(r.addr) {
				t.Fatalf("%+v", r)
			}
		}
		var m slotMap
		m.replace(ranges)
	})
}
