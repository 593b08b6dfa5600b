package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/fetch"
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
	version := buildVersion()
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
	printAdoption(stdout, sum.Adoption, *out)
	return exitOK
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
	printAdoption(stdout, ad, *out)
	return exitOK
}

type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

// printAdoption is the closing summary: where the reports are, and the
// headline numbers.
func printAdoption(w io.Writer, ad *survey.Adoption, dir string) {
	fmt.Fprintf(w, "Surveyed %d sites: %d judged, %d unreachable, %d duplicate and %d invalid lines skipped.\n",
		ad.Listed, ad.Sites, ad.Unreachable, ad.Skipped.Duplicates, ad.Skipped.Invalid)
	fmt.Fprintf(w, "Levels 0–3: %v\n", ad.Levels)
	fmt.Fprintf(w, "Reports: %s/%s, %s/%s, %s/%s\n", dir, survey.AdoptionFile, dir, survey.HTMLFile, dir, survey.MarkdownFile)
}

// buildVersion is agentready's version as the binary knows it: the module
// version of a release build, else "devel" with the commit when known.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "devel-" + s.Value[:12]
		}
	}
	return "devel"
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
