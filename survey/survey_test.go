package survey_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentready/agentready/engine"
	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/fetch"
	"github.com/agentready/agentready/engine/weburl"
	"github.com/agentready/agentready/internal/testing/synthweb"
	"github.com/agentready/agentready/survey"
)

const testdata = "../testdata"

// TestMain doubles as the child of TestSurveyKill9Resumes: a survey run in
// a process of its own, so that it can be killed with SIGKILL.
func TestMain(m *testing.M) {
	if child := os.Getenv("SURVEY_TEST_CHILD"); child != "" {
		ap := netip.MustParseAddrPort(os.Getenv("SURVEY_TEST_WEB"))
		cfg := config(ap, os.Getenv("SURVEY_TEST_LIST"), os.Getenv("SURVEY_TEST_OUT"))
		cfg.Concurrency = 2
		if child == "queue" {
			cfg = queueWorker(cfg, os.Getenv("SURVEY_TEST_QUEUE"), os.Getenv("SURVEY_TEST_SURVEY"))
			cfg.Notice = func(s string) { fmt.Fprintln(os.Stderr, "child worker:", s) }
		}
		if _, err := survey.Run(context.Background(), cfg); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func startWeb(t *testing.T) *synthweb.Web {
	t.Helper()
	w, err := synthweb.Start(testdata)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

// config surveys the synthetic web at ap: its names resolve there, and
// exactly that address and port is admitted. The request timeout stays the
// scanner's (5 s), so that a loaded machine does not turn a slow answer
// into another verdict.
func config(ap netip.AddrPort, list, out string) survey.Config {
	return survey.Config{List: list, Out: out, Timeout: 20 * time.Second, Concurrency: 8, Version: "test",
		Engine: engine.Options{Fetch: fetch.Config{
			Policy:    fetch.AddressPolicy{Allow: fetch.AllowList{{Prefix: netip.PrefixFrom(ap.Addr(), 32), Port: ap.Port()}}},
			Resolver:  synthweb.Resolver{Addr: ap.Addr()},
			UserAgent: survey.UserAgent("test", "https://example.org/survey-test"),
		}}}
}

// writeList writes a ranked list of the given sites (rank = site number),
// with a comment, a blank line, one duplicate and one invalid line, and
// the adoption a survey of it must report.
func writeList(t *testing.T, w *synthweb.Web, sites []int) (string, *synthweb.Expected) {
	t.Helper()
	exp, err := synthweb.LoadExpectations(testdata)
	if err != nil {
		t.Fatal(err)
	}
	want := synthweb.NewExpected()
	var b strings.Builder
	b.WriteString("rank,domain\n# the synthetic web\n\n")
	for _, i := range sites {
		fmt.Fprintf(&b, "%d,%s\n", i, w.URL(i))
		want.Add(i, exp.Of(synthweb.KindOf(i)))
	}
	fmt.Fprintf(&b, "%d,%s\n", len(sites)+1, w.URL(sites[0]))
	b.WriteString("9,not a host\n")
	want.Duplicates, want.Invalid = 1, 1
	path := filepath.Join(t.TempDir(), "list.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, want
}

func span(from, to int) []int {
	var s []int
	for i := from; i <= to; i++ {
		s = append(s, i)
	}
	return s
}

func maxOf(s []int) int {
	m := 0
	for _, v := range s {
		m = max(m, v)
	}
	return m
}

func readResults(t *testing.T, dir string) []survey.Result {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, survey.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []survey.Result
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r survey.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

func readAdoption(t *testing.T, dir string) *survey.Adoption {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, survey.AdoptionFile))
	if err != nil {
		t.Fatal(err)
	}
	var ad survey.Adoption
	if err := json.Unmarshal(b, &ad); err != nil {
		t.Fatal(err)
	}
	return &ad
}

// countsOf is adoption.json without its methods: what must not depend on
// how the survey was run.
func countsOf(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, survey.AdoptionFile))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "methods")
	return m
}

