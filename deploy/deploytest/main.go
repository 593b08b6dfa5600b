// Command deploytest is the scenario of `make test-deploy` (deploy/test-deploy.sh
// installs and starts what it needs, builds the images, then runs this from
// the repository's root). Against the real images and the real daemon it
// proves, in order:
//
//   - the image's size, and its cold start: `docker run` to /healthz 200;
//   - Chromium in the image renders (`agentready scan --render`), without and
//     with its sandbox (the latter where seccomp lets it make namespaces);
//   - the build context leaves out what .dockerignore says (secrets, local
//     state), as docker build reads it;
//   - deploy/compose.yaml (+ compose.test.yaml: the testkit container with the
//     fixture site and a webhook receiver) comes up healthy, every container
//     without capabilities, with no_new_privs, a read-only root and a
//     process cap; Redis refuses a client without its password, which is on
//     no command line, and publishes no port;
//   - serve warns at start about a Redis that answers without the password
//     its URL names, and about missing signing secrets on a public address,
//     and the composition's processes warn about nothing;
//   - the edge believes X-Forwarded-For from the composition's network
//     (AGENTREADY_TRUSTED_PROXIES): each client behind the proxy has its own
//     allowance;
//   - through the edge: a scan as JSON and as Server-Sent Events, a
//     screenshot, a monitor whose delivery the receiver gets and
//     `agentready webhook verify` (in the image) accepts, and refuses once
//     the body is altered;
//   - `docker kill` of one origin: scans keep being answered by the other
//     (every one, timed), and so do the monitor's deliveries;
//   - `docker stop` of the last origin during a scan: it drains within
//     docker stop's 10 s and exits by itself (0 or 143, not 137);
//   - `docker-compose down -v` leaves no container, network or volume.
//
// Every wait polls with a deadline; a failure says what was expected and
// prints the containers' logs. The measurements are printed at the end.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentready/agentready/internal/testing/sse"
)

var (
	imageName   = flag.String("image", "agentready:latest", "the image under test")
	testkit     = flag.String("testkit", "agentready-testkit:latest", "the testkit image (deploy/testkit)")
	redisImage  = flag.String("redis", "agentready-redis:latest", "the Redis image")
	project     = flag.String("project", "agentready-deploytest", "the compose project name")
	coldStarts  = flag.Int("cold-starts", 3, "how many times to time docker run to /healthz 200 (0: none)")
	keep        = flag.Bool("keep", false, "leave the composition running after a failure (to look at it)")
	composeBin  = flag.String("compose", "docker-compose", "the compose command (docker-compose, or \"docker compose\")")
	buildSecs   = flag.String("build-seconds", "", "the image build time to report (deploy/image.sh measured it)")
	siteURL     = "http://site.agentready.test:8000/"
	slowSiteURL = "http://slow.agentready.test:8001/"
	hookURL     = "http://hooks.agentready.test:9000/hook"
)

// measured is what the run prints at the end, in order.
var measured []string

func note(format string, a ...any) {
	line := fmt.Sprintf(format, a...)
	measured = append(measured, line)
	fmt.Println("  measured: " + line)
}

func step(format string, a ...any) { fmt.Printf("== "+format+"\n", a...) }

// failure ends the run after cleaning up.
type failure struct{ msg string }

func fail(format string, a ...any) { panic(failure{fmt.Sprintf(format, a...)}) }

func main() {
	flag.Parse()
	c := &composition{redisPassword: randomHex(32)}
	var err error
	if c.subnet, err = freeSubnet(); err == nil {
		c.envFile, err = writeEnv(c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "deploytest:", err)
		os.Exit(1)
	}
	env := c.envFile
	defer os.RemoveAll(filepath.Dir(env))
	ok := func() (ok bool) {
		defer func() {
			if r := recover(); r != nil {
				f, isFailure := r.(failure)
				if !isFailure {
					panic(r)
				}
				fmt.Fprintf(os.Stderr, "\nFAIL: %s\n\n", f.msg)
				c.dumpLogs()
				ok = false
			}
		}()
		run(c)
		return true
	}()
	if !ok && *keep {
		fmt.Fprintf(os.Stderr, "left running (-keep); remove it with: %s --env-file %s -p %s -f deploy/compose.yaml -f deploy/compose.test.yaml down -v\n", *composeBin, env, *project)
		os.Exit(1)
	}
	if err := c.down(); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		ok = false
	}
	fmt.Println("\nMeasured:")
	for _, m := range measured {
		fmt.Println("  " + m)
	}
	if !ok {
		os.Exit(1)
	}
	fmt.Println("\nPASS: the deployment works")
}

