package survey_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agentready/agentready/internal/testing/synthweb"
	"github.com/agentready/agentready/origin/store"
	"github.com/agentready/agentready/survey"
)

// queueWorker makes cfg a worker of the survey name kept in the Redis at
// url. A site's timeout is 8 s (the synthetic sites these tests list answer
// within 1 s even under the race detector), and another worker's entries
// are taken over after 9 s untouched, so a killed worker's entries are
// taken over within seconds.
func queueWorker(cfg survey.Config, url, name string) survey.Config {
	cfg.Timeout = 8 * time.Second
	cfg.Queue = &survey.QueueConfig{URL: url, Survey: name, ClaimIdle: 9 * time.Second}
	return cfg
}

// newSurveyName is a survey name of the test's own, deleted from Redis at
// its end.
func newSurveyName(t *testing.T, url string) string {
	t.Helper()
	name := fmt.Sprintf("test-%s-%d", strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()), time.Now().UnixNano())
	name = name[max(0, len(name)-100):]
	name = strings.TrimLeft(name, "-")
	t.Cleanup(func() {
		if err := survey.DeleteQueue(context.Background(), url, name); err != nil {
			t.Errorf("deleting the survey: %v", err)
		}
	})
	return name
}

// cutTornTail cuts what follows the last newline of dir's results: a
// worker killed with SIGKILL can die between two writes of a line (its
// writer is buffered), as the worker's own resume expects. It returns
// whether there was such a torn line.
func cutTornTail(t *testing.T, dir string) bool {
	t.Helper()
	path := filepath.Join(dir, survey.ResultsFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	keep := strings.LastIndexByte(string(b), '\n') + 1
	if keep == len(b) {
		return false
	}
	if err := os.Truncate(path, int64(keep)); err != nil {
		t.Fatal(err)
	}
	return true
}

// resultLines counts the results of each list line in dir.
func resultLines(t *testing.T, dir string) map[int]int {
	t.Helper()
	out := map[int]int{}
	for _, r := range readResults(t, dir) {
		out[r.Line]++
	}
	return out
}

type workerRun struct {
	sum *survey.Summary
	err error
}

func startWorker(cfg survey.Config) <-chan workerRun {
	done := make(chan workerRun, 1)
	go func() {
		sum, err := survey.Run(context.Background(), cfg)
		done <- workerRun{sum, err}
	}()
	return done
}

func waitWorker(t *testing.T, done <-chan workerRun, what string) *survey.Summary {
	t.Helper()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("%s: %v", what, r.err)
		}
		if r.sum.Interrupted || r.sum.Queue == nil {
			t.Fatalf("%s: %+v", what, r.sum)
		}
		return r.sum
	case <-time.After(3 * time.Minute):
		t.Fatalf("%s did not finish in 3 minutes", what)
	}
	return nil
}

