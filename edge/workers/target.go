package workers

import (
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/agentready/agentready/internal/redisurl"
)

// Target is how the Worker reaches Redis: one Redis, or the seed nodes of a
// Redis Cluster. Either way a node may answer MOVED or ASK, which decide
// follows, so a one-host URL naming a node of a Cluster works too.
type Target struct {
	Seeds          []string // host:port, tried in order until one accepts a connection
	User, Password string   // AUTH, when set
	DB             int      // SELECT, when not 0 (never on a Cluster: it has database 0 only)
	TLS            bool     // rediss://
}

// errTargetURL never quotes the URL: it may hold a password.
var errTargetURL = errors.New("REDIS_URL is not a valid redis:// or rediss:// URL: want redis://[user:password@]host[:port][/db] for one Redis, or redis://[user:password@]host:port,host:port,… (database 0) for a Redis Cluster")

// ParseTarget reads REDIS_URL, in the origin's two forms —
// redis:// or rediss://[user:password@]host[:port][/db] for one Redis,
// redis://[user:password@]host:port,host:port,…[/0] for a Redis Cluster —
// or, when that is empty, REDIS_ADDR (host:port, or several for a Cluster).
func ParseTarget(redisURL, addr string) (Target, error) {
	if redisURL == "" {
		if addr == "" {
			return Target{}, errors.New("neither REDIS_URL nor REDIS_ADDR is set: a Worker keeps no allowances of its own, so they need a Redis")
		}
		seeds := strings.Split(addr, ",")
		for _, s := range seeds {
			if !hostPort(s) {
				return Target{}, errors.New("REDIS_ADDR is not host:port (or host:port,host:port,… for a Redis Cluster)")
			}
		}
		return Target{Seeds: seeds}, nil
	}
	if redisurl.Ambiguous(redisURL) {
		return Target{}, redisurl.ErrAmbiguous
	}
	first, hosts := redisurl.SplitHosts(redisURL)
	u, err := url.Parse(first)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Hostname() == "" {
		return Target{}, errTargetURL
	}
	t := Target{Seeds: hosts, TLS: u.Scheme == "rediss"}
	if len(hosts) == 1 && u.Port() == "" {
		t.Seeds = []string{net.JoinHostPort(u.Hostname(), "6379")}
	}
	for _, h := range t.Seeds {
		if !hostPort(h) {
			return Target{}, errTargetURL
		}
	}
	if u.User != nil {
		t.User = u.User.Username()
		t.Password, _ = u.User.Password()
		if t.Password == "" { // redis://password@host, as go-redis reads it
			t.User, t.Password = "", t.User
		}
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		if t.DB, err = strconv.Atoi(db); err != nil || t.DB < 0 {
			return Target{}, errors.New("REDIS_URL: the database (the URL's path, /0 to /15) is not a number")
		}
	}
	if len(hosts) > 1 && t.DB != 0 {
		return Target{}, errors.New("REDIS_URL names several hosts, a Redis Cluster, and a database other than 0: a Cluster has only database 0 (end the URL with /0 or nothing)")
	}
	return t, nil
}

// hostPort reports whether s is host:port with a host and a port number.
func hostPort(s string) bool {
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		return false
	}
	p, err := strconv.Atoi(port)
	return err == nil && p > 0 && p <= 65535
}
