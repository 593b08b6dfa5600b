package survey

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agentready/agentready/engine/weburl"
	"github.com/agentready/agentready/internal/redisconn"
)

// QueueConfig makes a run one worker of a survey whose list is kept in
// Redis: any number of workers, on any number of machines, pull its sites
// from one Redis Stream through one consumer group, each writing its own
// output directory; Merge adds the directories up.
type QueueConfig struct {
	// URL is the Redis, in REDIS_URL's syntax (as internal/redisconn reads it):
	// redis://[user:password@]host:port[/db] (rediss:// for TLS), or the
	// nodes of a Redis Cluster, redis://host:port,host:port,…
	URL string
	// Survey names the survey in Redis; "" is the list's SHA-256, which
	// needs Config.List.
	Survey string
	// Worker is this worker's consumer name; "" is the name the output
	// directory's manifest recorded, else hostname-pid-random.
	Worker string
	// ClaimIdle is how long an entry may go untouched in another worker's
	// hands before this one takes it over; 0 is the per-site timeout plus
	// 10 s. A live worker touches the entries it holds every ClaimIdle/4.
	ClaimIdle time.Duration
}

// QueueSummary is what a queue's worker did.
type QueueSummary struct {
	Survey string // the survey's name in Redis
	Worker string // this worker's consumer name
	// Loaded is how many sites this run added to the queue: 0 when another
	// run had loaded the list (or no list was given).
	Loaded int
	// TakenOver counts the entries this run took from workers that held
	// them untouched longer than ClaimIdle (stopped, or killed).
	TakenOver int
	// ClaimIdle is the survey's takeover time, which this worker used:
	// after it, the entries a stopped worker held go to another.
	ClaimIdle time.Duration
}

const (
	// claimMargin is how much longer than a site's timeout an entry may sit
	// untouched before another worker takes it over.
	claimMargin = 10 * time.Second
	// queueGroup is the consumer group every worker of a survey joins.
	queueGroup = "workers"
	// finishedTTL keeps a finished survey's keys (an empty stream, the
	// list's account and the workers' names) this long: a loader of the
	// same list within it finds the survey done rather than loading it
	// again.
	finishedTTL = 30 * 24 * time.Hour
	// redisCallTimeout bounds one Redis call of a worker (a pipeline of
	// loadBatch entries included).
	redisCallTimeout = 10 * time.Second
	loadBatch        = 512
)

var (
	queueNameRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)
	workerNameRE = regexp.MustCompile(`^[!-~]{1,100}$`)
)

// CheckQueueName accepts a survey's name in Redis: 1–100 letters, digits,
// dots, dashes and underscores (no braces: the name is the hash tag that
// keeps a survey's keys in one slot of a Cluster).
func CheckQueueName(s string) error {
	if !queueNameRE.MatchString(s) {
		return errors.New("a survey's name is 1–100 letters, digits, '.', '-' or '_', starting with a letter or digit (e.g. top-200k-2026-11)")
	}
	return nil
}

// CheckWorkerName accepts a worker's name: 1–100 printable ASCII
// characters without spaces.
func CheckWorkerName(s string) error {
	if !workerNameRE.MatchString(s) {
		return errors.New("a worker's name is 1–100 printable ASCII characters without spaces (e.g. the pod's name)")
	}
	return nil
}

// queueKeys are a survey's keys: one hash tag, the survey's name, puts them
// all in one slot of a Redis Cluster, so a transaction or a script may
// touch several.
type queueKeys struct {
	stream  string // the entries not done yet: ID "<list line>-0", fields url and rank
	meta    string // a hash: the list's account (queueMeta), and "loaded"
	workers string // a set: every worker that joined
	lease   string // + registrable domain: the worker scanning a site of it
}

func keysFor(name string) queueKeys {
	base := "agentready:survey:{" + name + "}:"
	return queueKeys{stream: base + "entries", meta: base + "meta", workers: base + "workers", lease: base + "domain:"}
}