func run(c *composition) {
	c.volumesBefore = volumes()
	step("image %s", *imageName)
	size := strings.TrimSpace(mustOut("docker", "image", "inspect", "-f", "{{.Size}}", *imageName))
	n, _ := strconv.ParseInt(size, 10, 64)
	if *buildSecs != "" {
		note("image build: %s s (deploy/image.sh)", *buildSecs)
	}
	note("image size: %d MB uncompressed (budget 600 MB)", n/1_000_000)
	if n > 600_000_000 {
		fail("the image is %d MB, over the 600 MB budget", n/1_000_000)
	}
	coldStart()

	step("the build context (.dockerignore)")
	buildContext()

	step("compose up (project %s)", *project)
	t0 := time.Now()
	c.compose("up", "-d")
	edge := "http://" + c.port("edge", "8080")
	receiver := "http://" + c.port("testkit", "9000")
	waitHealthy(edge+"/healthz", 120*time.Second)
	note("compose up to the edge's /healthz 200: %s (redis, testkit, two origins, edge; health checks in order)", since(t0))

	step("hardening: capabilities, read-only roots, process caps, Redis's password")
	hardening(c)
	redisPassword(c)
	startupWarnings(c)

	step("Chromium in the image renders (scan --render, on the composition's network)")
	renderInImage(c, false)
	renderInImage(c, true)

	step("scans through the edge")
	scanJSON(edge)
	scanSSE(edge)
	screenshot(edge)
	trustedProxies(edge)

	step("a monitor and its signed delivery")
	mon := createMonitor(edge)
	first := waitDelivery(receiver, mon.ID, time.Time{}, 60*time.Second)
	verifyDelivery(first, mon.Secret)

	step("docker kill origin-a")
	killed := c.kill("origin-a")
	failover(c, edge, killed)
	after := waitDelivery(receiver, mon.ID, killed, 90*time.Second)
	note("monitor delivery after the kill: %s after it (run lease 10 s in the test)", after.ReceivedAt.Sub(killed).Round(100*time.Millisecond))
	verifyDelivery(after, mon.Secret)

	step("docker stop origin-b during a scan (drain)")
	drain(c, edge)
}

// --- the composition

type composition struct {
	envFile       string
	up            bool
	volumesBefore map[string]bool
	redisPassword string
	subnet        netip.Prefix
}

func volumes() map[string]bool {
	vs := map[string]bool{}
	out, _ := exec.Command("docker", "volume", "ls", "-q").Output()
	for _, v := range strings.Fields(string(out)) {
		vs[v] = true
	}
	return vs
}

func (c *composition) command(args ...string) *exec.Cmd {
	parts := strings.Fields(*composeBin)
	all := append(parts[1:], "--env-file", c.envFile, "-p", *project, "-f", "deploy/compose.yaml", "-f", "deploy/compose.test.yaml")
	cmd := exec.Command(parts[0], append(all, args...)...)
	cmd.Env = append(os.Environ(), "AGENTREADY_IMAGE="+*imageName, "TESTKIT_IMAGE="+*testkit, "REDIS_IMAGE="+*redisImage)
	return cmd
}

