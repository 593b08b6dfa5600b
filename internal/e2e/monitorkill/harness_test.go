package monitorkill

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentready/agentready/internal/testing/testenv"
	"github.com/agentready/agentready/webhook"
)

// built is the agentready binary, built once per test run (both tests use it).
var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// binary builds ./cmd/agentready from the module root; the tests drive it as
// a user does, so a kill -9 hits a real process with real files and sockets.
func binary(t *testing.T) string {
	t.Helper()
	testenv.Quick(t, "the kill -9 suites")
	built.once.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			built.err = errors.New("the go command is not on the PATH; it builds the agentready binary these tests run")
			return
		}
		if built.dir, err = os.MkdirTemp("", "monitorkill-"); err != nil {
			built.err = err
			return
		}
		built.path = filepath.Join(built.dir, "agentready")
		cmd := exec.Command(goTool, "build", "-o", built.path, "./cmd/agentready")
		cmd.Dir = testenv.RepoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build ./cmd/agentready: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// serveEnv is this process's environment without any agentready, Redis
// or Chromium setting a developer may have exported, plus set. CHROME_PATH
// names no file, so the origins take no screenshots: a Chromium per origin
// loading every monitored site would cost more CPU than the monitors.
func serveEnv(set map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "AGENTREADY_") || strings.HasPrefix(kv, "REDIS_URL=") || strings.HasPrefix(kv, "CHROME_PATH=") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "CHROME_PATH=/nonexistent/monitorkill-takes-no-screenshots")
	for k, v := range set {
		env = append(env, k+"="+v)
	}
	return env
}

// lockedBuf collects a process's output for the failure log.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedBuf) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.b.String()
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}

// proc is one `agentready serve` process.
type proc struct {
	name string
	cmd  *exec.Cmd
	URL  string
	out  *lockedBuf
	done chan struct{}
	url  chan string
}

// launch starts `agentready serve` on a port the kernel picks (the process
// prints the address it bound, so no port is probed and then raced for).
func launch(t *testing.T, name, bin string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, out: &lockedBuf{}, done: make(chan struct{}), url: make(chan string, 1)}
	p.cmd = exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--allow-private", "--edge-wasm", "", "--drain", "5s"}, args...)...)
	p.cmd.Env = env
	p.cmd.Stderr = p.out
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(p.out, line)
			if rest, ok := strings.CutPrefix(line, "agentready serving on "); ok {
				select {
				case p.url <- strings.Fields(rest)[0]:
				default:
				}
			}
		}
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		if p.running() {
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
			<-p.done
		}
		if t.Failed() {
			t.Logf("%s's output (tail):\n%s", p.name, p.out.tail(3000))
		}
	})
	return p
}

// ready waits for the address line and then for /healthz to answer 200.
func (p *proc) ready(t *testing.T) {
	t.Helper()
	select {
	case p.URL = <-p.url:
	case <-p.done:
		t.Fatalf("%s exited before serving:\n%s", p.name, p.out.tail(3000))
	case <-time.After(30 * time.Second):
		t.Fatalf("%s printed no address within 30 s:\n%s", p.name, p.out.tail(3000))
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(p.URL + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: /healthz did not answer 200 within 15 s (last: %v)", p.name, err)
		}
		time.Sleep(20 * time.Millisecond) // polling interval
	}
}

func start(t *testing.T, name, bin string, env []string, args ...string) *proc {
	t.Helper()
	p := launch(t, name, bin, env, args...)
	p.ready(t)
	return p
}

func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// kill9 is the crash: SIGKILL, no chance to release anything.
func (p *proc) kill9(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %s: %v", p.name, err)
	}
	p.wait(t, 10*time.Second)
}

// stop is a graceful shutdown (SIGTERM): in-flight runs are handed back,
// attempts in flight finish.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM %s: %v", p.name, err)
	}
	p.wait(t, 20*time.Second)
}

func (p *proc) wait(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		t.Fatalf("%s did not exit within %s:\n%s", p.name, d, p.out.tail(3000))
	}
}