// Two workers pull one list from Redis, one of them given the list (it
// loads it), the other only the survey's name: together they scan every
// site once, and their directories merged count exactly what one machine
// counts. A third worker given the same list loads nothing and scans
// nothing. The merge counts a site found in two directories once, from
// its earlier result, ignores a torn last line, and names a missing
// worker's directory.
func TestSurveyQueueTwoWorkersCountAsOneRun(t *testing.T) {
	t.Parallel()
	w := startWeb(t)
	sites := span(1, 80)
	list, want := writeList(t, w, sites)
	one := filepath.Join(t.TempDir(), "one")
	if _, err := survey.Run(context.Background(), config(w.Addr, list, one)); err != nil {
		t.Fatal(err)
	}
	for backend, url := range survey.QueueURLs(t) {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			name := newSurveyName(t, url)
			tmp := t.TempDir()
			a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
			cfgB := queueWorker(config(w.Addr, "", b), url, name)
			cfgB.Queue.Worker, cfgB.Concurrency = "b", 4
			// b's own takeover time differs from a's, the loader's: b uses a's.
			cfgB.Timeout, cfgB.Queue.ClaimIdle = 20*time.Second, 30*time.Second
			var noticesB []string
			cfgB.Notice = func(s string) { noticesB = append(noticesB, s) }
			doneB := startWorker(cfgB) // before the list is loaded: it waits
			// a scans one site at a time, so that b, which looks for the
			// survey twice a second, finds sites left.
			cfgA := queueWorker(config(w.Addr, list, a), url, name)
			cfgA.Queue.Worker, cfgA.Concurrency = "a", 1
			sumA := waitWorker(t, startWorker(cfgA), "worker a")
			sumB := waitWorker(t, doneB, "worker b")
			if !slices.ContainsFunc(noticesB, func(s string) bool { return strings.HasPrefix(s, "using the survey's takeover time, 9s") }) {
				t.Errorf("worker b did not take the survey's takeover time: %q", noticesB)
			}
			if sumA.Queue.Loaded != len(sites) || sumB.Queue.Loaded != 0 {
				t.Errorf("loaded %d by a, %d by b; want %d by a", sumA.Queue.Loaded, sumB.Queue.Loaded, len(sites))
			}
			if sumA.Done == 0 || sumB.Done == 0 || sumA.Done+sumB.Done != len(sites) {
				t.Errorf("a scanned %d, b %d; want both some, %d in all", sumA.Done, sumB.Done, len(sites))
			}
			la, lb := resultLines(t, a), resultLines(t, b)
			for line := range la {
				if lb[line] > 0 || la[line] != 1 {
					t.Errorf("line %d: %d results by a, %d by b", line, la[line], lb[line])
				}
			}
			if _, err := os.Stat(filepath.Join(b, survey.SkippedFile)); err == nil {
				t.Error("worker b, not given the list, wrote its skipped lines")
			}

			merged := filepath.Join(tmp, "merged")
			ad, err := survey.Merge([]string{a, b}, merged)
			if err != nil {
				t.Fatal(err)
			}
			if err := want.Compare(ad, maxOf(sites)); err != nil {
				t.Error(err)
			}
			if got, ref := countsOf(t, merged), countsOf(t, one); !reflect.DeepEqual(got, ref) {
				t.Errorf("two workers merged count otherwise than one machine:\n%v\n%v", got, ref)
			}
			if m := ad.Methods; m.Settings.Queue != name || len(m.Shards) != 2 || m.Rescans != 0 || m.Settings.Shard != "2 workers merged" {
				t.Errorf("methods: queue %q, %d workers, %d rescans, %q", m.Settings.Queue, len(m.Shards), m.Rescans, m.Settings.Shard)
			}
			page, _ := os.ReadFile(filepath.Join(merged, survey.HTMLFile))
			if !strings.Contains(string(page), "pulled by 2 workers") {
				t.Error("the report does not say how the sites were surveyed")
			}

			cfgC := queueWorker(config(w.Addr, list, filepath.Join(tmp, "c")), url, name)
			sumC := waitWorker(t, startWorker(cfgC), "worker c")
			if sumC.Queue.Loaded != 0 || sumC.Done != 0 {
				t.Errorf("a third worker loaded %d and scanned %d sites; want none", sumC.Queue.Loaded, sumC.Done)
			}

			t.Run("merge", func(t *testing.T) { checkWorkerMerge(t, a, b, merged, one) })
		})
	}
}

