package survey

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/agentready/agentready/apierr"
	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/report"
)

// Config is one survey run.
type Config struct {
	List  string // the list file
	Out   string // the output directory (created; resumed when it holds this survey)
	Shard Shard
	// Concurrency is how many sites are scanned at once; 0 is
	// DefaultConcurrency.
	Concurrency int
	// Timeout bounds each site's scan (engine.Options.Deadline); 0 is 20 s.
	Timeout time.Duration
	// Engine configures the scanner: the fetcher's address policy, resolver,
	// limits and User-Agent (see UserAgent). Its Deadline is Timeout.
	Engine  engine.Options
	Version string // agentready's, for the methods
	// Progress, when set, is called after results are written and about
	// once a second, from one goroutine.
	Progress func(Progress)
	// Queue, when set, makes this run one worker of a survey whose list is
	// kept in Redis (queue.go): List, when given, is loaded there once;
	// the worker pulls sites until every site of the list is done.
	Queue *QueueConfig
	// Notice, when set, is told what a queue's worker did that its user
	// should know (the list loaded, or found loaded; entries taken over).
	Notice func(string)
}

// DefaultConcurrency is 32 scans per CPU (at least 16, at most 512): a scan
// spends most of its time waiting for the network, and a small site costs
// about 10 ms of CPU, so this keeps the CPUs busy on real-world latencies
// (docs/survey.md).
func DefaultConcurrency() int { return min(max(32*runtime.GOMAXPROCS(0), 16), 512) }

// Progress is the state of a running survey.
type Progress struct {
	Total   int            // distinct sites of the shard
	Done    int            // results written, earlier runs included
	Resumed int            // results written before this run started
	Running int            // scans under way
	Errors  map[string]int // unreachable sites by code/cause, earlier runs included
	Started time.Time      // this run's start
	Final   bool           // the last call of this run
	// Queue: this is a queue's worker. Total is then the whole list's
	// sites, Done the results this worker wrote, and Remaining the sites
	// of the queue not done yet by any worker (-1 before Redis said), of
	// which there were RemainingAtStart when this run first asked.
	Queue                       bool
	Remaining, RemainingAtStart int64
}

// Summary is what a run did.
type Summary struct {
	Total, Done, Resumed int
	// Elsewhere is how many of the list's entries (lines naming a site,
	// duplicates included) belong to other shards: with Total 0, a shard
	// that had nothing to scan can say why.
	Elsewhere int
	// Interrupted: the context ended first; the same command resumes.
	Interrupted bool
	Adoption    *Adoption // nil when interrupted, and for a queue's worker
	// Queue is what a queue's worker did (nil for a shard).
	Queue *QueueSummary
}

// ErrMismatch is wrapped by the error of a run whose output directory
// holds another survey (another list or shard).
var ErrMismatch = errors.New("the output directory holds another survey")

func (c Config) withDefaults() Config {
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency()
	}
	if c.Timeout <= 0 {
		c.Timeout = 20 * time.Second
	}
	c.Shard = c.Shard.norm()
	c.Engine.Deadline = c.Timeout
	if c.Queue != nil {
		q := *c.Queue
		if q.ClaimIdle <= 0 {
			q.ClaimIdle = c.Timeout + claimMargin
		}
		c.Queue = &q
	}
	return c
}

// reorderWindow is how far past the first unwritten site the survey may
// start scans: results are written in list order (so the number of lines
// is the resume point), and a slow site holds back at most this many
// finished ones, about 1.5 KB each.
func reorderWindow(concurrency int) int { return 32 * concurrency }