// A survey of 120 synthetic sites (slow, hung, redirecting, unresolvable
// and soft-404 among them) reports exactly what the web was built to hold,
// with one line per site in list order.
func TestSurveyReportsTheWebsCounts(t *testing.T) {
	t.Parallel()
	w := startWeb(t)
	sites := span(1, 120)
	list, want := writeList(t, w, sites)
	out := filepath.Join(t.TempDir(), "out")
	sum, err := survey.Run(context.Background(), config(w.Addr, list, out))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Done != 120 || sum.Total != 120 || sum.Interrupted {
		t.Fatalf("summary %+v", sum)
	}
	if err := want.Compare(sum.Adoption, maxOf(sites)); err != nil {
		t.Error(err)
	}
	if err := want.Compare(readAdoption(t, out), maxOf(sites)); err != nil {
		t.Errorf("adoption.json: %v", err)
	}
	results := readResults(t, out)
	if len(results) != 120 {
		t.Fatalf("%d results", len(results))
	}
	for n, r := range results {
		i := n + 1
		if r.URL != w.URL(i) || r.Rank != i || r.Line != i+3 || r.Timestamp.IsZero() {
			t.Errorf("result %d: url %s rank %d line %d", i, r.URL, r.Rank, r.Line)
		}
		k := synthweb.KindOf(i)
		switch {
		case k.Hung || k.NoSuchHost:
			if r.Error != "site_unreachable" || r.Score != nil || len(r.Checks) != 0 || r.Message == "" {
				t.Errorf("site %d: %+v", i, r)
			}
		case k.RedirectTo != 0:
			if r.FinalURL != w.URL(k.RedirectTo) {
				t.Errorf("site %d redirects to %d: finalUrl %q", i, k.RedirectTo, r.FinalURL)
			}
		default:
			if r.FinalURL != "" || r.Score == nil || r.Level == nil || len(r.Checks) != 48 || len(r.Signals) != 5 || r.Requests == 0 {
				t.Errorf("site %d: %+v", i, r)
			}
		}
		if r.Score != nil && (len(r.Read) != len(checks.Read()) || r.Read[0].ID != "R.1" || r.Profile == "") {
			t.Errorf("site %d: read %v, profile %q", i, r.Read, r.Profile)
		}
	}
	// adoption.json counts each read check across the judged sites, and
	// the sites by detected profile, as the results say.
	judged, readCount, profiles := 0, map[string]survey.Counts{}, map[string]int{}
	for _, r := range results {
		if r.Score == nil {
			continue
		}
		judged++
		profiles[r.Profile]++
		for _, e := range r.Read {
			c := readCount[e.ID]
			c.Add(e.Status)
			readCount[e.ID] = c
		}
	}
	raw, err := os.ReadFile(filepath.Join(out, survey.AdoptionFile))
	if err != nil {
		t.Fatal(err)
	}
	var ad struct {
		Sites    int                      `json:"sites"`
		Read     map[string]survey.Counts `json:"read"`
		Profiles map[string]int           `json:"profiles"`
	}
	if err := json.Unmarshal(raw, &ad); err != nil {
		t.Fatal(err)
	}
	if ad.Sites != judged || len(ad.Read) != len(checks.Read()) || !reflect.DeepEqual(ad.Read, readCount) || !reflect.DeepEqual(ad.Profiles, profiles) {
		t.Errorf("adoption.json: %d sites, read %v, profiles %v; the results say %d, %v, %v", ad.Sites, ad.Read, ad.Profiles, judged, readCount, profiles)
	}
	for id, c := range ad.Read {
		if c.Total() != judged {
			t.Errorf("adoption.json: %s counts %d sites of %d", id, c.Total(), judged)
		}
	}
	skipped, _ := os.ReadFile(filepath.Join(out, survey.SkippedFile))
	if got := strings.Count(string(skipped), "\n"); got != 2 || !strings.Contains(string(skipped), `"reason":"duplicate"`) || !strings.Contains(string(skipped), `"reason":"invalid"`) {
		t.Errorf("skipped.ndjson:\n%s", skipped)
	}

	// Run again: nothing is scanned twice, the reports are the same.
	before := w.Requests()
	sum, err = survey.Run(context.Background(), config(w.Addr, list, out))
	if err != nil || sum.Done != 120 || sum.Resumed != 120 {
		t.Fatalf("again: %+v, %v", sum, err)
	}
	if w.Requests() != before {
		t.Errorf("a finished survey run again made %d requests", w.Requests()-before)
	}
	if err := want.Compare(readAdoption(t, out), maxOf(sites)); err != nil {
		t.Errorf("again: %v", err)
	}
}