// checkWorkerMerge copies two finished workers' directories and changes
// them as a worker's death would have.
func checkWorkerMerge(t *testing.T, a, b, merged, one string) {
	tmp := t.TempDir()
	a2, b2 := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	for _, c := range [][2]string{{a, a2}, {b, b2}} {
		if err := os.CopyFS(c[1], os.DirFS(c[0])); err != nil {
			t.Fatal(err)
		}
	}
	var judged survey.Result
	for _, r := range readResults(t, a2) {
		if r.Error == "" {
			judged = r
			break
		}
	}
	appendResult := func(dir string, r survey.Result) {
		t.Helper()
		line, _ := json.Marshal(r)
		f, err := os.OpenFile(filepath.Join(dir, survey.ResultsFile), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		f.Write(append(line, '\n'))
	}
	// b scanned a's site again (a died between writing and acknowledging),
	// later, and could not reach it: the earlier result counts.
	again := survey.Result{Line: judged.Line, URL: judged.URL, Rank: judged.Rank, Timestamp: judged.Timestamp.Add(time.Hour),
		Error: "site_unreachable", Cause: "timeout", Message: "the site did not answer"}
	appendResult(b2, again)
	// a was killed in the middle of a line.
	f, _ := os.OpenFile(filepath.Join(a2, survey.ResultsFile), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"line":3,"url":"http://s0`)
	f.Close()
	ad, err := survey.Merge([]string{b2, a2}, filepath.Join(tmp, "m1"))
	if err != nil {
		t.Fatal(err)
	}
	if got, ref := countsOf(t, filepath.Join(tmp, "m1")), countsOf(t, one); !reflect.DeepEqual(got, ref) || ad.Methods.Rescans != 1 {
		t.Errorf("a site in two directories: %d rescans, counts\n%v\nwant\n%v", ad.Methods.Rescans, got, ref)
	}
	// When b's result is the earlier one, it is b's that counts.
	again.Timestamp = judged.Timestamp.Add(-time.Hour)
	appendResult(b2, again)
	ad, err = survey.Merge([]string{a2, b2}, filepath.Join(tmp, "m2"))
	ref := readAdoption(t, merged)
	if err != nil || ad.Unreachable != ref.Unreachable+1 || ad.Sites != ref.Sites-1 || ad.Errors["site_unreachable/timeout"] != ref.Errors["site_unreachable/timeout"]+1 {
		t.Errorf("the earlier result did not count: %v; unreachable %d (was %d)", err, ad.Unreachable, ref.Unreachable)
	}

	for what, c := range map[string]struct {
		dirs []string
		want string
	}{
		"a worker missing": {[]string{a2}, "workers b are missing"},
		"a worker twice":   {[]string{a2, b2, a2}, "both worker a"},
		"a shard":          {[]string{a2, one}, "different kinds"},
	} {
		if _, err := survey.Merge(c.dirs, filepath.Join(tmp, "bad")); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", what, err, c.want)
		}
	}
	if _, err := survey.Report(a2); err == nil || !strings.Contains(err.Error(), "merge every worker's directory") {
		t.Errorf("a worker's report alone: %v", err)
	}
}

// startChildWorker runs a queue's worker in a process of its own (so that
// it can be killed with SIGKILL) and waits until it wrote n results.
func startChildWorker(t *testing.T, w *synthweb.Web, list, out, url, name string, n int) *childWorker {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "SURVEY_TEST_CHILD=queue", "SURVEY_TEST_WEB="+w.Addr.String(), "SURVEY_TEST_LIST="+list,
		"SURVEY_TEST_OUT="+out, "SURVEY_TEST_QUEUE="+url, "SURVEY_TEST_SURVEY="+name)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	child := &childWorker{cmd, exited}
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(out, survey.ResultsFile))
		if strings.Count(string(b), "\n") >= n {
			return child
		}
		select {
		case err := <-exited:
			t.Fatalf("the worker ended before it could be killed: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker wrote fewer than %d results in 60 s", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type childWorker struct {
	cmd    *exec.Cmd
	exited <-chan error
}

func (c *childWorker) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-c.exited
}

// A worker killed with SIGKILL in the middle of a survey: another worker
// takes over the entries it held once they sat untouched longer than a
// site's timeout, and the two directories merged count every site once,
// exactly as the web was built.
func TestSurveyQueueTakesOverAKilledWorker(t *testing.T) {
	t.Parallel()
	w := startWeb(t)
	sites := span(1, 60) // no hung site
	list, want := writeList(t, w, sites)
	for backend, url := range survey.QueueURLs(t) {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			name := newSurveyName(t, url)
			tmp := t.TempDir()
			a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
			child := startChildWorker(t, w, list, a, url, name, 8)
			cfgB := queueWorker(config(w.Addr, "", b), url, name)
			cfgB.Concurrency = 2
			cfgB.Notice = func(s string) { t.Log("surviving worker:", s) }
			doneB := startWorker(cfgB)
			child.kill(t)
			// Read without the torn line a kill may leave; the merge below
			// reads the file as the worker left it.
			written, _ := os.ReadFile(filepath.Join(a, survey.ResultsFile))
			killedAt := strings.Count(string(written), "\n")
			sumB := waitWorker(t, doneB, "the surviving worker")
			if sumB.Queue.TakenOver == 0 {
				t.Error("the surviving worker took nothing over from the killed one")
			}
			ad, err := survey.Merge([]string{a, b}, filepath.Join(tmp, "merged"))
			if err != nil {
				t.Fatal(err)
			}
			if err := want.Compare(ad, maxOf(sites)); err != nil {
				t.Error(err)
			}
			if ad.Listed != len(sites) {
				t.Errorf("the merge counts %d sites, the list has %d", ad.Listed, len(sites))
			}
			t.Logf("killed after %d results; the survivor wrote %d, took over %d entries; %d sites scanned twice", killedAt, sumB.Done, sumB.Queue.TakenOver, ad.Methods.Rescans)
		})
	}
}