// queueMeta is the list's account as the loader made it, kept in the
// survey's meta hash: workers without the list take it from there.
type queueMeta struct {
	List    ListInfo
	Sites   int
	Skipped SkipCounts
	Loaded  bool
	// ClaimIdle is the survey's takeover time, the loader's (its --timeout
	// + 10 s): every worker uses it, whatever its own --timeout, so that no
	// worker takes over the live entries of another that renews them
	// less often. Zero when a survey was loaded without it.
	ClaimIdle time.Duration
}

// fields are the meta hash's fields, sha256 first (claimScript relies on it).
func (m queueMeta) fields() []any {
	return []any{"sha256", m.List.SHA256, "name", m.List.Name, "format", string(m.List.Format), "lines", m.List.Lines,
		"sites", m.Sites, "duplicates", m.Skipped.Duplicates, "invalid", m.Skipped.Invalid, "claim_idle_ms", m.ClaimIdle.Milliseconds()}
}

var sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// parseMeta reads the meta hash back, refusing anything a loader did not
// write.
func parseMeta(h map[string]string) (queueMeta, error) {
	var m queueMeta
	bad := errors.New("the survey's account in Redis is not one agentready wrote (was the key changed by hand?)")
	if !sha256RE.MatchString(h["sha256"]) || len(h["name"]) > 255 {
		return m, bad
	}
	m.List.SHA256, m.List.Name = h["sha256"], h["name"]
	switch Format(h["format"]) {
	case Plain, RankedCSV, "":
		m.List.Format = Format(h["format"])
	default:
		return m, bad
	}
	for _, f := range []struct {
		name string
		dst  *int
	}{{"lines", &m.List.Lines}, {"sites", &m.Sites}, {"duplicates", &m.Skipped.Duplicates}, {"invalid", &m.Skipped.Invalid}} {
		n, err := strconv.Atoi(h[f.name])
		if err != nil || n < 0 {
			return m, bad
		}
		*f.dst = n
	}
	if m.Sites > m.List.Lines {
		return m, bad
	}
	if v, ok := h["claim_idle_ms"]; ok {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 0 || ms > int64(24*time.Hour/time.Millisecond) {
			return m, bad
		}
		m.ClaimIdle = time.Duration(ms) * time.Millisecond
	}
	m.Loaded = h["loaded"] == "1"
	return m, nil
}

// parseEntry reads a stream entry back into the list item it stands for:
// its ID is "<list line>-0", its url the target as the list reader
// normalised it. Anything else was not written by a loader.
func parseEntry(id string, values map[string]any) (Item, error) {
	bad := fmt.Errorf("the queue holds an entry (%.40q) that is not a site agentready loaded: was the stream written by something else?", id)
	ms, seq, ok := strings.Cut(id, "-")
	line, err := strconv.Atoi(ms)
	if !ok || seq != "0" || err != nil || line < 1 || strconv.Itoa(line) != ms {
		return Item{}, bad
	}
	u, _ := values["url"].(string)
	r, _ := values["rank"].(string)
	rank, err := strconv.Atoi(r)
	if err != nil || rank < 0 || len(u) > MaxLineBytes {
		return Item{}, bad
	}
	nu, err := weburl.Normalize(u)
	if err != nil || nu.String() != u {
		return Item{}, bad
	}
	return Item{Line: line, Entry: Entry{Rank: rank, URL: u, Site: siteOf(nu)}}, nil
}

// redisQueue is one worker's (or loader's) view of a survey in Redis.
type redisQueue struct {
	c         redis.UniversalClient
	keys      queueKeys
	name      string
	worker    string
	claimIdle time.Duration
	leaseTTL  time.Duration
}

