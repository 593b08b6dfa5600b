package workers

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// dialer opens a connection to a Redis node (host:port) for the request
// that decides; decide closes it.
type dialer func(addr string) (io.ReadWriteCloser, error)

// maxRedirects is how many MOVED or ASK answers one decision follows. A key
// whose slot is being moved takes two at most (a stale map's MOVED, then the
// ASK to the node importing it); more means the Cluster is reorganising.
const maxRedirects = 2

// decide runs redis_rate's GCRA for key: on the node that holds the key's
// slot when slots knows it, else on the first seed that accepts a
// connection. On each connection AUTH, SELECT (one Redis only) and the
// script go pipelined in one round trip; a Cluster node's MOVED or ASK is
// followed on a new connection (after ASKING for an ASK), and a MOVED also
// asks that node for CLUSTER SLOTS, to refresh slots. The script runs once:
// a redirected command was not run, and a connection that fails after the
// script was sent is an error, never a second try.
func decide(dial dialer, t Target, slots *slotMap, key string, limit int, period time.Duration, n int) (verdict, error) {
	eval := []string{"EVAL", gcraScript, "1", key, strconv.Itoa(limit), strconv.Itoa(limit), strconv.Itoa(int(period.Seconds())), strconv.Itoa(n)}
	slot := keySlot(key)
	owner := slots.lookup(slot)
	var conn io.ReadWriteCloser
	var addr string
	var dialErr error
	candidates := t.Seeds
	if owner != "" {
		candidates = append([]string{owner}, t.Seeds...)
	}
	for i, a := range candidates {
		if i > 0 && a == owner {
			continue // tried first
		}
		if conn, dialErr = dial(a); dialErr == nil {
			addr = a
			break
		}
		if i == 0 && owner != "" {
			slots.forget() // the map names a node that is gone
		}
	}
	switch {
	case len(t.Seeds) == 0:
		return verdict{}, errors.New("REDIS_URL names no Redis node")
	case addr == "": // no dial succeeded (conn may be a typed nil: go by the error)
		return verdict{}, fmt.Errorf("no Redis node of REDIS_URL accepted a connection (%d tried): %w", len(t.Seeds), dialErr)
	}
	var asking, refresh bool
	for redirects := 0; ; redirects++ {
		v, r, err := exchange(conn, addr, t, eval, asking, refresh, slots)
		conn.Close()
		switch {
		case err != nil:
			return verdict{}, err
		case r == nil:
			return v, nil
		case redirects == maxRedirects:
			return verdict{}, fmt.Errorf("the Redis Cluster redirected one decision more than %d times (the last to %s for slot %d): its slots are moving; retry", maxRedirects, r.addr, r.slot)
		}
		if !r.ask {
			slots.moved(r.slot, r.addr)
		}
		if conn, err = dial(r.addr); err != nil {
			return verdict{}, fmt.Errorf("the Redis Cluster node %s, which holds slot %d, did not accept a connection: %w", r.addr, r.slot, err)
		}
		addr, asking, refresh = r.addr, r.ask, !r.ask
	}
}

// exchange sends one decision's commands over conn (to addr) and reads the
// answers: the verdict, or where the Cluster redirects the script.
func exchange(conn io.ReadWriter, addr string, t Target, eval []string, asking, refresh bool, slots *slotMap) (verdict, *redirect, error) {
	cmds := make([][]string, 0, 5)
	if t.Password != "" {
		if t.User != "" {
			cmds = append(cmds, []string{"AUTH", t.User, t.Password})
		} else {
			cmds = append(cmds, []string{"AUTH", t.Password})
		}
	}
	if t.DB != 0 {
		cmds = append(cmds, []string{"SELECT", strconv.Itoa(t.DB)})
	}
	if asking {
		cmds = append(cmds, []string{"ASKING"})
	}
	cmds = append(cmds, eval)
	if refresh {
		cmds = append(cmds, []string{"CLUSTER", "SLOTS"})
	}
	var b strings.Builder
	for _, c := range cmds {
		writeCommand(&b, c...)
	}
	if _, err := io.WriteString(conn, b.String()); err != nil {
		return verdict{}, nil, err
	}
	rd := bufio.NewReader(conn)
	var out verdict
	for _, c := range cmds {
		v, err := readReply(rd, 0)
		var re redisError
		switch {
		case c[0] == "CLUSTER":
			// The decision is made; a map that does not parse stays as it was.
			if err == nil {
				if ranges, err := parseSlots(v, addr); err == nil {
					slots.replace(ranges)
				}
			}
		case c[0] == "SELECT" && errors.As(err, &re) && strings.Contains(string(re), "cluster mode"):
			return verdict{}, nil, fmt.Errorf("REDIS_URL names database %d, but the Redis is a Cluster, which has database 0 only: end the URL with /0 or nothing", t.DB)
		case err != nil && c[0] == "EVAL" && errors.As(err, &re):
			if r, ok := parseRedirect(string(re), addr); ok {
				return verdict{}, &r, nil
			}
			return verdict{}, nil, fmt.Errorf("the rate-limit script: %w", err)
		case err != nil:
			return verdict{}, nil, fmt.Errorf("%s: %w", c[0], err)
		case c[0] == "EVAL":
			if out, err = gcraReply(v); err != nil {
				return verdict{}, nil, err
			}
		}
	}
	return out, nil, nil
}