// A worker killed with SIGKILL and run again in its directory reads back
// the entries it held: the one whose result it had written before the
// kill (and not acknowledged) is acknowledged, not scanned again; the
// others are scanned. Alone, it then finishes the survey with every site
// once.
func TestSurveyQueueWorkerTakesBackItsEntries(t *testing.T) {
	t.Parallel()
	w := startWeb(t)
	sites := span(1, 40)
	list, _ := writeList(t, w, sites)
	for backend, url := range survey.QueueURLs(t) {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			name := newSurveyName(t, url)
			a := filepath.Join(t.TempDir(), "a")
			startChildWorker(t, w, list, a, url, name, 5).kill(t)
			var man survey.Manifest
			b, _ := os.ReadFile(filepath.Join(a, survey.ManifestFile))
			if err := json.Unmarshal(b, &man); err != nil || man.Settings.Worker == "" {
				t.Fatalf("the killed worker's manifest: %v %s", err, b)
			}
			// What the worker held when it was killed: its pending entries.
			rs, err := store.OpenRedis(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			defer rs.Close()
			pend, err := rs.Client().XPendingExt(context.Background(), &redis.XPendingExtArgs{Stream: survey.StreamKey(name),
				Group: survey.QueueGroup, Consumer: man.Settings.Worker, Start: "-", End: "+", Count: 100}).Result()
			if err != nil || len(pend) == 0 {
				t.Fatalf("the killed worker held no entries (%v)", err)
			}
			// A line torn by the kill is cut, as the worker's resume would;
			// its entry is still pending, so it is scanned again.
			torn := cutTornTail(t, a)
			written := resultLines(t, a)
			// The worker had written one of them when it was killed: a
			// result no scan of that site gives, to tell it from a rescan.
			line, already := 0, 0
			for _, p := range pend {
				var l int
				fmt.Sscanf(p.ID, "%d-0", &l)
				if written[l] > 0 {
					already++
				} else if line == 0 {
					line = l
				}
			}
			if line == 0 {
				t.Fatalf("every entry the killed worker held (%d) has its result written (torn line cut: %v)", len(pend), torn)
			}
			site := line - 3 // writeList's sites start on line 4
			before := survey.Result{Line: line, URL: w.URL(site), Rank: site, Timestamp: time.Now().UTC().Truncate(time.Second),
				Error: "internal_error", Message: "written before the kill"}
			enc, _ := json.Marshal(before)
			f, _ := os.OpenFile(filepath.Join(a, survey.ResultsFile), os.O_APPEND|os.O_WRONLY, 0)
			f.Write(append(enc, '\n'))
			f.Close()

			var notices []string
			var mu sync.Mutex
			cfg := queueWorker(config(w.Addr, list, a), url, name)
			cfg.Notice = func(s string) { mu.Lock(); notices = append(notices, s); mu.Unlock() }
			sum := waitWorker(t, startWorker(cfg), "the worker run again")
			if sum.Queue.Worker != man.Settings.Worker || sum.Queue.Loaded != 0 {
				t.Errorf("run again as %q (was %q), loaded %d", sum.Queue.Worker, man.Settings.Worker, sum.Queue.Loaded)
			}
			lines := resultLines(t, a)
			for _, i := range sites {
				if lines[i+3] != 1 {
					t.Errorf("site %d (line %d) has %d results", i, i+3, lines[i+3])
				}
			}
			for _, r := range readResults(t, a) {
				if r.Line == line && r.Message != before.Message {
					t.Errorf("the site whose result was written before the kill was scanned again: %+v", r)
				}
			}
			if want := fmt.Sprintf("read back %d entries it held when it stopped: %d to scan, %d already written", len(pend), len(pend)-already-1, already+1); !strings.Contains(strings.Join(notices, "\n"), want) {
				t.Errorf("notices %q lack %q", notices, want)
			}
			exp, _ := synthweb.LoadExpectations(testdata)
			want := synthweb.NewExpected()
			for _, i := range sites {
				v := exp.Of(synthweb.KindOf(i))
				if i == site {
					v = synthweb.Verdicts{Error: "internal_error"}
				}
				want.Add(i, v)
			}
			want.Duplicates, want.Invalid = 1, 1
			ad, err := survey.Merge([]string{a}, filepath.Join(t.TempDir(), "merged"))
			if err != nil {
				t.Fatal(err)
			}
			if err := want.Compare(ad, maxOf(sites)); err != nil {
				t.Error(err)
			}
		})
	}
}