// Run surveys cfg.List into cfg.Out, resuming what a previous run of the
// same survey wrote, and writes the adoption reports when every site is
// done. Canceling ctx stops it cleanly (Summary.Interrupted); so does
// killing the process, at any moment: the next run continues.
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	cfg = cfg.withDefaults()
	if cfg.Queue != nil {
		return runWorker(ctx, cfg)
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, fmt.Errorf("the output directory cannot be created: %w", err)
	}
	// Before anything is written: two runs appending to one results file
	// would interleave their lines.
	lock, err := lockDir(cfg.Out)
	if err != nil {
		return nil, err
	}
	defer lock.unlock()
	info, total, _, elsewhere, err := prepassShard(cfg.List, cfg.Shard, filepath.Join(cfg.Out, SkippedFile))
	if err != nil {
		return nil, err
	}
	sc := engine.New(cfg.Engine)
	settings := settingsOf(cfg, sc)
	settings.Shard = cfg.Shard.String()
	man, err := startManifest(cfg, info, total, settings)
	if err != nil {
		return nil, err
	}
	resultsPath := filepath.Join(cfg.Out, ResultsFile)
	f, done, lastLine, err := resume(resultsPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if done > total {
		return nil, fmt.Errorf("%w: %s holds %d results, more than the %d sites of shard %s of %s; use a new --out", ErrMismatch, resultsPath, done, total, cfg.Shard, info.Name)
	}
	errCounts, err := countErrors(resultsPath, done)
	if err != nil {
		return nil, err
	}
	sum := &Summary{Total: total, Done: done, Resumed: done, Elsewhere: elsewhere}
	if cfg.Notice != nil && done > 0 {
		if done < total {
			cfg.Notice(fmt.Sprintf("Resuming: %s of %s sites done; continuing with the rest", num(done), num(total)))
		} else {
			cfg.Notice(fmt.Sprintf("All %s sites were done by an earlier run; writing the reports again", num(total)))
		}
	}
	if done < total {
		if err := scanAll(ctx, cfg, sc, f, done, lastLine, total, errCounts, sum); err != nil {
			return sum, err
		}
		if sum.Interrupted {
			return sum, nil
		}
	} else if cfg.Progress != nil {
		cfg.Progress(Progress{Total: total, Done: done, Resumed: done, Errors: errCounts, Started: time.Now(), Final: true})
	}
	if err := f.Close(); err != nil {
		return sum, err
	}
	if man.Finished == nil {
		now := time.Now().UTC().Truncate(time.Second)
		man.Finished = &now
		if err := writeManifest(cfg.Out, man); err != nil {
			return sum, err
		}
	}
	ad, err := Report(cfg.Out)
	sum.Adoption = ad
	return sum, err
}

// settingsOf is what the manifest records of the run's settings, as the
// scanner resolved them; the caller adds the shard or the queue.
func settingsOf(cfg Config, sc *engine.Scanner) Settings {
	fc := sc.Options().Fetch
	return Settings{Concurrency: cfg.Concurrency, Timeout: cfg.Timeout.String(),
		RequestTimeout: fc.RequestTimeout.String(), PerHost: fc.PerHost, UserAgent: fc.UserAgent,
		AllowPrivate: fc.Policy.AllowPrivate, Allow: fc.Policy.Allow.String()}
}

// prepass reads the whole list once: its hash, how many sites the shard
// holds, and every line it skips (rewritten whole on every run, so a
// resumed survey lists each once).
func prepass(list string, shard Shard, skippedPath string) (ListInfo, int, SkipCounts, error) {
	info, total, counts, _, err := prepassShard(list, shard, skippedPath)
	return info, total, counts, err
}

