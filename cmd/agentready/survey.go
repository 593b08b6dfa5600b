package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/internal/version"
	"github.com/agentready/agentready/survey"
)

// surveyCmd runs `agentready survey` and `agentready survey merge`.
func surveyCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "merge" {
		return surveyMergeCmd(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("survey", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := fs.String("in", "", "the list: one domain or URL per line, or rank,domain CSV")
	out := fs.String("out", "", "the output directory (resumed when it holds this survey)")
	concurrency := fs.Int("concurrency", survey.DefaultConcurrency(), "sites scanned at once")
	timeout := fs.Duration("timeout", 20*time.Second, "deadline of each site's scan")
	shardFlag := fs.String("shard", "0/1", "this machine's share of the list, I/N with 0 ≤ I < N")
	contact := fs.String("contact", "", "a URL (or mailto:) in the User-Agent where site operators reach you")
	allowPrivate := fs.Bool("allow-private", false, "allow loopback and private addresses and any port")
	allowList := fs.String("allow", os.Getenv("AGENTREADY_ALLOW"), "admit exactly these non-public addresses (env AGENTREADY_ALLOW)")
	queueURL := fs.String("queue", os.Getenv("AGENTREADY_SURVEY_QUEUE"), "pull the sites from a survey kept in this Redis, redis://… (env AGENTREADY_SURVEY_QUEUE)")
	surveyName := fs.String("survey", "", "with --queue: the survey's name in Redis (default: the list's SHA-256)")
	workerName := fs.String("worker", "", "with --queue: this worker's name (default: hostname-pid-random, kept in DIR)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "agentready survey: "+format+"\n", a...)
		return exitUsage
	}
	switch {
	case len(pos) > 0:
		return fail("unexpected argument %q: the list is given with --in LIST", pos[0])
	case *queueURL == "" && (*surveyName != "" || *workerName != ""):
		return fail("--survey and --worker name a survey kept in Redis: give its --queue too")
	case *queueURL != "" && *out == "":
		return fail("give this worker's output directory: agentready survey --queue URL --in LIST --out DIR")
	case *queueURL != "" && *in == "" && *surveyName == "":
		return fail("give the list (--in LIST: loaded once, whoever loads it first) or the survey's name (--survey NAME)")
	case *queueURL == "" && (*in == "" || *out == ""):
		return fail("give the list and the output directory: agentready survey --in LIST --out DIR")
	case *concurrency < 1 || *concurrency > 4096:
		return fail("--concurrency must be 1–4096")
	case *timeout <= 0:
		return fail("--timeout must be positive")
	}
	shard, err := survey.ParseShard(*shardFlag)
	if err != nil {
		return fail("--shard: %v", err)
	}
	var queue *survey.QueueConfig
	if *queueURL != "" {
		if !shard.Whole() {
			return fail("--shard and --queue do not go together: a queue's workers share the whole list as they go")
		}
		if *surveyName != "" {
			if err := survey.CheckQueueName(*surveyName); err != nil {
				return fail("--survey: %v", err)
			}
		}
		if *workerName != "" {
			if err := survey.CheckWorkerName(*workerName); err != nil {
				return fail("--worker: %v", err)
			}
		}
		queue = &survey.QueueConfig{URL: *queueURL, Survey: *surveyName, Worker: *workerName}
		// The worker says itself when Redis fails, without go-redis's log
		// lines (which name addresses).
		redis.SetLogger(quietRedis{})
	}
	who := survey.DefaultContact
	if *contact != "" {
		if err := survey.CheckContact(*contact); err != nil {
			return fail("--contact: %v", err)
		}
		who = *contact
	}
	allow, err := fetch.ParseAllowList(*allowList)
	if err != nil {
		return fail("--allow (AGENTREADY_ALLOW): %v", err)
	}
	version := version.String()
	policy := fetch.AddressPolicy{AllowPrivate: *allowPrivate, AllowAnyPort: *allowPrivate, Allow: allow}
	cfg := survey.Config{
		List: *in, Out: *out, Shard: shard, Concurrency: *concurrency, Timeout: *timeout, Version: version, Queue: queue,
		Notice: func(msg string) { fmt.Fprintf(stderr, "agentready survey: %s\n", msg) },
		Engine: engine.Options{Fetch: fetch.Config{Policy: policy, UserAgent: survey.UserAgent(version, who)}},
	}
	if *contact == "" {
		fmt.Fprintf(stderr, "agentready survey: no --contact given: sites see %s in the User-Agent, which says what agentready is but not how to reach you\n", survey.DefaultContact)
	}
	prog := &surveyProgress{w: stderr, tty: isTTY(stderr)}
	cfg.Progress = prog.update
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sum, err := survey.Run(ctx, cfg)
	prog.clear()
	switch {
	case errors.Is(err, survey.ErrMismatch):
		return fail("%v", err)
	case err != nil && sum == nil:
		return fail("%v", err)
	case err != nil:
		fmt.Fprintf(stderr, "agentready survey: %v\nThe results written so far are kept: run the same command to continue.\n", err)
		return exitScanFailed
	case sum.Interrupted && sum.Queue != nil:
		fmt.Fprintf(stderr, "agentready survey: interrupted after this worker wrote %d results; run the same command to continue (the entries it held go back to it, or to another worker after %s)\n", sum.Done, sum.Queue.ClaimIdle)
		return exitCanceled
	case sum.Interrupted:
		fmt.Fprintf(stderr, "agentready survey: interrupted with %d of %d sites done; run the same command to continue\n", sum.Done, sum.Total)
		return exitCanceled
	case sum.Queue != nil:
		fmt.Fprintf(stdout, "Worker %s of survey %s wrote %d results (%d in this run); every site of the survey's %d is done.\n",
			sum.Queue.Worker, sum.Queue.Survey, sum.Done, sum.Done-sum.Resumed, sum.Total)
		fmt.Fprintf(stdout, "Merge every worker's directory into the report: agentready survey merge DIR... --out DIR\n")
		return exitOK
	}
	printAdoption(stdout, stderr, sum.Adoption, *out)
	printShard(stdout, shard, sum)
	return exitOK
}

// printShard says what a run of one shard did with the list: how many of
// its entries were this shard's, and, for a shard that had none, that it
// had nothing to scan (rather than a bare "Surveyed 0 sites").
func printShard(w io.Writer, shard survey.Shard, sum *survey.Summary) {
	switch {
	case shard.Whole() && sum.Total == 0:
		fmt.Fprintf(w, "The list names no site to scan.\n")
	case shard.Whole():
	case sum.Total == 0 && sum.Elsewhere == 0:
		fmt.Fprintf(w, "Shard %s had nothing to scan: the list names no site.\n", shard)
	case sum.Total == 0:
		which := fmt.Sprintf("all %d of the list's entries belong to other shards", sum.Elsewhere)
		if sum.Elsewhere == 1 {
			which = "the list's only entry belongs to another shard"
		}
		fmt.Fprintf(w, "Shard %s had nothing to scan: %s (a site's shard is the hash of its registrable domain, or of host:port for an IP address or localhost). Its directory holds an empty result for merge.\n",
			shard, which)
	default:
		fmt.Fprintf(w, "Shard %s: %d %s of the list; %d of its entries belong to other shards.\n", shard, sum.Total, plural(sum.Total, "site", "sites"), sum.Elsewhere)
	}
	if !shard.Whole() {
		fmt.Fprintf(w, "Once every shard is done, add them up: agentready survey merge DIR... --out DIR\n")
	}
}

func surveyMergeCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("survey merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "the directory of the merged report")
	dirs, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	if len(dirs) == 0 || *out == "" {
		fmt.Fprintln(stderr, "agentready survey merge: give the shards' directories and the output: agentready survey merge DIR... --out DIR")
		return exitUsage
	}
	ad, err := survey.Merge(dirs, *out)
	if err != nil {
		fmt.Fprintf(stderr, "agentready survey merge: %v\n", err)
		return exitUsage
	}
	printAdoption(stdout, stderr, ad, *out)
	printMerged(stdout, ad)
	return exitOK
}

// printMerged says what a merge added up: each shard and its sites, or
// each worker of a queue's survey.
func printMerged(w io.Writer, ad *survey.Adoption) {
	m := ad.Methods
	parts := make([]string, len(m.Shards))
	if m.Settings.Queue != "" {
		for i, s := range m.Shards {
			parts[i] = s.Settings.Worker
		}
		fmt.Fprintf(w, "Merged %d workers of survey %s (list %s): %s.\n", len(m.Shards), m.Settings.Queue, m.List.Name, strings.Join(parts, ", "))
		return
	}
	for i, s := range m.Shards {
		parts[i] = fmt.Sprintf("%s (%d %s)", s.Settings.Shard, s.Sites, plural(s.Sites, "site", "sites"))
	}
	fmt.Fprintf(w, "Merged %d shards of %s: %s.\n", len(m.Shards), m.List.Name, strings.Join(parts, ", "))
}

type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

// printAdoption is the closing summary: where the reports are, and the
// headline numbers. A survey whose sites the address policy refused (a
// list of local sites run without --allow-private or --allow) says so on
// stdout and tells what to do on stderr; it still exits 0, since its
// report is complete (docs/survey.md).
func printAdoption(w, stderr io.Writer, ad *survey.Adoption, dir string) {
	fmt.Fprintf(w, "Surveyed %d sites: %d judged, %d unreachable, %d duplicate and %d invalid lines skipped.\n",
		ad.Listed, ad.Sites, ad.Unreachable, ad.Skipped.Duplicates, ad.Skipped.Invalid)
	if n := ad.Refused(); n > 0 {
		fmt.Fprintf(w, "Refused by the address policy (not a public address): %d of the %d unreachable.\n", n, ad.Unreachable)
	}
	fmt.Fprintf(w, "Levels 0–3: %s\n", levelWords(ad.Levels))
	fmt.Fprintf(w, "Reports: %s, %s, %s\n", filepath.Join(dir, survey.AdoptionFile), filepath.Join(dir, survey.HTMLFile), filepath.Join(dir, survey.MarkdownFile))
	if hint := ad.RefusalHint(); hint != "" {
		fmt.Fprintf(stderr, "agentready survey: %s. The exit status stays 0: the survey and its report are complete.\n", hint)
	}
}

// levelWords is "7 at level 0, 0 at 1, 0 at 2, 1 at 3".
func levelWords(levels []int) string {
	parts := make([]string, len(levels))
	for i, n := range levels {
		if i == 0 {
			parts[i] = fmt.Sprintf("%d at level %d", n, i)
		} else {
			parts[i] = fmt.Sprintf("%d at %d", n, i)
		}
	}
	return strings.Join(parts, ", ")
}

// surveyProgress shows a survey's progress on stderr: a live line on a
// terminal, a plain line a minute otherwise.
type surveyProgress struct {
	w     io.Writer
	tty   bool
	last  time.Time
	shown bool
}

func (p *surveyProgress) update(pr survey.Progress) {
	now := time.Now()
	every := time.Minute
	if p.tty {
		every = 250 * time.Millisecond
	}
	switch {
	case p.last.IsZero() && !pr.Final:
		// A terminal shows the line at once; a log waits a minute.
		p.last = now
		if !p.tty {
			return
		}
	case !pr.Final && now.Sub(p.last) < every:
		return
	}
	p.last = now
	line := progressLine(pr, now)
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.shown = true
		return
	}
	if !pr.Final || pr.Done > pr.Resumed {
		fmt.Fprintln(p.w, line)
	}
}

func (p *surveyProgress) clear() {
	if p.tty && p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

func progressLine(pr survey.Progress, now time.Time) string {
	var b strings.Builder
	elapsed := now.Sub(pr.Started).Seconds()
	if pr.Queue {
		// This worker's count and rate; the queue's length, and the time
		// left at the rate all workers together drain it.
		fmt.Fprintf(&b, "survey: %d sites by this worker", pr.Done)
		if n := pr.Done - pr.Resumed; n > 0 && elapsed > 0 {
			fmt.Fprintf(&b, " · %.1f/s", float64(n)/elapsed)
		}
		if pr.Remaining >= 0 {
			fmt.Fprintf(&b, " · %d of %d left in the queue", pr.Remaining, pr.Total)
			if drained := pr.RemainingAtStart - pr.Remaining; drained > 0 && pr.Remaining > 0 && elapsed > 0 {
				fmt.Fprintf(&b, " · ETA %s", (time.Duration(float64(pr.Remaining)/(float64(drained)/elapsed)) * time.Second).Round(time.Second))
			}
		}
	} else {
		fmt.Fprintf(&b, "survey: %d/%d sites", pr.Done, pr.Total)
		if n := pr.Done - pr.Resumed; n > 0 && elapsed > 0 {
			rate := float64(n) / elapsed
			fmt.Fprintf(&b, " · %.1f/s", rate)
			if left := pr.Total - pr.Done; left > 0 {
				fmt.Fprintf(&b, " · ETA %s", (time.Duration(float64(left)/rate) * time.Second).Round(time.Second))
			}
		}
	}
	if len(pr.Errors) > 0 {
		keys := make([]string, 0, len(pr.Errors))
		total := 0
		for k, n := range pr.Errors {
			keys = append(keys, k)
			total += n
		}
		sort.Slice(keys, func(i, j int) bool {
			return pr.Errors[keys[i]] > pr.Errors[keys[j]] || (pr.Errors[keys[i]] == pr.Errors[keys[j]] && keys[i] < keys[j])
		})
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s %d", k, pr.Errors[k])
		}
		fmt.Fprintf(&b, " · %d unreachable (%s)", total, strings.Join(parts, ", "))
	}
	return b.String()
}