// dialQueue connects to the Redis or Redis Cluster at url (REDIS_URL's
// syntax: internal/redisconn parses it, as origin/store does, finds out
// whether it is a Cluster, and words its refusals without repeating the
// URL, which may hold a password).
func dialQueue(ctx context.Context, url, name string) (*redisQueue, error) {
	c, _, err := redisconn.Open(ctx, url, redisconn.Options{CallTimeout: redisCallTimeout, DialTimeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("the queue (--queue, a Redis URL as REDIS_URL takes it): %w", err)
	}
	return &redisQueue{c: c, keys: keysFor(name), name: name}, nil
}

func (q *redisQueue) Close() error { return q.c.Close() }

// claimScript records the list's account unless the survey's name already
// holds one, and returns the SHA-256 of the list the name holds.
var claimScript = redis.NewScript(`
local sha = redis.call('HGET', KEYS[1], 'sha256')
if sha then return sha end
redis.call('HSET', KEYS[1], unpack(ARGV))
return ARGV[2]`)

// load puts the list's sites into the stream, once: every entry's ID is
// its list line, and Redis refuses an ID not above the stream's last, so
// a loader that resumes after a crash (or races another loader) adds each
// line at most once, whoever adds it. It returns how many it added.
func (q *redisQueue) load(ctx context.Context, list string, m queueMeta) (int, error) {
	got, err := claimScript.Run(ctx, q.c, []string{q.keys.meta}, m.fields()...).Text()
	if err != nil {
		return 0, q.failed("record the list", err)
	}
	if got != m.List.SHA256 {
		return 0, fmt.Errorf("%w: the queue's survey %s holds another list (sha256 %.12s…; this one is %.12s…): give the same list, or another --survey name", ErrMismatch, q.name, got, m.List.SHA256)
	}
	if err := q.createGroup(ctx); err != nil {
		return 0, err
	}
	if loaded, err := q.c.HGet(ctx, q.keys.meta, "loaded").Result(); err == nil && loaded == "1" {
		return 0, nil
	} else if err != nil && !errors.Is(err, redis.Nil) {
		return 0, q.failed("read the survey's account", err)
	}
	xi, err := q.c.XInfoStream(ctx, q.keys.stream).Result()
	if err != nil {
		return 0, q.failed("read the stream", err)
	}
	after, _, _ := strings.Cut(xi.LastGeneratedID, "-")
	lastLine, _ := strconv.Atoi(after)

	f, err := os.Open(list)
	if err != nil {
		return 0, fmt.Errorf("the list cannot be read: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	src := newSource(io.TeeReader(f, h), Shard{})
	added, sites := 0, 0
	var batch []*redis.StringCmd
	pipe := q.c.Pipeline()
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		_, _ = pipe.Exec(ctx) // each command's error is read below
		for _, c := range batch {
			switch err := c.Err(); {
			case err == nil:
				added++
			case strings.Contains(err.Error(), "equal or smaller than the target stream top item"):
				// Another loader added this line first.
			default:
				return q.failed("load the list", err)
			}
		}
		batch = batch[:0]
		return nil
	}
	for {
		it, _, err := src.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return added, fmt.Errorf("the list cannot be read: %w", err)
		}
		if it == nil {
			continue
		}
		sites++
		if it.Line <= lastLine {
			continue
		}
		batch = append(batch, pipe.XAdd(ctx, &redis.XAddArgs{Stream: q.keys.stream, ID: strconv.Itoa(it.Line) + "-0",
			Values: []any{"url", it.URL, "rank", it.Rank}}))
		if len(batch) == loadBatch {
			if err := flush(); err != nil {
				return added, err
			}
		}
	}
	if err := flush(); err != nil {
		return added, err
	}
	if hex.EncodeToString(h.Sum(nil)) != m.List.SHA256 || sites != m.Sites {
		return added, fmt.Errorf("the list %s changed while it was being loaded: load it again once it stays as it is (the sites already loaded are kept)", m.List.Name)
	}
	if err := q.c.HSet(ctx, q.keys.meta, "loaded", "1").Err(); err != nil {
		return added, q.failed("record the loaded list", err)
	}
	return added, nil
}

func (q *redisQueue) createGroup(ctx context.Context) error {
	err := q.c.XGroupCreateMkStream(ctx, q.keys.stream, queueGroup, "0").Err()
	if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		return q.failed("create the workers' group", err)
	}
	return nil
}