// A results file whose last line was torn (the process died while writing
// it) resumes after its last whole line: the torn site is scanned again,
// none twice, none lost. A line damaged before the end stops the survey.
func TestSurveyResumesAfterATornLine(t *testing.T) {
	t.Parallel()
	w := startWeb(t)
	sites := span(1, 30)
	list, want := writeList(t, w, sites)
	ref := filepath.Join(t.TempDir(), "ref")
	if _, err := survey.Run(context.Background(), config(w.Addr, list, ref)); err != nil {
		t.Fatal(err)
	}
	whole, err := os.ReadFile(filepath.Join(ref, survey.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(whole), "\n")
	// A survey stopped after 20 lines and half of the 21st.
	out := filepath.Join(t.TempDir(), "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	torn := strings.Join(lines[:20], "") + lines[20][:len(lines[20])/2]
	if err := os.WriteFile(filepath.Join(out, survey.ResultsFile), []byte(torn), 0o644); err != nil {
		t.Fatal(err)
	}
	unfinished(t, ref, out)
	cfg := config(w.Addr, list, out)
	var notices []string
	cfg.Notice = func(s string) { notices = append(notices, s) }
	sum, err := survey.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Resumed != 20 || sum.Done != 30 {
		t.Errorf("resumed %d, done %d; want 20 and 30", sum.Resumed, sum.Done)
	}
	if want := "Resuming: 20 of 30 sites done; continuing with the rest"; len(notices) != 1 || notices[0] != want {
		t.Errorf("notices %q, want %q", notices, want)
	}
	got := readResults(t, out)
	if len(got) != 30 {
		t.Fatalf("%d results after the resume, want 30", len(got))
	}
	for i, r := range got {
		if r.URL != w.URL(i+1) {
			t.Fatalf("result %d is %s, want %s", i+1, r.URL, w.URL(i+1))
		}
	}
	if err := want.Compare(readAdoption(t, out), maxOf(sites)); err != nil {
		t.Error(err)
	}

	// A damaged line that is not the last: an error, and the file is kept.
	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	damaged := strings.Join(lines[:5], "") + "{\"line\":9,\"url\":\"x\n" + strings.Join(lines[6:10], "")
	if err := os.WriteFile(filepath.Join(bad, survey.ResultsFile), []byte(damaged), 0o644); err != nil {
		t.Fatal(err)
	}
	unfinished(t, ref, bad)
	if _, err := survey.Run(context.Background(), config(w.Addr, list, bad)); err == nil || !strings.Contains(err.Error(), "line 6") {
		t.Errorf("a damaged middle line: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(bad, survey.ResultsFile)); string(b) != damaged {
		t.Error("the damaged file was changed")
	}
}

// unfinished copies ref's manifest into dir as it was before the survey
// finished.
func unfinished(t *testing.T, ref, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ref, survey.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m survey.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m.Finished = nil
	b, _ = json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, survey.ManifestFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A survey killed with SIGKILL in the middle continues when run again: no
// site twice, none lost, the report exact.
func TestSurveyKill9Resumes(t *testing.T) {
	t.Parallel()
	w := startWeb(t)
	sites := span(1, 70) // no hung site: the child is slow enough at concurrency 2
	list, want := writeList(t, w, sites)
	out := filepath.Join(t.TempDir(), "out")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "SURVEY_TEST_CHILD=1", "SURVEY_TEST_WEB="+w.Addr.String(), "SURVEY_TEST_LIST="+list, "SURVEY_TEST_OUT="+out)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(out, survey.ResultsFile))
		if n := strings.Count(string(b), "\n"); n >= 10 {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the child ended before it could be killed: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the child wrote fewer than 10 results in 60 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	b, _ := os.ReadFile(filepath.Join(out, survey.ResultsFile))
	killedAt := strings.Count(string(b), "\n")
	if killedAt >= len(sites) {
		t.Fatalf("the child finished (%d lines) before the kill", killedAt)
	}
	sum, err := survey.Run(context.Background(), config(w.Addr, list, out))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Resumed != killedAt {
		t.Errorf("resumed after %d results, the kill left %d whole lines", sum.Resumed, killedAt)
	}
	seen := map[string]int{}
	for _, r := range readResults(t, out) {
		seen[r.URL]++
	}
	for _, i := range sites {
		if seen[w.URL(i)] != 1 {
			t.Errorf("site %d has %d results", i, seen[w.URL(i)])
		}
	}
	if len(seen) != len(sites) {
		t.Errorf("%d distinct results, want %d", len(seen), len(sites))
	}
	if err := want.Compare(readAdoption(t, out), maxOf(sites)); err != nil {
		t.Error(err)
	}
	t.Logf("killed after %d of %d results", killedAt, len(sites))
}

// Three shards merged count exactly what one run over the list counts;
// merge refuses an incomplete or inconsistent set of shards.
func TestSurveyMergeEqualsOneRun(t *testing.T) {
	t.Parallel()
	w := startWeb(t)
	sites := span(1, 60)
	list, want := writeList(t, w, sites)
	tmp := t.TempDir()
	one := filepath.Join(tmp, "one")
	if _, err := survey.Run(context.Background(), config(w.Addr, list, one)); err != nil {
		t.Fatal(err)
	}
	var dirs []string
	total := 0
	for i := 0; i < 3; i++ {
		dir := filepath.Join(tmp, fmt.Sprintf("shard%d", i))
		cfg := config(w.Addr, list, dir)
		cfg.Shard = survey.Shard{Index: i, Count: 3}
		sum, err := survey.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Done == 0 || sum.Done == len(sites) {
			t.Errorf("shard %d holds %d of %d sites", i, sum.Done, len(sites))
		}
		total += sum.Done
		dirs = append(dirs, dir)
	}
	if total != len(sites) {
		t.Errorf("the shards hold %d sites, the list %d", total, len(sites))
	}
	merged := filepath.Join(tmp, "merged")
	ad, err := survey.Merge(dirs, merged)
	if err != nil {
		t.Fatal(err)
	}
	if err := want.Compare(ad, maxOf(sites)); err != nil {
		t.Error(err)
	}
	if a, b := countsOf(t, one), countsOf(t, merged); !reflect.DeepEqual(a, b) {
		t.Errorf("merged counts differ from one run:\n%v\n%v", a, b)
	}
	if len(ad.Methods.Shards) != 3 || ad.Methods.Settings.Shard != "3 shards merged" {
		t.Errorf("methods: %+v", ad.Methods)
	}
	for name, args := range map[string][]string{
		"shard 2/3 missing": dirs[:2],
		"given twice":       {dirs[0], dirs[1], dirs[1], dirs[2]},
		"another split":     {dirs[0], dirs[1], one},
	} {
		if _, err := survey.Merge(args, filepath.Join(tmp, "bad")); err == nil {
			t.Errorf("%s: merged", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	unfinished(t, dirs[1], dirs[1])
	if _, err := survey.Merge(dirs, filepath.Join(tmp, "bad")); err == nil || !strings.Contains(err.Error(), "not finished") {
		t.Errorf("an unfinished shard: %v", err)
	}
}

// Politeness: two sites of one registrable domain are never scanned at the
// same time, while sites of different domains are; every request names
// agentready, its version and the contact in its User-Agent.
func TestSurveyOneScanPerRegistrableDomain(t *testing.T) {
	t.Parallel()
	pw := startPoliteWeb(t)
	cfg := config(pw.addr, pw.list, filepath.Join(t.TempDir(), "out"))
	cfg.Engine.Fetch.Resolver = everyName(pw.addr.Addr())
	sum, err := survey.Run(context.Background(), cfg)
	if err != nil || sum.Adoption.Sites != 12 {
		t.Fatalf("%+v, %v", sum, err)
	}
	pw.check(t)
}

// politeWeb serves four sites of each of three registrable domains and
// records whether two sites of one domain were ever asked at once.
type politeWeb struct {
	addr     netip.AddrPort
	list     string
	mu       sync.Mutex
	inFlight map[string]map[string]int // registrable domain → host → requests
	overlap  []string
	domains  int // most domains in flight at once
	agents   map[string]bool
	delay    time.Duration // before each answer
}

func startPoliteWeb(t *testing.T) *politeWeb {
	pw := &politeWeb{delay: 3 * time.Millisecond}
	pw.reset()
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		site := weburl.Site(host)
		pw.mu.Lock()
		pw.agents[r.UserAgent()] = true
		if pw.inFlight[site] == nil {
			pw.inFlight[site] = map[string]int{}
		}
		pw.inFlight[site][host]++
		if len(pw.inFlight[site]) > 1 {
			pw.overlap = append(pw.overlap, fmt.Sprintf("%v", pw.inFlight[site]))
		}
		pw.domains = max(pw.domains, len(pw.inFlight))
		pw.mu.Unlock()
		time.Sleep(pw.delay)
		if r.URL.Path == "/" {
			rw.Header().Set("Content-Type", "text/html")
			io.WriteString(rw, "<!doctype html><title>t</title><h1>t</h1>")
		} else {
			http.NotFound(rw, r)
		}
		pw.mu.Lock()
		if pw.inFlight[site][host]--; pw.inFlight[site][host] == 0 {
			delete(pw.inFlight[site], host)
		}
		if len(pw.inFlight[site]) == 0 {
			delete(pw.inFlight, site)
		}
		pw.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	pw.addr = netip.MustParseAddrPort(srv.Listener.Addr().String())
	var b strings.Builder
	for _, d := range []string{"one.test", "two.test", "three.test"} {
		for _, sub := range []string{"a", "b", "c", "d"} {
			fmt.Fprintf(&b, "http://%s.%s:%d/\n", sub, d, pw.addr.Port())
		}
	}
	pw.list = filepath.Join(t.TempDir(), "list.txt")
	if err := os.WriteFile(pw.list, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return pw
}

func (pw *politeWeb) reset() {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	pw.inFlight, pw.overlap, pw.domains, pw.agents = map[string]map[string]int{}, nil, 0, map[string]bool{}
}

func (pw *politeWeb) check(t *testing.T) {
	t.Helper()
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if len(pw.overlap) > 0 {
		t.Errorf("sites of one domain scanned at once: %v", pw.overlap[:min(len(pw.overlap), 5)])
	}
	if pw.domains < 2 {
		t.Errorf("at most %d domain in flight at once: the survey did not scan concurrently", pw.domains)
	}
	if len(pw.agents) != 1 || !pw.agents["agentready/test (+https://example.org/survey-test; agent-readiness survey)"] {
		t.Errorf("User-Agents: %v", pw.agents)
	}
}

type everyName netip.Addr

func (a everyName) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.Addr(a)}, nil
}

// The HTML report is one self-contained, accessible page: no script,
// nothing it would fetch, every chart named and described with a table
// beside it; the markdown report has the same tables.
func TestSurveyHTMLReportIsSelfContained(t *testing.T) {
	t.Parallel()
	w := startWeb(t)
	list, _ := writeList(t, w, span(1, 20))
	out := filepath.Join(t.TempDir(), "out")
	if _, err := survey.Run(context.Background(), config(w.Addr, list, out)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, survey.HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	lower := strings.ToLower(page)
	for _, banned := range []string{"<script", "<iframe", "<object", "<embed", "<img", "<link", "src=", "url(", "@import", "javascript:", "xlink:href"} {
		if strings.Contains(lower, banned) {
			t.Errorf("the report contains %q", banned)
		}
	}
	if m := regexp.MustCompile(`\son[a-z]+\s*=`).FindString(lower); m != "" {
		t.Errorf("an event handler attribute: %q", m)
	}
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(m[1], "#") {
			t.Errorf("a link out of the page: %s", m[1])
		}
	}
	for _, want := range []string{"<html lang=\"en\">", "<title>", "<h1>", "<h2>", "<th scope=\"col\"", "Methods"} {
		if !strings.Contains(page, want) {
			t.Errorf("the report lacks %s", want)
		}
	}
	svgs := regexp.MustCompile(`(?s)<svg[^>]*>.*?</svg>`).FindAllString(page, -1)
	if len(svgs) < 7 {
		t.Errorf("%d charts, want levels, scores, 4 levels of checks and the signals", len(svgs))
	}
	for _, s := range svgs {
		if !strings.Contains(s, `role="img"`) || !strings.Contains(s, "aria-labelledby=") || !strings.Contains(s, "<title id=") || !strings.Contains(s, "<desc id=") {
			t.Errorf("a chart without its name and description: %.200s", s)
		}
	}
	if tables, captions := strings.Count(page, "<table>"), strings.Count(page, "<caption>"); tables < len(svgs) || tables != captions {
		t.Errorf("%d tables, %d captions, %d charts", tables, captions, len(svgs))
	}
	// Every site has a row in each order's table, with its score.
	results := readResults(t, out)
	for _, order := range []string{"by-score", "by-name", "by-rank"} {
		m := regexp.MustCompile(`(?s)<div id="` + order + `" class="order scroll">.*?</div>`).FindString(page)
		if m == "" {
			t.Fatalf("no table of the sites %s", order)
		}
		rows := regexp.MustCompile(`<tr><td>[^<]*</td><th scope="row">(.*?)</th><td>([^<]*)</td>`).FindAllStringSubmatch(m, -1)
		if len(rows) != len(results) {
			t.Errorf("%s: %d rows, want one per site (%d)", order, len(rows), len(results))
		}
		got := map[string]string{}
		var scores []int
		for _, r := range rows {
			got[strings.ReplaceAll(r[1], "<wbr>", "")] = r[2]
			if n, err := strconv.Atoi(r[2]); err == nil {
				scores = append(scores, n)
			} else {
				scores = append(scores, -1)
			}
		}
		for _, r := range results {
			name := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(r.URL, "https://"), "http://"), "/")
			want := "–"
			if r.Score != nil {
				want = strconv.Itoa(*r.Score)
			}
			if got[name] != want {
				t.Errorf("%s: %s scores %q, want %q", order, name, got[name], want)
			}
		}
		if order == "by-score" && !sort.SliceIsSorted(scores, func(i, j int) bool { return scores[i] > scores[j] }) {
			t.Errorf("by score: %v is not in descending order", scores)
		}
	}
	if i, j := strings.Index(page, `id="by-name"`), strings.Index(page, `id="by-score"`); i < 0 || j < i {
		t.Errorf("the table by score must follow the others (the CSS hides it after a targeted one)")
	}
	// Ranks 1–20 of a list of 20 ranked sites are all in the top 1k: no
	// table by rank repeating the "All" column.
	if strings.Contains(page, "top 1k (") || !strings.Contains(page, "Every site of the list is among the top 1k") {
		t.Errorf("the rank section repeats the All column")
	}
	md, err := os.ReadFile(filepath.Join(out, survey.MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<section id="profiles">`, "<caption>Sites by detected profile</caption>", `<section id="read">`, "Sites by status of each read check", "R.1 Page Size", checks.Read()[len(checks.Read())-1].ID + " "} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	for _, want := range []string{"# Agent readiness of 20 sites", "| 1.1 llms.txt |", "## Methods", "agent-readiness survey", "## Kinds of site", "| profile | sites | share |", "## Read suite (not scored)", "| R.1 Page Size |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// The output directory belongs to one survey: another list or another
// shard is refused, with the directory untouched.
func TestSurveyRefusesAnotherSurveysDirectory(t *testing.T) {
	t.Parallel()
	w := startWeb(t)
	list, _ := writeList(t, w, span(1, 5))
	out := filepath.Join(t.TempDir(), "out")
	if _, err := survey.Run(context.Background(), config(w.Addr, list, out)); err != nil {
		t.Fatal(err)
	}
	other, _ := writeList(t, w, span(6, 9))
	if _, err := survey.Run(context.Background(), config(w.Addr, other, out)); err == nil || !strings.Contains(err.Error(), "another content") {
		t.Errorf("another list: %v", err)
	}
	cfg := config(w.Addr, list, out)
	cfg.Shard = survey.Shard{Index: 1, Count: 2}
	if _, err := survey.Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "shard 0/1") {
		t.Errorf("another shard: %v", err)
	}
}

// A list of local sites surveyed without --allow-private or --allow: every
// site is refused before any request, each result says requests 0, and
// the reports say what to do.
func TestSurveyOfRefusedSitesSaysHowToAllowThem(t *testing.T) {
	t.Parallel()
	w := startWeb(t)
	list, _ := writeList(t, w, span(1, 5))
	out := filepath.Join(t.TempDir(), "out")
	cfg := config(w.Addr, list, out)
	cfg.Engine.Fetch.Policy = fetch.AddressPolicy{}
	before := w.Requests()
	sum, err := survey.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n := w.Requests() - before; n != 0 {
		t.Errorf("the web saw %d requests", n)
	}
	for _, r := range readResults(t, out) {
		if r.Cause != "blocked" || r.Requests != 0 {
			t.Errorf("%s: cause %q, %d requests; want blocked, 0", r.URL, r.Cause, r.Requests)
		}
	}
	ad := sum.Adoption
	if ad.Refused() != 5 || !strings.Contains(ad.RefusalHint(), "--allow-private") || !strings.Contains(ad.RefusalHint(), "--allow IP") {
		t.Errorf("refused %d, hint %q", ad.Refused(), ad.RefusalHint())
	}
	page, err := os.ReadFile(filepath.Join(out, survey.HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), `<p class="note" role="note"><strong>Refused by the address policy:</strong> all 5 sites were refused`) {
		t.Errorf("report.html lacks the hint")
	}
	if n := strings.Count(string(page), "refused: not a public address"); n != 5*3 {
		t.Errorf("%d rows say refused, want 5 in each of 3 orders", n)
	}
	md, _ := os.ReadFile(filepath.Join(out, survey.MarkdownFile))
	if !strings.Contains(string(md), "--allow-private") {
		t.Errorf("report.md lacks the hint")
	}
}