// scanReq is one homepage request by the scanner (Accept: text/html on /,
// its User-Agent), which a scan makes exactly once: each is one scan of that
// monitor's site.
type scanReq struct {
	idx        int
	start, end time.Time
	conn       conn // the scanner's end and the site's
	aborted    bool // the scanner hung up before the answer (its process died, or it shut down)
}

// sites serves one fixture site per monitor, each on its own listener: a
// scan targets a site's root (a path is dropped), so the port is what tells
// monitors apart. The homepage is held for delay, so that scans are in
// flight long enough for a kill to land in the middle of some.
type sites struct {
	delay  time.Duration
	byPort map[int]int
	urls   []string
	srv    *http.Server
	mu     sync.Mutex
	scans  []*scanReq
}

func newSites(t *testing.T, n int, delay time.Duration) *sites {
	t.Helper()
	s := &sites{delay: delay, byPort: map[int]int{}}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		s.byPort[port] = i
		s.urls = append(s.urls, "http://"+ln.Addr().String()+"/")
		go s.srv.Serve(ln)
	}
	t.Cleanup(func() { s.srv.Close() })
	return s
}

const homepage = `<!doctype html><html lang="en"><head><title>Fixture</title><meta name="description" content="A monitored fixture site."></head><body><main><h1>Fixture</h1><p>Monitored.</p></main></body></html>`

func (s *sites) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	// The scanner's own homepage fetch; the screenshot browser loads the
	// page after a scan too, and that is not a scan.
	if strings.Contains(r.Header.Get("Accept"), "text/html") && strings.HasPrefix(r.UserAgent(), "agentready/") {
		local, _ := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr)
		sr := &scanReq{idx: -1, start: time.Now(), conn: conn{from: port(r.RemoteAddr)}}
		if local != nil {
			sr.conn.to = local.Port
			if i, ok := s.byPort[local.Port]; ok {
				sr.idx = i
			}
		}
		s.mu.Lock()
		s.scans = append(s.scans, sr)
		s.mu.Unlock()
		timer := time.NewTimer(s.delay)
		aborted := false
		select {
		case <-timer.C:
		case <-r.Context().Done():
			timer.Stop()
			aborted = true
		}
		s.mu.Lock()
		sr.end, sr.aborted = time.Now(), aborted
		s.mu.Unlock()
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, homepage)
}

func port(addr string) int {
	_, p, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	return n
}

// snapshot copies every scan seen so far.
func (s *sites) snapshot() []scanReq {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]scanReq, len(s.scans))
	for i, sr := range s.scans {
		out[i] = *sr
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start.Before(out[j].start) })
	return out
}

// inFlight returns the scans under way over one of conns (all of them when
// conns is nil).
func (s *sites) inFlight(conns map[conn]bool) []scanReq {
	var out []scanReq
	for _, sr := range s.snapshot() {
		if sr.end.IsZero() && (conns == nil || conns[sr.conn]) {
			out = append(out, sr)
		}
	}
	return out
}

// receipt is one delivery as the receiver saw it.
type receipt struct {
	idx     int
	at      time.Time
	status  int
	header  http.Header
	body    []byte
	ev      webhook.Event
	aborted bool // the sender hung up before the answer
}

// receiver is every monitor's webhook endpoint (/hook/<n>); it answers
// status after holding each delivery for delay.
type receiver struct {
	srv      *httptest.Server
	delay    time.Duration
	status   atomic.Int32
	mu       sync.Mutex
	got      []receipt
	inflight int
}