func (c *composition) compose(args ...string) string {
	c.up = true
	out, err := c.command(args...).CombinedOutput()
	if err != nil {
		fail("%s %s: %v\n%s", *composeBin, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// port is the host address a service's port is published on.
func (c *composition) port(service, port string) string {
	addr := strings.TrimSpace(c.compose("port", service, port))
	if addr == "" || !strings.Contains(addr, ":") {
		fail("%s publishes no port %s (got %q)", service, port, addr)
	}
	return strings.Replace(addr, "0.0.0.0:", "127.0.0.1:", 1)
}

func (c *composition) container(service string) string {
	id := strings.TrimSpace(c.compose("ps", "-q", service))
	if id == "" {
		fail("no container for %s", service)
	}
	return id
}

// kill sends SIGKILL to a service's container and returns when docker
// says it is dead.
func (c *composition) kill(service string) time.Time {
	id := c.container(service)
	mustOut("docker", "kill", id)
	return time.Now()
}

func (c *composition) network() string { return *project + "_default" }

func (c *composition) dumpLogs() {
	if !c.up {
		return
	}
	out, _ := c.command("ps").CombinedOutput()
	fmt.Fprintf(os.Stderr, "--- %s ps\n%s", *composeBin, out)
	out, _ = c.command("logs", "--no-color", "--tail", "150").CombinedOutput()
	fmt.Fprintf(os.Stderr, "--- the containers' logs (last 150 lines each)\n%s\n", out)
}

// down removes the composition and checks that nothing of it is left.
func (c *composition) down() error {
	if !c.up {
		return nil
	}
	step("compose down -v")
	if out, err := c.command("down", "-v", "--remove-orphans", "--timeout", "10").CombinedOutput(); err != nil {
		return fmt.Errorf("%s down: %v\n%s", *composeBin, err, out)
	}
	label := "label=com.docker.compose.project=" + *project
	for _, what := range [][]string{
		{"ps", "-a", "-q", "--filter", label},
		{"network", "ls", "-q", "--filter", label},
		{"volume", "ls", "-q", "--filter", label},
	} {
		out, err := exec.Command("docker", what...).Output()
		if err != nil {
			return fmt.Errorf("docker %s: %v", strings.Join(what, " "), err)
		}
		if left := strings.Fields(string(out)); len(left) > 0 {
			return fmt.Errorf("after down, docker %s still lists %v", what[0], left)
		}
	}
	var left []string
	for v := range volumes() {
		if !c.volumesBefore[v] {
			left = append(left, v)
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("the run left volumes behind: %v", left)
	}
	fmt.Println("  nothing of the composition is left (containers, networks, volumes)")
	return nil
}

// writeEnv writes the composition's settings: fresh shared secrets and Redis
// password (compose requires all three), allowances big enough for the scans
// below, the edge published on a free port, and the composition's network
// with the edge trusting it as a reverse proxy's (as the example settings
// do when the subnet is compose's default).
func writeEnv(c *composition) (string, error) {
	dir, err := os.MkdirTemp("", "agentready-deploytest")
	if err != nil {
		return "", err
	}
	trusted := c.subnet.String()
	if c.subnet.String() == defaultSubnet {
		if trusted, err = exampleSetting("AGENTREADY_TRUSTED_PROXIES"); err != nil {
			return "", err
		}
	}
	lines := []string{
		"AGENTREADY_TOKEN_KEYS=t1:" + randomHex(32),
		"AGENTREADY_EDGE_SECRET=" + randomHex(32),
		"REDIS_PASSWORD=" + c.redisPassword,
		"AGENTREADY_FREE_DAILY=1000",
		"AGENTREADY_PUBLISH=127.0.0.1:",
		"AGENTREADY_SUBNET=" + c.subnet.String(),
		"AGENTREADY_TRUSTED_PROXIES=" + trusted,
	}
	path := filepath.Join(dir, "agentready.env")
	lines = append(lines, "AGENTREADY_ENV_FILE="+path) // the file names itself (deploy/compose.yaml)
	return path, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
}

func randomHex(n int) string {
	b := make([]byte, n/2)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// --- single container

func coldStart() {
	if *coldStarts <= 0 { // -cold-starts 0: left out, e.g. on a machine too busy to time it
		return
	}
	var times []time.Duration
	for i := 0; i < *coldStarts; i++ {
		name := fmt.Sprintf("%s-cold-%d", *project, i)
		t0 := time.Now()
		out, err := exec.Command("docker", "run", "-d", "--rm", "--name", name, "-p", "127.0.0.1::8080", *imageName).CombinedOutput()
		if err != nil {
			fail("docker run %s: %v\n%s", *imageName, err, out)
		}
		func() {
			defer exec.Command("docker", "rm", "-f", "-v", name).Run() // -v: its /data volume too
			addr := strings.TrimSpace(mustOut("docker", "port", name, "8080"))
			if i := strings.IndexByte(addr, '\n'); i > 0 {
				addr = addr[:i]
			}
			if err := pollHealthy("http://"+strings.Replace(addr, "0.0.0.0:", "127.0.0.1:", 1)+"/healthz", 30*time.Second); err != nil {
				logs, _ := exec.Command("docker", "logs", name).CombinedOutput()
				fail("a container of %s did not answer /healthz 200 within 30 s: %v\n%s", *imageName, err, logs)
			}
			times = append(times, time.Since(t0))
		}()
	}
	slices.Sort(times)
	parts := make([]string, len(times))
	for i, d := range times {
		parts[i] = d.Round(10 * time.Millisecond).String()
	}
	note("cold start, docker run to /healthz 200: %s (median of %d runs: %s; budget 5 s)", strings.Join(parts, ", "), len(times), times[len(times)/2].Round(10*time.Millisecond))
	if times[len(times)/2] > 5*time.Second {
		fail("the median cold start %s is over the 5 s budget", times[len(times)/2])
	}
}

// renderInImage runs `agentready scan --render` in a container of the image
// on the composition's network: Chromium starts as the image's user and
// renders the fixture's JavaScript (its WebMCP tool appears only then).
func renderInImage(c *composition, sandbox bool) {
	args := []string{"run", "--rm", "--network", c.network()}
	what := "without Chromium's sandbox (the default)"
	if sandbox {
		// Docker's default seccomp profile refuses the user namespaces the
		// sandbox needs; unconfined lets Chromium make them.
		args = append(args, "--security-opt", "seccomp=unconfined", "-e", "AGENTREADY_CHROMIUM_SANDBOX=1")
		what = "with Chromium's sandbox (seccomp=unconfined, AGENTREADY_CHROMIUM_SANDBOX=1)"
	}
	args = append(args, *imageName, "scan", "--render", siteURL)
	t0 := time.Now()
	out, err := exec.Command("docker", args...).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("create_invoice_draft")) {
		fail("scan --render in the image %s: %v; the WebMCP tool the page registers at run time is missing:\n%s", what, err, out)
	}
	note("scan --render in a container %s: %s", what, since(t0))
}

// --- through the edge

var client = &http.Client{Timeout: 90 * time.Second}

type report struct {
	URL          string            `json:"url"`
	CurrentLevel int               `json:"currentLevel"`
	Checks       []json.RawMessage `json:"checks"`
}

func getScan(edge string, fresh bool) (report, time.Duration, error) {
	u := edge + "/api/scan?format=json&url=" + siteURL
	if fresh {
		u += "&fresh=1"
	}
	t0 := time.Now()
	resp, err := client.Get(u)
	if err != nil {
		return report{}, 0, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(t0)
	var r report
	if resp.StatusCode != 200 {
		return r, d, fmt.Errorf("%d %.300s", resp.StatusCode, body)
	}
	if want := map[bool]string{true: "MISS", false: "HIT"}[fresh]; resp.Header.Get("X-Cache") != want {
		return r, d, fmt.Errorf("X-Cache: %q, want %s (fresh=%v)", resp.Header.Get("X-Cache"), want, fresh)
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return r, d, fmt.Errorf("not a report: %v", err)
	}
	if r.CurrentLevel != 3 || len(r.Checks) != 48 {
		return r, d, fmt.Errorf("the fixture site got level %d with %d checks; want level 3 with 48", r.CurrentLevel, len(r.Checks))
	}
	return r, d, nil
}

func scanJSON(edge string) {
	var fresh []time.Duration
	for i := 0; i < 6; i++ {
		_, d, err := getScan(edge, true)
		if err != nil {
			fail("GET /api/scan (JSON) through the edge: %v", err)
		}
		fresh = append(fresh, d)
	}
	_, hit, err := getScan(edge, false)
	if err != nil {
		fail("GET /api/scan (cached) through the edge: %v", err)
	}
	slices.Sort(fresh)
	note("scan through edge → origin (JSON, fresh scan of the fixture): median %s, max %s over %d; cached answer %s",
		fresh[len(fresh)/2].Round(time.Millisecond), fresh[len(fresh)-1].Round(time.Millisecond), len(fresh), hit.Round(time.Millisecond))
}

func scanSSE(edge string) {
	t0 := time.Now()
	events, err := stream(context.Background(), edge+"/api/scan?fresh=1&url="+siteURL, nil)
	if err != nil {
		fail("the scan's event stream through the edge: %v", err)
	}
	checks := 0
	for _, e := range events {
		if e.Name == "check" {
			checks++
		}
	}
	last := events[len(events)-1]
	var r report
	if events[0].Name != "scan.started" || last.Name != "scan.completed" || json.Unmarshal([]byte(last.Data), &r) != nil || r.CurrentLevel != 3 || checks != 48 {
		fail("the event stream: first %q, last %q, %d check events (want scan.started, 48 checks, scan.completed at level 3)", events[0].Name, last.Name, checks)
	}
	note("scan as Server-Sent Events through the edge: %d events in %s", len(events), since(t0))
}

// stream reads a scan's Server-Sent Events to its last event; started (when
// set) is closed at the first.
func stream(ctx context.Context, url string, started chan<- struct{}) ([]sse.Event, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("%d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var events []sse.Event
	r := sse.NewReader(resp.Body)
	for {
		e, err := r.Next()
		if err != nil {
			if err == io.EOF {
				err = errors.New("the stream ended without scan.completed or error")
			}
			return events, err
		}
		if e.Name == "heartbeat" {
			continue
		}
		if len(events) == 0 && started != nil {
			close(started)
		}
		events = append(events, e)
		if e.Name == "scan.completed" || e.Name == "error" {
			return events, nil
		}
	}
}

func screenshot(edge string) {
	t0 := time.Now()
	deadline := t0.Add(90 * time.Second)
	for {
		resp, err := client.Get(edge + "/api/screenshot?url=" + siteURL)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				cfg, err := png.DecodeConfig(bytes.NewReader(body))
				if err != nil || resp.Header.Get("Content-Type") != "image/png" {
					fail("GET /api/screenshot answered 200 %s that is not a PNG: %v", resp.Header.Get("Content-Type"), err)
				}
				note("screenshot through the edge: %dx%d PNG, %d KB, %s after the scans (captured in the background by an origin's Chromium)", cfg.Width, cfg.Height, len(body)/1000, since(t0))
				return
			}
			if resp.StatusCode != 404 && resp.StatusCode != 503 {
				fail("GET /api/screenshot: %d %.300s", resp.StatusCode, body)
			}
			if time.Now().After(deadline) {
				fail("no screenshot within 90 s of the scans; the last answer: %d %.300s", resp.StatusCode, body)
			}
		} else if time.Now().After(deadline) {
			fail("GET /api/screenshot: %v", err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

type monitor struct {
	ID     string `json:"id"`
	Secret string `json:"secret"`
}

func createMonitor(edge string) monitor {
	body := fmt.Sprintf(`{"url":%q,"callback_url":%q,"cadence":"5s","events":["scan.completed"]}`, siteURL, hookURL)
	resp, err := client.Post(edge+"/api/monitors", "application/json", strings.NewReader(body))
	if err != nil {
		fail("POST /api/monitors: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var m monitor
	if resp.StatusCode != 201 || json.Unmarshal(b, &m) != nil || m.ID == "" || !strings.HasPrefix(m.Secret, "whsec_") {
		fail("POST /api/monitors: %d %.400s", resp.StatusCode, b)
	}
	fmt.Printf("  monitor %s, every 5 s, delivering to %s\n", m.ID, hookURL)
	return m
}

type delivery struct {
	Header     http.Header `json:"header"`
	Body       string      `json:"body"`
	ReceivedAt time.Time   `json:"received_at"`
}

// waitDelivery polls the receiver for a delivery of the monitor received
// after since.
func waitDelivery(receiver, monitorID string, since time.Time, within time.Duration) delivery {
	deadline := time.Now().Add(within)
	for {
		resp, err := client.Get(receiver + "/deliveries")
		if err == nil {
			var all []delivery
			err = json.NewDecoder(resp.Body).Decode(&all)
			resp.Body.Close()
			for _, d := range all {
				if strings.Contains(d.Body, `"monitor_id":"`+monitorID+`"`) && d.ReceivedAt.After(since) {
					return d
				}
			}
		}
		if time.Now().After(deadline) {
			fail("no delivery of monitor %s after %s within %s (receiver: %v)", monitorID, since.Format(time.RFC3339Nano), within, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// verifyDelivery runs `agentready webhook verify` from the image on the
// captured delivery, then on the same delivery with one byte of the body
// changed, which must be refused.
func verifyDelivery(d delivery, secret string) {
	dir, err := os.MkdirTemp("", "agentready-delivery")
	if err != nil {
		fail("%v", err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	var hdr strings.Builder
	keys := make([]string, 0, len(d.Header))
	for k := range d.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range d.Header[k] {
			fmt.Fprintf(&hdr, "%s: %s\n", k, v)
		}
	}
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			fail("%v", err)
		}
	}
	write("headers", hdr.String())
	write("body", d.Body)
	write("tampered", strings.Replace(d.Body, `"monitor_id"`, `"monitor_Id"`, 1))
	verify := func(body string) (int, string) {
		cmd := exec.Command("docker", "run", "--rm", "-v", dir+":/delivery:ro", "-e", "AGENTREADY_WEBHOOK_SECRET="+secret,
			*imageName, "webhook", "verify", "--headers", "/delivery/headers", "--body", "/delivery/"+body)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode(), string(out)
		} else if err != nil {
			fail("docker run … webhook verify: %v", err)
		}
		return 0, string(out)
	}
	if code, out := verify("body"); code != 0 || !strings.HasPrefix(out, "valid: ") {
		fail("agentready webhook verify refused a real delivery (exit %d):\n%s\nheaders:\n%s", code, out, hdr.String())
	} else {
		fmt.Printf("  agentready webhook verify: %s", out)
	}
	if code, out := verify("tampered"); code != 1 {
		fail("agentready webhook verify did not refuse an altered body (exit %d):\n%s", code, out)
	}
}

// failover scans through the edge right after an origin was killed: every
// scan must be answered, by the other origin, and the edge must say that it
// took the dead one out (by the refused connection or the health check).
func failover(c *composition, edge string, killed time.Time) {
	const n = 12
	var took []time.Duration
	for i := 0; i < n; i++ {
		_, d, err := getScan(edge, true)
		if err != nil {
			fail("scan %d of %d after killing origin-a (%s after the kill): %v", i+1, n, since(killed), err)
		}
		took = append(took, d)
	}
	logs, _ := c.command("logs", "--no-color", "edge").CombinedOutput()
	how := ""
	for _, line := range strings.Split(string(logs), "\n") {
		if strings.Contains(line, "origin-a") && (strings.Contains(line, "refused a connection") || strings.Contains(line, "failed its health check")) {
			how = strings.TrimSpace(line[strings.Index(line, "|")+1:]) // after compose's "edge_1  |"
			break
		}
	}
	if how == "" {
		fail("the edge's log does not say that it took origin-a out of the rotation:\n%s", logs)
	}
	first := took[0]
	slices.Sort(took)
	note("failover: %d of %d fresh scans right after `docker kill origin-a` answered 200 (the first in %s, median %s, max %s; all within %s of the kill); the edge logged: %s",
		n, n, first.Round(time.Millisecond), took[n/2].Round(time.Millisecond), took[n-1].Round(time.Millisecond), since(killed), how)
}

// drain stops origin-b while it scans the slow site for a stream, and
// times docker stop.
func drain(c *composition, edge string) {
	id := c.container("origin-b")
	started := make(chan struct{})
	type outcome struct {
		events []sse.Event
		err    error
	}
	done := make(chan outcome, 1)
	go func() {
		ev, err := stream(context.Background(), edge+"/api/scan?fresh=1&url="+slowSiteURL, started)
		done <- outcome{ev, err}
	}()
	select {
	case <-started:
	case o := <-done:
		fail("the slow scan ended before it started streaming: %v", o.err)
	case <-time.After(30 * time.Second):
		fail("the slow scan did not start streaming within 30 s")
	}
	t0 := time.Now()
	out, err := exec.Command("docker", "stop", id).CombinedOutput() // docker's default: SIGTERM, SIGKILL after 10 s
	took := time.Since(t0)
	if err != nil {
		fail("docker stop origin-b: %v\n%s", err, out)
	}
	state := strings.Fields(mustOut("docker", "inspect", "-f", "{{.State.ExitCode}} {{.State.OOMKilled}}", id))
	o := <-done
	ended := "ended without scan.completed"
	if o.err == nil && len(o.events) > 0 {
		ended = "ended with " + o.events[len(o.events)-1].Name
	}
	note("drain: `docker stop` of origin-b during a streamed scan took %s, exit code %s (0 or 143: it stopped by itself; 137: SIGKILL); the stream %s", took.Round(10*time.Millisecond), state[0], ended)
	if state[0] == "137" || took >= 10*time.Second {
		fail("origin-b did not stop by itself within docker stop's 10 s (exit %s after %s)", state[0], took)
	}
	if o.err != nil || o.events[len(o.events)-1].Name != "scan.completed" {
		fail("the scan in flight was not drained to its end: %v (%d events)", o.err, len(o.events))
	}
}

// --- helpers

func since(t time.Time) time.Duration { return time.Since(t).Round(10 * time.Millisecond) }

func mustOut(name string, args ...string) string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		var stderr []byte
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			stderr = exit.Stderr
		}
		fail("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

func pollHealthy(url string, within time.Duration) error {
	c := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(within)
	var last error
	for time.Now().Before(deadline) {
		resp, err := c.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
			last = fmt.Errorf("answered %d", resp.StatusCode)
		} else {
			last = err
		}
		time.Sleep(20 * time.Millisecond)
	}
	return last
}

func waitHealthy(url string, within time.Duration) {
	if err := pollHealthy(url, within); err != nil {
		fail("%s was not 200 within %s: %v", url, within, err)
	}
}