// meta reads the survey's account; ok is false when Redis holds no survey
// of that name.
func (q *redisQueue) meta(ctx context.Context) (queueMeta, bool, error) {
	h, err := q.c.HGetAll(ctx, q.keys.meta).Result()
	if err != nil {
		return queueMeta{}, false, q.failed("read the survey's account", err)
	}
	if len(h) == 0 {
		return queueMeta{}, false, nil
	}
	m, err := parseMeta(h)
	return m, err == nil, err
}

// join makes this worker a member of the survey's consumer group.
func (q *redisQueue) join(ctx context.Context) error {
	if err := q.createGroup(ctx); err != nil {
		return err
	}
	if err := q.c.SAdd(ctx, q.keys.workers, q.worker).Err(); err != nil {
		return q.failed("join the survey", err)
	}
	return nil
}

// readOwn returns up to n of this worker's pending entries after the ID
// after: what it had read and not acknowledged when it stopped.
func (q *redisQueue) readOwn(ctx context.Context, after string, n int) ([]redis.XMessage, error) {
	return q.readGroup(ctx, after, n, -1)
}

// readNew returns up to n entries no worker has read, waiting up to block
// for the first.
func (q *redisQueue) readNew(ctx context.Context, n int, block time.Duration) ([]redis.XMessage, error) {
	return q.readGroup(ctx, ">", n, block)
}

func (q *redisQueue) readGroup(ctx context.Context, id string, n int, block time.Duration) ([]redis.XMessage, error) {
	res, err := q.c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: queueGroup, Consumer: q.worker,
		Streams: []string{q.keys.stream, id}, Count: int64(n), Block: block}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, q.failed("read the queue", err)
	}
	var out []redis.XMessage
	for _, s := range res {
		out = append(out, s.Messages...)
	}
	return out, nil
}

// claim takes over up to n entries other workers have held untouched for
// longer than claimIdle (XAUTOCLAIM, which also drops the pending records
// of entries deleted meanwhile).
func (q *redisQueue) claim(ctx context.Context, n int) ([]redis.XMessage, error) {
	var out []redis.XMessage
	start := "0-0"
	for range 10 {
		msgs, next, _, err := q.c.XAutoClaimWithDeleted(ctx, &redis.XAutoClaimArgs{Stream: q.keys.stream, Group: queueGroup,
			Consumer: q.worker, MinIdle: q.claimIdle, Start: start, Count: int64(n - len(out))}).Result()
		if err != nil {
			return out, q.failed("take over idle entries", err)
		}
		out = append(out, msgs...)
		if start = next; start == "0-0" || len(out) >= n {
			break
		}
	}
	return out, nil
}

// state is how many entries the stream still holds (not done by any
// worker) and whether the whole list was loaded.
func (q *redisQueue) state(ctx context.Context) (remaining int64, loaded bool, err error) {
	var xlen *redis.IntCmd
	var flag *redis.StringCmd
	_, err = q.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		xlen = p.XLen(ctx, q.keys.stream)
		flag = p.HGet(ctx, q.keys.meta, "loaded")
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return -1, false, q.failed("read the queue's length", err)
	}
	return xlen.Val(), flag.Val() == "1", nil
}

// ack marks entries done and deletes them, in one transaction: the
// stream's length is then the number of sites not done.
func (q *redisQueue) ack(ctx context.Context, ids []string) error {
	_, err := q.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.XAck(ctx, q.keys.stream, queueGroup, ids...)
		p.XDel(ctx, q.keys.stream, ids...)
		return nil
	})
	if err != nil {
		return q.failed("acknowledge results", err)
	}
	return nil
}

// renewScript resets the idle time of the entries this worker still holds
// (the ones another worker took over meanwhile stay with it), so that a
// live worker's entries are never taken over, however long they wait for
// their domain's turn.
var renewScript = redis.NewScript(`
local n = 0
for i = 3, #ARGV do
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1)
  if p[1] and p[1][2] == ARGV[2] then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
    n = n + 1
  end
end
return n`)

