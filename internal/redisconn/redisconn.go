// Package redisconn opens the Redis that REDIS_URL names: one Redis, or a
// Redis Cluster from several of its nodes, with timeouts that keep a frozen
// Redis from stalling its callers. origin/store builds its backend on it;
// a survey's queue (survey) uses it alone, without the store. A refusal of
// the URL never quotes its user name or password.
package redisconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	neturl "net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agentready/agentready/internal/redisurl"
	"github.com/redis/go-redis/v9"
)

// Options bound how long a call can wait for Redis; both are required
// (origin/store fills in its defaults).
type Options struct {
	CallTimeout time.Duration // one call, retries included; go-redis's read/write/pool timeouts
	DialTimeout time.Duration // one connection attempt
}

// urlForms is what REDIS_URL may be, said at the end of every refusal.
const urlForms = "want redis://[user:password@]host:port/db for one Redis (rediss:// for TLS), or redis://[user:password@]host:port,host:port,… or redis://[user:password@]host:port?addr=host:port&addr=host:port (database 0) for a Redis Cluster"

// errRedisURL never quotes the URL: it may hold a password.
var errRedisURL = errors.New("REDIS_URL is not a valid redis:// or rediss:// URL: " + urlForms)

// badRedisURL is a refusal of REDIS_URL saying what is wrong (why, which
// never holds the user name or password) and what is wanted.
func badRedisURL(why string) error {
	return errors.New("REDIS_URL is not a valid redis:// or rediss:// URL: " + why + "; " + urlForms)
}

// Open connects to url and checks it answers. url is
// redis://[user:password@]host:port[/db] for one Redis (rediss:// for TLS),
// or, for a Redis Cluster, several of its nodes: separated by commas,
// redis://[user:password@]host:port,host:port,…, or in go-redis's form,
// redis://[user:password@]host:port?addr=host:port&addr=… (database 0
// only, as a Cluster has no other). A single host:port that turns out to
// be a Cluster node is used as the Cluster's seed. c is a *redis.Client,
// or a *redis.ClusterClient when cluster.
func Open(ctx context.Context, url string, o Options) (c redis.UniversalClient, cluster bool, err error) {
	seeds, single, err := Parse(url)
	if err != nil {
		return nil, false, err
	}
	useTLS := (single != nil && single.TLSConfig != nil) || (seeds != nil && seeds.TLSConfig != nil)
	if single != nil {
		tune(single, o)
		one := redis.NewClient(single)
		if err := ping(ctx, one, single.Addr, useTLS); err != nil {
			return nil, false, err
		}
		if !clusterNode(ctx, one) {
			return one, false, nil
		}
		one.Close()
		first, _ := redisurl.Seeds(url)
		if seeds, err = clusterOptions(first, []string{single.Addr}); err != nil {
			return nil, false, err
		}
	}
	tuneCluster(seeds, o)
	cc := redis.NewClusterClient(seeds)
	if err := ping(ctx, cc, strings.Join(seeds.Addrs, ","), useTLS); err != nil {
		return nil, false, err
	}
	return cc, true, nil
}

// Parse reads the one-Redis form into single, the Cluster forms (several
// nodes, comma-separated or in addr parameters) into cluster. A refusal
// says what is wrong without quoting the URL's user or password.
func Parse(raw string) (cluster *redis.ClusterOptions, single *redis.Options, err error) {
	if redisurl.Ambiguous(raw) {
		return nil, nil, redisurl.ErrAmbiguous
	}
	first, hosts := redisurl.Seeds(raw)
	u, err := neturl.Parse(first)
	switch {
	case err != nil:
		return nil, nil, urlParseError(err, raw)
	case u.Scheme != "redis" && u.Scheme != "rediss":
		return nil, nil, badRedisURL("it does not begin with redis:// or rediss://")
	case u.Host == "":
		return nil, nil, badRedisURL("it names no host")
	}
	if len(hosts) == 1 {
		opt, err := redis.ParseURL(first)
		if err != nil {
			return nil, nil, goRedisError(err, u)
		}
		return nil, opt, nil
	}
	if db := strings.Trim(u.Path, "/"); db != "" && db != "0" {
		return nil, nil, errors.New("REDIS_URL names several hosts, a Redis Cluster, and a database other than 0: a Cluster has only database 0 (end the URL with /0 or nothing)")
	}
	for i, h := range hosts {
		if !hostPort(h) {
			// The node is named by its place: a mistyped URL may have
			// put a piece of the password there.
			return nil, nil, badRedisURL(fmt.Sprintf("node %d of the %d it names (the host first, then each comma-separated host and addr= in order) is not host:port with a port number, as every node of a Cluster's list must be (host:port,host:port,…)", i+1, len(hosts)))
		}
	}
	cluster, err = clusterOptions(first, hosts)
	return cluster, nil, err
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

// urlParseError says why net/url refused REDIS_URL. Its messages quote the
// piece that failed, which after the host is not secret; an escape may be
// in the password, so that one is said in other words.
func urlParseError(err error, raw string) error {
	var ue *neturl.Error
	if !errors.As(err, &ue) {
		return errRedisURL
	}
	var esc neturl.EscapeError
	if errors.As(ue.Err, &esc) {
		return badRedisURL("it has a '%' not followed by two hexadecimal digits (write a '%' in the password as %25)")
	}
	return safeReason(ue.Err.Error(), userinfo(raw)...)
}

// goRedisError says why go-redis refused the options of REDIS_URL (an
// unknown parameter, a malformed number or duration, a database that is not
// a number); its messages name parameters and their values, never the
// user or password, which safeReason checks all the same.
func goRedisError(err error, u *neturl.URL) error {
	var secrets []string
	if u.User != nil {
		pw, _ := u.User.Password()
		secrets = []string{u.User.Username(), pw}
	}
	return safeReason(strings.TrimPrefix(err.Error(), "redis: "), secrets...)
}

// safeReason is badRedisURL(why), or errRedisURL when why holds any of
// secrets.
func safeReason(why string, secrets ...string) error {
	for _, s := range secrets {
		if s != "" && strings.Contains(why, s) {
			return errRedisURL
		}
	}
	return badRedisURL(why)
}

// userinfo is the user and password of raw as written, before the last '@'
// of its authority, split at the first ':'.
func userinfo(raw string) []string {
	i := strings.Index(raw, "://")
	if i < 0 {
		return nil
	}
	rest := raw[i+3:]
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		rest = rest[:j]
	}
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return nil
	}
	user, pw, _ := strings.Cut(rest[:at], ":")
	return []string{rest[:at], user, pw}
}