// Politeness holds across workers: two workers never scan sites of one
// registrable domain at the same time.
func TestSurveyQueueOneScanPerDomainAcrossWorkers(t *testing.T) {
	t.Parallel()
	pw := startPoliteWeb(t)
	pw.delay = 20 * time.Millisecond // a site takes long enough for both workers to get some
	for backend, url := range survey.QueueURLs(t) {
		t.Run(backend, func(t *testing.T) {
			pw.reset()
			name := newSurveyName(t, url)
			tmp := t.TempDir()
			var runs []<-chan workerRun
			for i := range 2 {
				cfg := queueWorker(config(pw.addr, pw.list, filepath.Join(tmp, fmt.Sprint(i))), url, name)
				cfg.Engine.Fetch.Resolver = everyName(pw.addr.Addr())
				cfg.Concurrency = 2
				cfg.Queue.Worker = fmt.Sprint("w", i) // one process: the default names would be the same
				runs = append(runs, startWorker(cfg))
			}
			var dirs []string
			for i, r := range runs {
				if sum := waitWorker(t, r, fmt.Sprintf("worker %d", i)); sum.Done == 0 {
					t.Errorf("worker %d scanned nothing: the test shows nothing about two workers", i)
				}
				dirs = append(dirs, filepath.Join(tmp, fmt.Sprint(i)))
			}
			ad, err := survey.Merge(dirs, filepath.Join(tmp, "merged"))
			if err != nil || ad.Sites != 12 {
				t.Fatalf("%v, %+v", err, ad)
			}
			pw.check(t)
		})
	}
}

// A worker interrupted (Ctrl-C) stops cleanly: what it wrote is
// acknowledged, and run again it finishes the survey, every site once.
func TestSurveyQueueWorkerInterruptedContinues(t *testing.T) {
	t.Parallel()
	w := startWeb(t)
	sites := span(101, 160)
	list, want := writeList(t, w, sites)
	url := survey.QueueURLs(t)["redis"]
	name := newSurveyName(t, url)
	a := filepath.Join(t.TempDir(), "a")
	cfg := queueWorker(config(w.Addr, list, a), url, name)
	cfg.Concurrency = 2
	ctx, cancel := context.WithCancel(context.Background())
	cfg.Progress = func(p survey.Progress) {
		if p.Done >= 10 {
			cancel()
		}
	}
	sum, err := survey.Run(ctx, cfg)
	cancel()
	if err != nil || !sum.Interrupted || sum.Done < 10 || sum.Done >= len(sites) {
		t.Fatalf("interrupted: %+v, %v", sum, err)
	}
	written := sum.Done
	// Everything written was acknowledged on the way out.
	rs, err := store.OpenRedis(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	pend, err := rs.Client().XPending(context.Background(), survey.StreamKey(name), survey.QueueGroup).Result()
	if err != nil {
		t.Fatal(err)
	}
	lines := resultLines(t, a)
	if pid, _ := rs.Client().XPendingExt(context.Background(), &redis.XPendingExtArgs{Stream: survey.StreamKey(name), Group: survey.QueueGroup, Start: "-", End: "+", Count: 100}).Result(); len(pid) > 0 {
		for _, p := range pid {
			var l int
			fmt.Sscanf(p.ID, "%d-0", &l)
			if lines[l] > 0 {
				t.Errorf("entry %s is written and still pending", p.ID)
			}
		}
	}
	cfg.Progress = nil
	sum, err = survey.Run(context.Background(), cfg)
	if err != nil || sum.Interrupted || sum.Resumed != written {
		t.Fatalf("run again: %+v, %v", sum, err)
	}
	for _, i := range sites {
		if n := resultLines(t, a)[i-100+3]; n != 1 {
			t.Errorf("site %d has %d results", i, n)
		}
	}
	ad, err := survey.Merge([]string{a}, filepath.Join(t.TempDir(), "merged"))
	if err != nil {
		t.Fatal(err)
	}
	if err := want.Compare(ad, maxOf(sites)); err != nil {
		t.Error(err)
	}
	t.Logf("interrupted after %d results with %d entries held", written, pend.Count)
}