// prepassShard is prepass, also counting the entries that belong to other
// shards.
func prepassShard(list string, shard Shard, skippedPath string) (ListInfo, int, SkipCounts, int, error) {
	var counts SkipCounts
	f, err := os.Open(list)
	if err != nil {
		return ListInfo{}, 0, counts, 0, fmt.Errorf("the list cannot be read: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return ListInfo{}, 0, counts, 0, fmt.Errorf("the list %s is not a regular file: a survey reads it more than once (to resume), so give a file", list)
	}
	h := sha256.New()
	src := newSource(io.TeeReader(f, h), shard)
	var skipped bytesBuffer
	total := 0
	for {
		_, skip, err := src.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return ListInfo{}, 0, counts, 0, fmt.Errorf("the list cannot be read: %w", err)
		}
		if skip != nil {
			b, _ := json.Marshal(skip)
			skipped.line(b)
			if skip.Reason == SkipDuplicate {
				counts.Duplicates++
			} else {
				counts.Invalid++
			}
			continue
		}
		total++
	}
	if err := writeFileAtomic(skippedPath, skipped.b); err != nil {
		return ListInfo{}, 0, counts, 0, err
	}
	return ListInfo{Name: filepath.Base(list), SHA256: hex.EncodeToString(h.Sum(nil)), Format: src.lr.Format(), Lines: src.lr.line}, total, counts, src.elsewhere, nil
}

// bytesBuffer collects the skipped lines; a list's invalid and duplicate
// lines are few next to its sites.
type bytesBuffer struct{ b []byte }

func (b *bytesBuffer) line(l []byte) { b.b = append(append(b.b, l...), '\n') }

func startManifest(cfg Config, info ListInfo, total int, s Settings) (*Manifest, error) {
	old, err := readManifest(cfg.Out)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if _, serr := os.Stat(filepath.Join(cfg.Out, ResultsFile)); serr == nil {
			return nil, fmt.Errorf("%w: %s has results but no %s; use a new --out", ErrMismatch, cfg.Out, ManifestFile)
		}
		m := &Manifest{Version: cfg.Version, List: info, Sites: total, Settings: s, Started: time.Now().UTC().Truncate(time.Second), Runs: 1}
		return m, writeManifest(cfg.Out, m)
	case err != nil:
		return nil, err
	case old.Settings.Queue != "":
		return nil, fmt.Errorf("%w: %s holds worker %s of the queue's survey %s; use a new --out for a survey of this machine alone", ErrMismatch, cfg.Out, old.Settings.Worker, old.Settings.Queue)
	case old.List.SHA256 != info.SHA256:
		return nil, fmt.Errorf("%w: %s surveys a list with another content (%s, sha256 %.12s…, now %.12s…); use a new --out for a new list", ErrMismatch, cfg.Out, old.List.Name, old.List.SHA256, info.SHA256)
	case old.Settings.Shard != s.Shard:
		return nil, fmt.Errorf("%w: %s surveys shard %s, not %s; use a new --out for another shard", ErrMismatch, cfg.Out, old.Settings.Shard, s.Shard)
	}
	if old.Finished != nil {
		return old, nil // nothing left to scan: only the reports are made again
	}
	old.Runs++
	old.Version, old.Settings, old.List, old.Sites = cfg.Version, s, info, total
	return old, writeManifest(cfg.Out, old)
}

// countErrors reads the error counts of the first n results back, for the
// progress of a resumed run.
func countErrors(path string, n int) (map[string]int, error) {
	out := map[string]int{}
	if n == 0 {
		return out, nil
	}
	i := 0
	err := eachResult(path, func(r *Result) error {
		if i++; i > n {
			return io.EOF
		}
		if r.Error != "" {
			out[errorKey(r)]++
		}
		return nil
	})
	if err == io.EOF {
		err = nil
	}
	return out, err
}

func errorKey(r *Result) string {
	if r.Cause != "" {
		return r.Error + "/" + r.Cause
	}
	return r.Error
}

type pending struct {
	seq int
	Item
}

type outcome struct {
	seq      int
	site     string
	line     []byte
	errKey   string
	canceled bool
}