// clusterOptions reads the user, password, TLS and query settings of raw
// (a URL naming one host, as redisurl.Seeds returns it) with hosts as the
// seed nodes, through go-redis's own Cluster URL form: one host and addr=
// parameters for the others.
func clusterOptions(raw string, hosts []string) (*redis.ClusterOptions, error) {
	u, err := neturl.Parse(raw)
	if err != nil {
		return nil, urlParseError(err, raw)
	}
	u.Host, u.Path = hosts[0], ""
	q := u.Query()
	for _, h := range hosts[1:] {
		q.Add("addr", h)
	}
	u.RawQuery = q.Encode()
	opt, err := redis.ParseClusterURL(u.String())
	if err != nil {
		return nil, goRedisError(err, u)
	}
	return opt, nil
}

// go-redis's defaults (3 s reads, 3 retries, 5 dial attempts) make a frozen
// Redis stall each request for 15–20 s. origin/store's rate limiter shares
// its client, so the same bounds apply to its calls.
func tune(opt *redis.Options, o Options) {
	opt.PoolSize = 64
	opt.ContextTimeoutEnabled = true
	opt.DialTimeout = o.DialTimeout
	opt.DialerRetries = 1
	opt.ReadTimeout = o.CallTimeout
	opt.WriteTimeout = o.CallTimeout
	opt.PoolTimeout = o.CallTimeout
	opt.MaxRetries = 1
}

func tuneCluster(opt *redis.ClusterOptions, o Options) {
	opt.PoolSize = 64 // per node
	opt.ContextTimeoutEnabled = true
	opt.DialTimeout = o.DialTimeout
	opt.DialerRetries = 1
	opt.ReadTimeout = o.CallTimeout
	opt.WriteTimeout = o.CallTimeout
	opt.PoolTimeout = o.CallTimeout
	opt.MaxRetries = 1
}

// ping checks Redis answers, and closes c when it does not. addr names it in the refusal (host:port, or
// the Cluster's seed nodes); useTLS says the URL is rediss://.
func ping(ctx context.Context, c redis.UniversalClient, addr string, useTLS bool) error {
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	err := c.Ping(pctx).Err()
	if err == nil {
		return nil
	}
	c.Close()
	var answered redis.Error
	switch {
	case errors.As(err, &answered) && strings.Contains(err.Error(), "cluster support disabled"):
		return fmt.Errorf("REDIS_URL names several nodes, a Redis Cluster, but Redis at %s is not a Cluster node (cluster support disabled): name one host:port for a single Redis", addr)
	case errors.As(err, &answered):
		return fmt.Errorf("Redis at %s refused the session (check the password and database in REDIS_URL): %s", addr, strings.SplitN(err.Error(), "\n", 2)[0])
	case useTLS:
		return fmt.Errorf("Redis at %s does not answer within 3 s (is it running, does it speak TLS on that port, as rediss:// asks, and is REDIS_URL right?)", addr)
	}
	return fmt.Errorf("Redis at %s does not answer within 3 s (is it running, and is REDIS_URL right? A Redis that speaks TLS needs rediss://)", addr)
}

// clusterNode reports whether the one Redis answering is a Cluster node
// (INFO cluster says cluster_enabled:1); a Redis that refuses INFO is taken
// for a single one.
func clusterNode(ctx context.Context, c *redis.Client) bool {
	ictx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	info, err := c.Info(ictx, "cluster").Result()
	return err == nil && strings.Contains(info, "cluster_enabled:1")
}