func newReceiver(t *testing.T, delay time.Duration) *receiver {
	r := &receiver{delay: delay}
	r.status.Store(200)
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		at := time.Now()
		idx, err := strconv.Atoi(strings.TrimPrefix(req.URL.Path, "/hook/"))
		if err != nil {
			idx = -1
		}
		body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		var ev webhook.Event
		_ = json.Unmarshal(body, &ev)
		status := int(r.status.Load())
		r.mu.Lock()
		r.inflight++
		r.mu.Unlock()
		aborted := false
		if r.delay > 0 {
			timer := time.NewTimer(r.delay)
			select {
			case <-timer.C:
			case <-req.Context().Done():
				timer.Stop()
				aborted = true
			}
		}
		r.mu.Lock()
		r.inflight--
		r.got = append(r.got, receipt{idx: idx, at: at, status: status, header: req.Header.Clone(), body: body, ev: ev, aborted: aborted})
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) hook(i int) string { return r.srv.URL + "/hook/" + strconv.Itoa(i) }

func (r *receiver) snapshot() []receipt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]receipt(nil), r.got...)
}

func (r *receiver) inFlight() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inflight
}

// waitReported waits until every monitor 0..n-1 has reported a run due at
// or after mark, and every event of a run due before mark has been answered
// 2xx: then the runs up to mark can be counted, none still on its way.
func waitReported(t *testing.T, recv *receiver, n int, mark time.Time, within time.Duration) {
	t.Helper()
	waitFor(t, "every monitor reports its runs up to "+mark.Format(time.StampMilli), within, func() (bool, string) {
		latest := map[int]time.Time{}
		ok := map[string]bool{} // event id → answered 2xx
		var early []receipt
		for _, r := range recv.snapshot() {
			if d := r.ev.Data.ScheduledFor; d.After(latest[r.idx]) {
				latest[r.idx] = d
			}
			if r.status >= 200 && r.status < 300 && !r.aborted {
				ok[r.ev.ID] = true
			}
			if r.idx >= 0 && r.idx < n && r.ev.Data.ScheduledFor.Before(mark) {
				early = append(early, r)
			}
		}
		behind, pending := 0, map[string]bool{}
		for i := range n {
			if latest[i].Before(mark) {
				behind++
			}
		}
		for _, r := range early {
			if !ok[r.ev.ID] {
				pending[r.ev.ID] = true
			}
		}
		return behind == 0 && len(pending) == 0, fmt.Sprintf("%d monitors have no run due after it yet; %d events of earlier runs not yet answered 2xx", behind, len(pending))
	})
}

// mon is a created monitor as its creator knows it.
type mon struct {
	idx      int
	id       string
	secret   string
	firstDue time.Time // the first run's slot: next_run of the 201, as the schedule keeps it (ms)
	created  map[string]any
}

var client = &http.Client{Timeout: 15 * time.Second}