// scanAll scans the sites after the first done, writing their results in
// list order.
func scanAll(ctx context.Context, cfg Config, sc *engine.Scanner, f *os.File, done, lastLine, total int, errCounts map[string]int, sum *Summary) error {
	list, err := os.Open(cfg.List)
	if err != nil {
		return fmt.Errorf("the list cannot be read: %w", err)
	}
	defer list.Close()
	s := newScheduler[pending, outcome](ctx, cfg, newResultWriter(f), sum, errCounts)
	l := &localRun{s: s, sc: sc, items: make(chan Item, 256), reorder: map[int]outcome{},
		nextSeq: done, window: reorderWindow(cfg.Concurrency)}
	go l.read(newSource(list, cfg.Shard), done, lastLine)
	if err := s.run(ctx, l); err != nil {
		return err
	}
	if sum.Done < total {
		if ctx.Err() != nil {
			sum.Interrupted = true
			return nil
		}
		return fmt.Errorf("the list yielded %d sites on this pass and %d on the first: was it changed during the survey? Run the survey again to check", sum.Done, total)
	}
	return nil
}

// localRun is the driver of a survey of one machine: the sites come from
// the list, in order, and their results are written in that order, which
// makes the number of lines the point a later run resumes from.
type localRun struct {
	s       *scheduler[pending, outcome]
	sc      *engine.Scanner
	items   chan Item
	eof     bool
	reorder map[int]outcome // finished scans waiting for the ones before them
	nextSeq int             // the next site's place in the shard
	window  int             // reorderWindow
}

// read sends the shard's sites after the first done to l.items, checking
// that the last one done is on the line the results file says.
func (l *localRun) read(src *source, done, lastLine int) {
	defer close(l.items)
	n := 0
	for {
		it, _, err := src.next()
		if err == io.EOF {
			return
		}
		if err != nil {
			l.fail(fmt.Errorf("the list cannot be read: %w", err))
			return
		}
		if it == nil {
			continue
		}
		if n++; n <= done {
			if n == done && it.Line != lastLine {
				l.fail(fmt.Errorf("%w: the last result in %s is for list line %d, but the list's site number %d is on line %d; use a new --out", ErrMismatch, ResultsFile, lastLine, done, it.Line))
				return
			}
			continue
		}
		select {
		case l.items <- *it:
		case <-l.s.ctx.Done():
			return
		}
	}
}

func (l *localRun) fail(err error) { l.s.post(func() { l.s.stop(err) }) }

// input holds the list back while the scans run more than the reorder
// window ahead of the first result not written.
func (l *localRun) input() <-chan Item {
	if l.nextSeq >= l.s.sum.Done+l.window {
		return nil
	}
	return l.items
}

func (l *localRun) receive(it Item, ok bool) {
	if !ok {
		l.eof = true
		return
	}
	l.s.add(pending{seq: l.nextSeq, Item: it})
	l.nextSeq++
}

func (l *localRun) scan(ctx context.Context, p pending) outcome { return scanOne(ctx, l.sc, p) }

// done writes the results that are next in list order.
func (l *localRun) done(_ pending, o outcome) {
	s := l.s
	if o.canceled {
		return
	}
	l.reorder[o.seq] = o
	wrote := false
	for {
		next, ok := l.reorder[s.sum.Done]
		if !ok {
			break
		}
		delete(l.reorder, s.sum.Done)
		if err := s.out.write(next.line); err != nil {
			s.stop(err)
		}
		if next.errKey != "" {
			s.errCounts[next.errKey]++
		}
		s.sum.Done++
		wrote = true
	}
	s.sync()
	if wrote {
		s.progress(false)
	}
}

func (l *localRun) pump(time.Time)     {}
func (l *localRun) synced(bool)        {}
func (l *localRun) idle() bool         { return true }
func (l *localRun) exhausted() bool    { return l.eof }
func (l *localRun) progress(*Progress) {}

// resultWriter appends lines and fsyncs them in small batches: a line the
// process had no time to sync is lost at worst, never half-kept (resume
// cuts a torn end), and is scanned again.
type resultWriter struct {
	f        *os.File
	bw       *bufio.Writer
	unsynced int
	lastSync time.Time
}