func (q *redisQueue) renew(ctx context.Context, ids []string) error {
	const batch = 1000
	for len(ids) > 0 {
		part := ids[:min(batch, len(ids))]
		ids = ids[len(part):]
		args := make([]any, 0, len(part)+2)
		args = append(args, queueGroup, q.worker)
		for _, id := range part {
			args = append(args, id)
		}
		if err := renewScript.Run(ctx, q.c, []string{q.keys.stream}, args...).Err(); err != nil {
			return q.failed("renew the entries this worker holds", err)
		}
	}
	return nil
}

// leaseScript takes a domain's lease when it is free or already this
// token's (a worker run again after a kill takes back its own entries).
var leaseScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v and v ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`)

// lease takes a registrable domain for one scan, across every worker of
// the survey: politeness holds across machines. The lease outlives the
// scan's deadline a little, so a killed worker's lease lapses by itself.
func (q *redisQueue) lease(ctx context.Context, site, token string) (bool, error) {
	n, err := leaseScript.Run(ctx, q.c, []string{q.keys.lease + site}, token, q.leaseTTL.Milliseconds()).Int()
	if err != nil {
		return false, q.failed("take a domain's turn", err)
	}
	return n == 1, nil
}

var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

func (q *redisQueue) release(ctx context.Context, site, token string) error {
	if err := releaseScript.Run(ctx, q.c, []string{q.keys.lease + site}, token).Err(); err != nil {
		return q.failed("give a domain's turn back", err)
	}
	return nil
}

// finish is called by a worker that found the queue empty: it reads the
// workers' names and lets the survey's keys expire after finishedTTL.
func (q *redisQueue) finish(ctx context.Context) ([]string, error) {
	var members *redis.StringSliceCmd
	_, err := q.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		members = p.SMembers(ctx, q.keys.workers)
		for _, k := range []string{q.keys.stream, q.keys.meta, q.keys.workers} {
			p.Expire(ctx, k, finishedTTL)
		}
		return nil
	})
	if err != nil {
		return nil, q.failed("record the end of the survey", err)
	}
	return members.Val(), nil
}

// failed words a Redis error for the user: what the worker was doing, and
// go-redis's first line when Redis answered (an error reply names no
// address), or only that it did not answer.
func (q *redisQueue) failed(doing string, err error) error {
	var answered redis.Error
	if errors.As(err, &answered) {
		msg := strings.SplitN(err.Error(), "\n", 2)[0]
		switch {
		case strings.HasPrefix(msg, "NOGROUP"):
			msg = "the survey's stream or group is gone (deleted, or expired 30 days after the survey finished)"
		case strings.HasPrefix(msg, "MOVED"), strings.HasPrefix(msg, "ASK"):
			// These name a node's address: say what happened, not where.
			msg = "the Redis Cluster kept redirecting the call (its slots are moving); retry"
		}
		return &queueError{fmt.Sprintf("Redis refused to %s for survey %s: %s", doing, q.name, msg)}
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return &queueError{fmt.Sprintf("Redis did not answer when asked to %s for survey %s (is it running, and is the --queue URL right?)", doing, q.name)}
}

// queueError is a failed Redis call: the worker may stop, and its next run
// continues.
type queueError struct{ msg string }

func (e *queueError) Error() string { return e.msg }

// DeleteQueue deletes the survey name's keys from the Redis at url (its
// entries, its list's account, its workers' names); the domains' leases
// lapse by themselves within a site's timeout. The workers' output
// directories are untouched.
func DeleteQueue(ctx context.Context, url, name string) error {
	if err := CheckQueueName(name); err != nil {
		return err
	}
	q, err := dialQueue(ctx, url, name)
	if err != nil {
		return err
	}
	defer q.Close()
	if err := q.c.Del(ctx, q.keys.stream, q.keys.meta, q.keys.workers).Err(); err != nil {
		return q.failed("delete the survey", err)
	}
	return nil
}