// createMonitor posts a monitor of site that reports to hook every cadence.
func createMonitor(t *testing.T, base string, idx int, site, hook, cadence string) mon {
	t.Helper()
	m, err := postMonitor(base, idx, site, hook, cadence)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func postMonitor(base string, idx int, site, hook, cadence string) (mon, error) {
	body, _ := json.Marshal(map[string]any{"url": site, "callback_url": hook, "cadence": cadence, "events": []string{webhook.EventScanCompleted}})
	var (
		resp *http.Response
		b    []byte
		err  error
	)
	// A 503 acknowledges nothing (the store did not answer): a client
	// retries it after Retry-After, as this one does, a few times.
	for try := 0; ; try++ {
		resp, err = client.Post(base+"/api/monitors", "application/json", bytes.NewReader(body))
		if err != nil {
			return mon{}, fmt.Errorf("POST /api/monitors (monitor %d): %v", idx, err)
		}
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 503 || try == 3 {
			break
		}
		wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		time.Sleep(time.Duration(max(wait, 1)) * time.Second) // the server's Retry-After
	}
	if resp.StatusCode != 201 {
		return mon{}, fmt.Errorf("POST /api/monitors (monitor %d): %d %s", idx, resp.StatusCode, b)
	}
	var v struct {
		ID      string    `json:"id"`
		Secret  string    `json:"secret"`
		NextRun time.Time `json:"next_run"`
		URL     string    `json:"url"`
	}
	if err := json.Unmarshal(b, &v); err != nil || v.ID == "" || v.Secret == "" || v.NextRun.IsZero() {
		return mon{}, fmt.Errorf("POST /api/monitors (monitor %d): want id, secret and next_run in %s (%v)", idx, b, err)
	}
	if v.URL != site {
		return mon{}, fmt.Errorf("monitor %d targets %s, want %s (the fixture counts scans by site)", idx, v.URL, site)
	}
	m := mon{idx: idx, id: v.ID, secret: v.Secret, firstDue: time.UnixMilli(v.NextRun.UnixMilli()).UTC()}
	_ = json.Unmarshal(b, &m.created)
	return m, nil
}

// createPaced creates n monitors, starting one every spread/n with at most
// 8 creations in flight.
func createPaced(t *testing.T, n int, spread time.Duration, create func(i int) (mon, error)) map[int]mon {
	t.Helper()
	var (
		mu   sync.Mutex
		mons = map[int]mon{}
		errs []error
		wg   sync.WaitGroup
	)
	sem := make(chan struct{}, 8)
	tick := time.NewTicker(spread / time.Duration(n))
	defer tick.Stop()
	for i := range n {
		<-tick.C
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			m, err := create(i)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			mons[i] = m
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d of %d creations failed; the first: %v", len(errs), n, errs[0])
	}
	return mons
}

// getJSON GETs url and decodes a JSON answer.
func getJSON(t *testing.T, url string, into any) int {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == 200 {
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatalf("GET %s: %v in %s", url, err, b)
		}
	}
	return resp.StatusCode
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, within time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ok, status := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s (%s)", what, within, status)
		}
		time.Sleep(25 * time.Millisecond) // polling interval
	}
}

// conn is a loopback TCP connection by its two ports.
type conn struct{ from, to int }

// connsOf returns each pid's TCP connections, read from /proc: the fixture
// sees a scan's connection, and this says whose it is. Both ports are
// needed: the kernel gives one local port to connections to different
// places. The table is read once for all: it holds every TIME_WAIT socket
// of the run, tens of thousands of lines, and takes a while to read.
func connsOf(pids ...int) (map[int]map[conn]bool, error) {
	owner := map[string]int{} // socket inode → pid
	for _, pid := range pids {
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			return nil, err
		}
		for _, fd := range fds {
			link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
			if err == nil && strings.HasPrefix(link, "socket:[") {
				owner[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = pid
			}
		}
	}
	out := map[int]map[conn]bool{}
	for _, pid := range pids {
		out[pid] = map[conn]bool{}
	}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) < 10 {
				continue
			}
			if pid, ok := owner[fields[9]]; ok {
				out[pid][conn{from: hexPort(fields[1]), to: hexPort(fields[2])}] = true
			}
		}
	}
	return out, nil
}

// hexPort reads the port of a /proc/net/tcp address ("0100007F:1F90").
func hexPort(addr string) int {
	p, _ := strconv.ParseUint(addr[strings.LastIndexByte(addr, ':')+1:], 16, 32)
	return int(p)
}

// problems reports a bounded number of failures (through errorf, a test's
// Errorf) so that one systematic bug over 200 monitors stays readable.
type problems struct {
	errorf func(format string, args ...any)
	n      int
}

const maxProblems = 30

func (p *problems) add(format string, args ...any) {
	p.n++
	if p.n <= maxProblems {
		p.errorf(format, args...)
	}
}

func (p *problems) close() {
	if p.n > maxProblems {
		p.errorf("… and %d more problems like these", p.n-maxProblems)
	}
}

