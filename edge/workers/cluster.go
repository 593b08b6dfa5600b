package workers

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
)

// What the Worker needs of Redis Cluster: the slot of a key (to send its one
// script to the node that holds it), the -MOVED and -ASK redirections, and
// the slot map (CLUSTER SLOTS) that a MOVED says is out of date.

// clusterSlots is the number of hash slots of a Redis Cluster.
const clusterSlots = 16384

// keySlot is the Cluster's hash slot of key: CRC16 (XMODEM) of the key, or
// of its hash tag (the bytes between the first '{' and the next '}', when
// there are any), modulo 16384.
func keySlot(key string) uint16 {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for k := 0; k < len(key); k++ {
		crc ^= uint16(key[k]) << 8
		for b := 0; b < 8; b++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % clusterSlots
}

// KeySlot is the Cluster's CLUSTER KEYSLOT of key (the tests that run the
// Worker against a real Cluster place keys with it).
func KeySlot(key string) uint16 { return keySlot(key) }

// redirect is a Cluster node's -MOVED (the slot lives elsewhere now) or -ASK
// (this one command goes elsewhere, after ASKING: the slot is being moved).
type redirect struct {
	ask  bool
	slot uint16
	addr string // host:port
}

// parseRedirect reads the text of an error reply ("MOVED 3999 10.0.0.2:6381").
// Redis prints an IPv6 host without brackets, and an empty host when the
// node's endpoint is unknown, which means the host of the connection the
// reply came on (from, host:port).
func parseRedirect(msg, from string) (redirect, bool) {
	f := strings.Split(msg, " ")
	if len(f) != 3 || (f[0] != "MOVED" && f[0] != "ASK") {
		return redirect{}, false
	}
	slot, err := strconv.Atoi(f[1])
	if err != nil || slot < 0 || slot >= clusterSlots {
		return redirect{}, false
	}
	i := strings.LastIndexByte(f[2], ':')
	if i < 0 {
		return redirect{}, false
	}
	addr, ok := nodeAddr(f[2][:i], f[2][i+1:], from)
	if !ok {
		return redirect{}, false
	}
	return redirect{ask: f[0] == "ASK", slot: uint16(slot), addr: addr}, true
}

// nodeAddr is the address of a node a Cluster named by host and port, or
// false when the reply is not a usable address. An empty host is from's.
func nodeAddr(host, port, from string) (string, bool) {
	p, err := strconv.Atoi(port)
	if err != nil || p <= 0 || p > 65535 || strconv.Itoa(p) != port {
		return "", false
	}
	if host == "" {
		h, _, err := net.SplitHostPort(from)
		if err != nil || h == "" {
			return "", false
		}
		host = h
	}
	if len(host) > 255 {
		return "", false
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' || c == ':' || c == '%') {
			return "", false
		}
	}
	return net.JoinHostPort(host, port), true
}

// slotRange is one entry of CLUSTER SLOTS: slots start…end are served by
// the master at addr.
type slotRange struct {
	start, end uint16
	addr       string
}

// parseSlots reads a CLUSTER SLOTS reply, as readReply decoded it, that came
// on the connection to from: [[start, end, [host, port, id, …], replicas…], …].
// A master whose endpoint is unknown to the Cluster ("?") is left out:
// decisions for its slots start at a seed and are redirected.
func parseSlots(v any, from string) ([]slotRange, error) {
	bad := errors.New("unexpected reply to CLUSTER SLOTS")
	entries, ok := v.([]any)
	if !ok {
		return nil, bad
	}
	out := make([]slotRange, 0, len(entries))
	for _, e := range entries {
		f, ok := e.([]any)
		if !ok || len(f) < 3 {
			return nil, bad
		}
		start, ok1 := f[0].(int64)
		end, ok2 := f[1].(int64)
		master, ok3 := f[2].([]any)
		if !ok1 || !ok2 || !ok3 || start < 0 || start > end || end >= clusterSlots || len(master) < 2 {
			return nil, bad
		}
		host, _ := master[0].(string) // nil (an unknown endpoint) reads as ""
		port, ok := master[1].(int64)
		if !ok {
			return nil, bad
		}
		if host == "?" {
			continue
		}
		addr, ok := nodeAddr(host, strconv.FormatInt(port, 10), from)
		if !ok {
			return nil, bad
		}
		out = append(out, slotRange{start: uint16(start), end: uint16(end), addr: addr})
	}
	return out, nil
}

// slotMap is what an isolate has learnt of where a Cluster keeps its slots,
// so that a decision goes straight to the node that holds its key. It holds
// addresses only — the sockets stay the request's — and is refreshed from
// CLUSTER SLOTS whenever a node answers MOVED. Without it, two decisions in
// three on a Cluster of three masters would pay a redirection.
type slotMap struct {
	mu    sync.Mutex
	nodes []string            // addresses; owner[s] indexes it, plus one
	owner [clusterSlots]uint8 // 0: not known
}

// maxNodes bounds the addresses a slotMap keeps (owner's uint8).
const maxNodes = 255

// lookup is the address that holds slot, or "" when not known.
func (m *slotMap) lookup(slot uint16) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i := m.owner[slot]; i > 0 {
		return m.nodes[i-1]
	}
	return ""
}

// index is addr's place in nodes, plus one, or 0 when nodes is full.
func (m *slotMap) index(addr string) uint8 {
	for i, a := range m.nodes {
		if a == addr {
			return uint8(i + 1)
		}
	}
	if len(m.nodes) == maxNodes {
		return 0
	}
	m.nodes = append(m.nodes, addr)
	return uint8(len(m.nodes))
}

// moved records that slot lives at addr.
func (m *slotMap) moved(slot uint16, addr string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.owner[slot] = m.index(addr)
}

// replace makes ranges the whole map.
func (m *slotMap) replace(ranges []slotRange) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nodes, m.owner = m.nodes[:0], [clusterSlots]uint8{}
	for _, r := range ranges {
		i := m.index(r.addr)
		for s := int(r.start); s <= int(r.end); s++ {
			m.owner[s] = i
		}
	}
}

// forget drops the map (a node it named no longer accepts connections).
func (m *slotMap) forget() { m.replace(nil) }