func newResultWriter(f *os.File) *resultWriter {
	return &resultWriter{f: f, bw: bufio.NewWriterSize(f, 64<<10), lastSync: time.Now()}
}

const (
	syncLines = 64
	syncEvery = time.Second
)

func (w *resultWriter) write(line []byte) error {
	if _, err := w.bw.Write(line); err != nil {
		return err
	}
	w.unsynced++
	return w.bw.WriteByte('\n')
}

func (w *resultWriter) maybeSync() error {
	if w.unsynced >= syncLines || (w.unsynced > 0 && time.Since(w.lastSync) >= syncEvery) {
		return w.sync()
	}
	return nil
}

func (w *resultWriter) sync() error {
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", ResultsFile, err)
	}
	if w.unsynced > 0 {
		if err := w.f.Sync(); err != nil {
			return fmt.Errorf("writing %s: %w", ResultsFile, err)
		}
	}
	w.unsynced, w.lastSync = 0, time.Now()
	return nil
}

// requestsMade is how many requests of a scan went out. The fetcher
// records every request it tried, including those the address policy
// refused before any connection: a site refused outright made none, and a
// site that redirected to a refused address made only the requests that
// were answered.
func requestsMade(stats *engine.Stats, err error) int {
	var fe *fetch.Error
	if err != nil && errors.As(err, &fe) && Refused(string(fe.Kind)) {
		n := 0
		for _, r := range stats.Records {
			if r.Status != 0 {
				n++
			}
		}
		return n
	}
	return stats.Requests
}

// Refused reports whether a fetch error kind (a result's Cause) is the
// address policy's refusal, which --allow-private or --allow lift.
func Refused(cause string) bool {
	return cause == string(fetch.KindBlocked) || cause == string(fetch.KindNotPublic)
}

// scanOne scans a site and encodes its result line; a scan the survey's
// own cancellation cut short is not a result.
func scanOne(ctx context.Context, sc *engine.Scanner, p pending) outcome {
	o := outcome{seq: p.seq, site: p.Site}
	res, stats, err := sc.ScanWithStats(ctx, p.URL, nil)
	if ctx.Err() != nil {
		o.canceled = true
		return o
	}
	r := Result{Line: p.Line, URL: p.URL, Rank: p.Rank}
	if stats != nil {
		r.Requests, r.Duration = requestsMade(stats, err), stats.Duration.Milliseconds()
	}
	if err != nil {
		var se *apierr.Error
		if !errors.As(err, &se) {
			se = &apierr.Error{Code: apierr.Internal, Message: "the scan failed unexpectedly (a bug in the scanner)"}
		}
		r.Error, r.Message = string(se.Code), se.Message
		var fe *fetch.Error
		if errors.As(err, &fe) {
			r.Cause = string(fe.Kind)
		}
		r.Timestamp = sc.Options().Now().UTC().Truncate(time.Second)
		o.errKey = errorKey(&r)
	} else {
		r.Timestamp = res.Timestamp
		score, level := res.Score.Value, res.CurrentLevel
		r.Score, r.Level = &score, &level
		r.Checks = statusesOf(res.Checks)
		r.Signals = make(Statuses, len(res.Signals))
		for i, s := range res.Signals {
			r.Signals[i] = IDStatus{s.ID, s.Status}
		}
		if res.Read != nil {
			r.Read = statusesOf(res.Read.Checks)
		}
		if res.Profile != nil {
			r.Profile = res.Profile.Detected
		}
		if stats.FinalURL != "" && stats.FinalURL != p.URL {
			r.FinalURL = stats.FinalURL
		}
	}
	o.line, _ = json.Marshal(r)
	return o
}

// statusesOf is each check's id and status, in order.
func statusesOf(checks []report.Check) Statuses {
	out := make(Statuses, len(checks))
	for i, c := range checks {
		out[i] = IDStatus{c.ID, c.Status}
	}
	return out
}