// checkSignatures verifies every delivery with its monitor's secret, under
// both schemes it carries, and that webhook-id names the event in the body.
func checkSignatures(p *problems, mons map[int]mon, recs []receipt) int {
	verified := 0
	for _, r := range recs {
		m, ok := mons[r.idx]
		if !ok {
			p.add("a delivery to /hook/%d, which no monitor of this test has", r.idx)
			continue
		}
		if err := webhook.Verify(m.secret, r.header, r.body, r.at); err != nil {
			p.add("delivery %s to monitor %d: X-Scanner-Signature: %v", r.ev.ID, r.idx, err)
			continue
		}
		std := r.header.Clone()
		std.Del(webhook.HeaderSignature)
		if err := webhook.Verify(m.secret, std, r.body, r.at); err != nil {
			p.add("delivery %s to monitor %d: webhook-signature: %v", r.ev.ID, r.idx, err)
			continue
		}
		if got := r.header.Get(webhook.HeaderID); got != r.ev.ID || r.ev.ID == "" {
			p.add("delivery to monitor %d: webhook-id %q, event id %q", r.idx, got, r.ev.ID)
			continue
		}
		if r.ev.MonitorID != m.id {
			p.add("delivery %s to monitor %d (%s) names monitor %s", r.ev.ID, r.idx, m.id, r.ev.MonitorID)
			continue
		}
		verified++
	}
	return verified
}

// slot is one scheduled run of a monitor as the deliveries tell it.
type slot struct {
	due      time.Time
	id       string    // its scan.completed event
	created  time.Time // the event's created_at: when its scan had finished
	receipts int       // deliveries of the event (re-sends included)
	ok       int       // of them, answered 2xx
	scans    []scanReq // homepage requests attributed to the run
	grid     time.Time // the slot it stands for on the monitor's cadence (checkRuns)
}

// slotsOf groups a monitor's scan.completed deliveries by the run they come
// from (data.scheduled_for) and reports a run with two event ids: a run's
// events are committed only under its lease, so that must never happen.
func slotsOf(p *problems, m mon, recs []receipt) []*slot {
	byDue := map[int64]*slot{}
	for _, r := range recs {
		if r.idx != m.idx || r.ev.Type != webhook.EventScanCompleted || r.ev.Test {
			continue
		}
		k := r.ev.Data.ScheduledFor.UnixMilli()
		s := byDue[k]
		if s == nil {
			s = &slot{due: r.ev.Data.ScheduledFor.UTC(), id: r.ev.ID, created: r.ev.CreatedAt}
			byDue[k] = s
		}
		if r.ev.ID != s.id {
			p.add("monitor %d: the run due %s has two events, %s and %s (a run done twice was recorded twice)", m.idx, s.due.Format(time.StampMilli), s.id, r.ev.ID)
			continue
		}
		s.receipts++
		if r.status >= 200 && r.status < 300 && !r.aborted {
			s.ok++
		}
	}
	out := make([]*slot, 0, len(byDue))
	for _, s := range byDue {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].due.Before(out[j].due) })
	return out
}

// attribute hands each scan of the monitor to the run it was for: runs of a
// monitor are strictly one after another (the next is scheduled only when
// one is recorded), so a scan belongs to the first run whose event was
// created after the scan started.
func attribute(slots []*slot, idx int, scans []scanReq) {
	for _, sc := range scans {
		if sc.idx != idx {
			continue
		}
		j := sort.Search(len(slots), func(j int) bool { return slots[j].created.After(sc.start) })
		if j < len(slots) {
			slots[j].scans = append(slots[j].scans, sc)
		}
	}
}

// runCount is what checkRuns found over the window.
type runCount struct {
	runs, resent int
	doubled      []*slot        // scanned twice, each in a crash window
	shifted      []*slot        // reported under a moved scheduled_for (see crash.moved)
	why          map[string]int // doubled and shifted runs by crash window ("kill", "stall")
	coalesced    []*slot        // due after a gap of whole cadences: the one before ran more than a cadence late
	maxLate      time.Duration
}

// nextSlot is the rule a run's successor is due by: one cadence after it,
// unless the run finished (at done) more than a whole cadence past that
// slot, when the missed slots are coalesced into the latest one (the
// schedule keeps milliseconds).
func nextSlot(due time.Time, cadence time.Duration, done time.Time) time.Time {
	next := due.Add(cadence)
	if behind := done.Sub(next); behind > cadence {
		next = next.Add(behind / cadence * cadence)
	}
	return time.UnixMilli(next.UnixMilli()).UTC()
}

func (c *runCount) add(o runCount) {
	c.runs += o.runs
	c.resent += o.resent
	c.doubled = append(c.doubled, o.doubled...)
	c.shifted = append(c.shifted, o.shifted...)
	c.coalesced = append(c.coalesced, o.coalesced...)
	for k, n := range o.why {
		if c.why == nil {
			c.why = map[string]int{}
		}
		c.why[k] += n
	}
	if o.maxLate > c.maxLate {
		c.maxLate = o.maxLate
	}
}

func (c *runCount) count(why string) {
	if c.why == nil {
		c.why = map[string]int{}
	}
	c.why[why]++
}

// crash describes the crash windows of a test, for checkRuns: the kill it
// made, and the stalls the origins logged. Each answers which window ("kill",
// "stall") explains what it is asked about, or "" for none.
type crash struct {
	// inFlight: the run was under way when its origin died or stalled (its
	// first scan began before, its event was made after), so a second scan
	// is allowed.
	inFlight func(m mon, s *slot) string
	// moved: the run due at grid was held by an origin that died or stalled
	// and is reported with scheduled_for = s.due, where the store put it
	// when the claim was given up (a lease's end, or the restart), instead
	// of grid. The store keeps a claimed run's due time with its lease, so
	// this must not happen (failIfMoved); it is recognised in that exact
	// form so that a regression is named precisely.
	moved func(m mon, grid time.Time, s *slot) string
	// redoFrom is the earliest a run held in a crash window may be scanned
	// again: its claim must have ended first.
	redoFrom func(*slot) time.Time
}

// checkRuns holds one monitor's runs due up to windowEnd to the promises:
// the first at creation, then one every cadence with none missed (slots are
// coalesced only after a run more than a whole cadence late), each with
// one event delivered 2xx at least once, each scanned once; twice only when
// the run was in a crash window.
func checkRuns(p *problems, m mon, slots []*slot, cadence time.Duration, windowEnd time.Time, k crash) runCount {
	var c runCount
	var in []*slot
	for _, s := range slots {
		if !s.due.After(windowEnd) {
			in = append(in, s)
		}
	}
	if len(in) == 0 {
		p.add("monitor %d: no run reported at all (first due %s)", m.idx, m.firstDue.Format(time.StampMilli))
		return c
	}
	for i, s := range in {
		grid := m.firstDue
		if i > 0 {
			grid = nextSlot(in[i-1].due, cadence, in[i-1].created)
		}
		s.grid = s.due
		if s.due.Equal(grid) {
			if i > 0 && !grid.Equal(in[i-1].due.Add(cadence)) {
				c.coalesced = append(c.coalesced, s)
			}
			continue
		}
		if why := k.moved(m, grid, s); why != "" {
			s.grid = grid
			c.shifted = append(c.shifted, s)
			c.count("moved by " + why)
			continue
		}
		if i == 0 {
			p.add("monitor %d: the first run reported was due %s; the one due at creation, %s, is missing; %s", m.idx, s.due.Format(time.StampMilli), grid.Format(time.StampMilli), history(slots))
		} else {
			p.add("monitor %d: runs due %s and %s are %s apart, not one cadence (%s): the run due %s was missed; %s",
				m.idx, in[i-1].due.Format(time.StampMilli), s.due.Format(time.StampMilli), s.due.Sub(in[i-1].due), cadence, grid.Format(time.StampMilli), history(slots))
		}
	}
	if last := in[len(in)-1]; !nextSlot(last.due, cadence, last.created).After(windowEnd) {
		p.add("monitor %d: no run reported after the one due %s, though runs were due until %s", m.idx, last.due.Format(time.StampMilli), windowEnd.Format(time.StampMilli))
	}
	for _, s := range in {
		c.runs++
		c.resent += s.receipts - 1
		if s.ok == 0 {
			p.add("monitor %d: event %s (run due %s) was never answered 2xx (%d attempts seen)", m.idx, s.id, s.due.Format(time.StampMilli), s.receipts)
		}
		if late := s.created.Sub(s.grid); late > c.maxLate {
			c.maxLate = late
		}
		n := len(s.scans)
		why := ""
		if n == 2 {
			why = k.inFlight(m, s)
		}
		switch {
		case n == 1:
		case n == 0:
			p.add("monitor %d: run due %s was reported (event %s) but its site saw no scan for it", m.idx, s.due.Format(time.StampMilli), s.id)
		case why != "":
			c.doubled = append(c.doubled, s)
			c.count("scanned twice in a " + why)
			if from := k.redoFrom(s); s.scans[1].start.Before(from) {
				p.add("monitor %d: run due %s, in flight at a %s, was scanned again at %s, before its claim could have ended (%s)", m.idx, s.grid.Format(time.StampMilli), why, s.scans[1].start.Format(time.StampMilli), from.Format(time.StampMilli))
			}
		default:
			p.add("monitor %d: run due %s was scanned %d times (first at %s), and it was in no crash window; %s", m.idx, s.grid.Format(time.StampMilli), n, s.scans[0].start.Format(time.StampMilli), history(slots))
		}
	}
	return c
}

// failIfMoved fails a test in which runs came back under a moved
// scheduled_for: a run taken over after its origin died (or stalled) must
// keep its own slot (the store carries the due time in the lease).
func failIfMoved(t *testing.T, total runCount, where string) {
	t.Helper()
	if len(total.shifted) == 0 {
		return
	}
	s := total.shifted[0]
	t.Errorf("%d runs held by a process that died (or stalled) were reported with scheduled_for set to %s instead of their slot (e.g. due %s, reported as %s): the store lost a claimed run's due time (origin/store ClaimRuns, claimDue, releaseDeadClaims)",
		len(total.shifted), where, s.grid.Format(time.StampMilli), s.due.Format(time.StampMilli))
}

// storeFailures reads, from an origin's log, when its store calls failed
// (Redis did not answer within the store's call timeout, or the breaker was
// open). Work whose store calls fail is handed back or redone when its
// lease ends, by design: those seconds are crash windows of their own. The
// log has whole seconds.
func storeFailures(log string) []time.Time {
	var out []time.Time
	for _, m := range failureLine.FindAllStringSubmatch(log, -1) {
		if at, err := time.ParseInLocation("2006/01/02 15:04:05", m[1], time.Local); err == nil {
			out = append(out, at)
		}
	}
	return out
}

var failureLine = regexp.MustCompile(`(?m)^(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d) WARN monitors: .*state store unavailable`)

// history is a monitor's runs and scans, for a failure message.
func history(slots []*slot) string {
	var b strings.Builder
	b.WriteString("its runs (due → event made; scans begun):")
	for _, s := range slots {
		fmt.Fprintf(&b, "\n\t%s → %s;", s.due.Format(time.StampMilli), s.created.Format(time.StampMilli))
		for _, sc := range s.scans {
			fmt.Fprintf(&b, " %s", sc.start.Format(time.StampMilli))
			if sc.aborted {
				b.WriteString(" (cut)")
			}
		}
	}
	return b.String()
}

// cpu is the CPU time used so far by the test process (fixture sites and
// receiver) and by the children it waited for (the agentready processes,
// and go build).
type cpu struct{ self, kids time.Duration }

func cpuNow() cpu {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	sec := func(r syscall.Rusage) time.Duration { return time.Duration(r.Utime.Nano() + r.Stime.Nano()) }
	return cpu{sec(self), sec(kids)}
}

// since says how much CPU the test used after c, for the log.
func (c cpu) since() string {
	now := cpuNow()
	return fmt.Sprintf("CPU: test process %s, agentready processes %s", (now.self - c.self).Round(10*time.Millisecond), (now.kids - c.kids).Round(10*time.Millisecond))
}
