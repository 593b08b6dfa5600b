package main

// The deployment's security rules against the real containers
// (docs/deploy.md, "Hardening"). config_test.go checks the same
// rules in the files, without docker.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// defaultSubnet is deploy/compose.yaml's network unless AGENTREADY_SUBNET
// says otherwise; the example settings trust it.
const defaultSubnet = "172.16.88.0/24"

// Files a build context must not carry, and files it must (what
// deploy/Dockerfile copies): buildContext sends a context of these through
// the real .dockerignore to docker build, TestDockerignore reads the patterns.
var (
	contextExcluded = []string{
		"data/deploy-local.env", "data/agentready.db", "bin/agentready", "build/worker/app.wasm",
		".git/config", "tests/node/node_modules/wrangler/package.json", "deploy/production.env",
		".env", "deploy/.env.local", "deploy/tls/server.key", "deploy/tls/server.pem",
	}
	contextKept = []string{
		"go.mod", "go.sum", ".modproxy/agentready-modproxy", "deploy/Dockerfile", "deploy/chromium.sh",
		"deploy/dpkg-excludes.cfg", "deploy/agentready.env.example", "cmd/agentready/main.go",
		"edge/site/app.js", "origin/openapi.json", "testdata/sites/full/index.html",
	}
)

// freeSubnet is the network the composition gets: compose's default when
// no docker network overlaps it (so that the example's trusted proxies are
// the ones tested), else the next free /24, so that a `make deploy-local`
// running beside the test does not make it fail.
func freeSubnet() (netip.Prefix, error) {
	ids, err := exec.Command("docker", "network", "ls", "-q").Output()
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("docker network ls: %v", err)
	}
	var taken []netip.Prefix
	if fields := strings.Fields(string(ids)); len(fields) > 0 {
		out, err := exec.Command("docker", append([]string{"network", "inspect", "-f", "{{range .IPAM.Config}}{{.Subnet}} {{end}}"}, fields...)...).Output()
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("docker network inspect: %v", err)
		}
		for _, f := range strings.Fields(string(out)) {
			if p, err := netip.ParsePrefix(f); err == nil {
				taken = append(taken, p)
			}
		}
	}
	first := netip.MustParsePrefix(defaultSubnet)
	for i := 0; i < 32; i++ {
		b := first.Addr().As4()
		b[2] += byte(i)
		cand := netip.PrefixFrom(netip.AddrFrom4(b), 24)
		if !slices.ContainsFunc(taken, cand.Overlaps) {
			return cand, nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("no /24 from %s on is free for the composition's network: remove unused docker networks (docker network prune)", defaultSubnet)
}

// exampleSetting is a setting's value in deploy/agentready.env.example.
func exampleSetting(key string) (string, error) {
	f, err := os.Open("deploy/agentready.env.example")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key+"="); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("deploy/agentready.env.example sets no %s", key)
}

// buildContext sends docker build a context holding files with secrets
// and local state beside the files the image needs, with the repository's
// .dockerignore, and lists what arrived.
func buildContext() {
	dir, err := os.MkdirTemp("", "agentready-context")
	if err != nil {
		fail("%v", err)
	}
	defer os.RemoveAll(dir)
	ignore, err := os.ReadFile(".dockerignore")
	if err != nil {
		fail("the repository has no .dockerignore: docker build would copy data/deploy-local.env (its secrets) into the build stage: %v", err)
	}
	write := func(rel, content string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fail("%v", err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			fail("%v", err)
		}
	}
	write(".dockerignore", string(ignore))
	for _, rel := range append(slices.Clone(contextExcluded), contextKept...) {
		write(rel, "probe\n")
	}
	write("deploytest.Dockerfile", "FROM "+*imageName+"\nCOPY . /ctx/\n")
	tag := *project + "-context:latest"
	build := exec.Command("docker", "build", "-q", "-t", tag, "-f", filepath.Join(dir, "deploytest.Dockerfile"), dir)
	build.Env = os.Environ()
	if os.Getenv("DOCKER_BUILDKIT") == "" && exec.Command("docker", "buildx", "version").Run() != nil {
		build.Env = append(build.Env, "DOCKER_BUILDKIT=0") // as deploy/image.sh: no buildx, the classic builder
	}
	if out, err := build.CombinedOutput(); err != nil {
		fail("docker build of a probe context: %v\n%s", err, out)
	}
	defer exec.Command("docker", "rmi", "-f", tag).Run()
	listing := mustOut("docker", "run", "--rm", "--entrypoint", "find", tag, "/ctx", "-type", "f")
	got := map[string]bool{}
	for _, l := range strings.Fields(listing) {
		got[strings.TrimPrefix(l, "/ctx/")] = true
	}
	for _, rel := range contextExcluded {
		if got[rel] {
			fail("docker build received %s: .dockerignore must keep it out of the build context", rel)
		}
	}
	for _, rel := range contextKept {
		if !got[rel] {
			fail("docker build did not receive %s, which deploy/Dockerfile needs: .dockerignore leaves it out", rel)
		}
	}
	note("build context through .dockerignore: %d secret or local files left out, %d files the build needs kept (docker build)", len(contextExcluded), len(contextKept))
}

// procStatus reads fields of /proc/1/status in a container.
func procStatus(id string) map[string]string {
	out := map[string]string{}
	for _, l := range strings.Split(mustOut("docker", "exec", id, "cat", "/proc/1/status"), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// hardening checks every container of the composition as docker made it
// and as its first process sees itself.
func hardening(c *composition) {
	for _, svc := range []string{"redis", "origin-a", "origin-b", "edge"} {
		id := c.container(svc)
		var hc struct {
			ReadonlyRootfs bool
			PidsLimit      *int64
			CapDrop        []string
			CapAdd         []string
			SecurityOpt    []string
			Privileged     bool
		}
		if err := json.Unmarshal([]byte(mustOut("docker", "inspect", "-f", "{{json .HostConfig}}", id)), &hc); err != nil {
			fail("docker inspect %s: %v", svc, err)
		}
		switch {
		case !hc.ReadonlyRootfs:
			fail("%s: the root filesystem is writable (want read_only)", svc)
		case hc.PidsLimit == nil || *hc.PidsLimit <= 0:
			fail("%s: no pids limit", svc)
		case !slices.Contains(hc.CapDrop, "ALL") || len(hc.CapAdd) > 0 || hc.Privileged:
			fail("%s: capabilities dropped %q, added %q, privileged %v (want all dropped, none added)", svc, hc.CapDrop, hc.CapAdd, hc.Privileged)
		case !slices.Contains(hc.SecurityOpt, "no-new-privileges:true"):
			fail("%s: security options %q lack no-new-privileges:true", svc, hc.SecurityOpt)
		}
		st := procStatus(id)
		if st["CapBnd"] != "0000000000000000" || st["CapEff"] != "0000000000000000" || st["NoNewPrivs"] != "1" {
			fail("%s: its first process has CapBnd %s, CapEff %s, NoNewPrivs %s (want no capabilities and no_new_privs)", svc, st["CapBnd"], st["CapEff"], st["NoNewPrivs"])
		}
		rootRO := false
		for _, l := range strings.Split(mustOut("docker", "exec", id, "cat", "/proc/mounts"), "\n") {
			if f := strings.Fields(l); len(f) > 3 && f[1] == "/" {
				rootRO = strings.HasPrefix(f[3], "ro,") || f[3] == "ro"
			}
		}
		if !rootRO {
			fail("%s: / is not mounted read-only inside the container", svc)
		}
		if strings.HasPrefix(svc, "origin") {
			// The embedded state's directory stays a volume, writable.
			if out, err := exec.Command("docker", "exec", id, "sh", "-c", "touch /data/.deploytest && rm /data/.deploytest").CombinedOutput(); err != nil {
				fail("%s: /data is not writable: %v\n%s", svc, err, out)
			}
		}
	}
	note("hardening: redis, both origins and the edge run with no capabilities (bounding set empty), no_new_privs, a read-only root and a pids limit; the origins' /data stays writable")
}

// redisPassword: Redis answers the composition's network only with its
// password, which is on no command line of any container and not in Redis's
// own environment.
func redisPassword(c *composition) {
	id := c.container("redis")
	if ports := strings.TrimSpace(mustOut("docker", "port", id)); ports != "" {
		fail("redis publishes ports: %s", ports)
	}
	ping := func(withPassword bool) string {
		args := []string{"run", "--rm", "--network", c.network()}
		cmd := exec.Command("docker")
		cmd.Env = os.Environ()
		if withPassword {
			// -e NAME without a value: docker takes it from its own
			// environment, so the password is not on this command line either.
			args = append(args, "-e", "REDISCLI_AUTH")
			cmd.Env = append(cmd.Env, "REDISCLI_AUTH="+c.redisPassword)
		}
		cmd.Args = append(cmd.Args, append(args, *redisImage, "redis-cli", "-h", "redis", "ping")...)
		out, _ := cmd.CombinedOutput()
		return strings.TrimSpace(string(out))
	}
	if out := ping(false); !strings.Contains(out, "NOAUTH") {
		fail("redis answered a PING without the password from the composition's network with %q; want NOAUTH (requirepass)", out)
	}
	if out := ping(true); out != "PONG" {
		fail("redis answered a PING with its password with %q; want PONG", out)
	}
	for _, svc := range []string{"redis", "origin-a", "origin-b", "edge"} {
		sid := c.container(svc)
		top, err := exec.Command("docker", "top", sid, "-eo", "pid,args").CombinedOutput()
		if err != nil {
			fail("docker top %s: %v\n%s", svc, err, top)
		}
		inspect := mustOut("docker", "inspect", "-f", "{{json .Path}} {{json .Args}}", sid)
		if strings.Contains(string(top), c.redisPassword) || strings.Contains(inspect, c.redisPassword) {
			fail("%s: Redis's password is on a command line (docker top or docker inspect's Path and Args show it)", svc)
		}
	}
	if env := mustOut("docker", "exec", id, "cat", "/proc/1/environ"); strings.Contains(env, "REDIS_PASSWORD=") {
		fail("redis-server runs with REDIS_PASSWORD in its environment; the start script must unset it once the configuration file is written")
	}
	note("redis: NOAUTH for a client without the password on the composition's network, PONG with it; no port published; the password on no container's command line")
}

// startupWarnings: no process of the composition warns about Redis or the
// signing secrets (every secret set, Redis needs its password), and serve,
// started from the image on a public address without secrets against a
// Redis that needs no password although the URL names one, warns about all
// three. (Other start-up warnings, such as an unset AGENTREADY_BASE_URL,
// are not this check's.)
func startupWarnings(c *composition) {
	logs, _ := c.command("logs", "--no-color", "redis", "origin-a", "origin-b", "edge").CombinedOutput()
	for _, l := range strings.Split(string(logs), "\n") {
		if strings.Contains(l, "agentready serve: warning:") && (strings.Contains(l, "Redis at ") ||
			strings.Contains(l, "AGENTREADY_TOKEN_KEYS is empty") || strings.Contains(l, "AGENTREADY_EDGE_SECRET is empty")) {
			fail("a process of the composition warned at start although its Redis and secrets are set right: %s", strings.TrimSpace(l))
		}
	}
	openRedis, srv := *project+"-warn-redis", *project+"-warn-serve"
	defer exec.Command("docker", "rm", "-f", "-v", srv, openRedis).Run() // -v: their /data volumes
	mustOut("docker", "run", "-d", "--name", openRedis, "--network", c.network(), *redisImage,
		"redis-server", "--bind", "0.0.0.0", "--protected-mode", "no", "--save", "", "--appendonly", "no")
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, _ := exec.Command("docker", "exec", openRedis, "redis-cli", "ping").CombinedOutput()
		if strings.TrimSpace(string(out)) == "PONG" {
			break
		}
		if time.Now().After(deadline) {
			fail("a Redis without a password did not answer within 30 s: %s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	password := randomHex(32)
	run := exec.Command("docker", "run", "-d", "--name", srv, "--network", c.network(), "-e", "REDIS_URL", *imageName)
	run.Env = append(os.Environ(), "REDIS_URL=redis://:"+password+"@"+openRedis+":6379/0")
	if out, err := run.CombinedOutput(); err != nil {
		fail("docker run serve against a Redis without a password: %v\n%s", err, out)
	}
	want := []string{
		"agentready serve: warning: Redis at " + openRedis + ":6379 accepts connections without a password",
		"agentready serve: warning: AGENTREADY_TOKEN_KEYS is empty",
		"agentready serve: warning: AGENTREADY_EDGE_SECRET is empty",
	}
	deadline = time.Now().Add(60 * time.Second)
	for {
		out, _ := exec.Command("docker", "logs", srv).CombinedOutput()
		if strings.Contains(string(out), password) {
			fail("serve's start-up output repeats the password of REDIS_URL")
		}
		missing := slices.DeleteFunc(slices.Clone(want), func(w string) bool { return strings.Contains(string(out), w) })
		if len(missing) == 0 {
			break
		}
		state := strings.TrimSpace(mustOut("docker", "inspect", "-f", "{{.State.Running}}", srv))
		if state != "true" || time.Now().After(deadline) {
			fail("serve (running: %s) did not warn %q within 60 s; its output:\n%s", state, missing, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	note("serve's start-up warnings: none from the composition; a Redis answering without the URL's password and missing signing secrets on 0.0.0.0 each warned")
}

// trustedProxies: the edge, trusting the composition's network, takes the
// caller from X-Forwarded-For of a connection from its gateway (where
// published ports' connections come from). A scan request without a url
// is refused at the edge at no cost, showing the caller's allowance: the
// address the scans above came from has spent some, a client never seen
// must have more left (GCRA shows a fresh caller one short of the limit).
func trustedProxies(edge string) {
	allowance := func(xff string) (limit, remaining int) {
		req, _ := http.NewRequest(http.MethodGet, edge+"/api/scan?format=json", nil)
		if xff != "" {
			req.Header.Set("X-Forwarded-For", xff)
		}
		resp, err := client.Do(req)
		if err != nil {
			fail("GET /api/scan without a url: %v", err)
		}
		resp.Body.Close()
		l, err1 := strconv.Atoi(resp.Header.Get("X-RateLimit-Limit"))
		r, err2 := strconv.Atoi(resp.Header.Get("X-RateLimit-Remaining"))
		if err := errors.Join(err1, err2); err != nil {
			fail("GET /api/scan without a url answered %d without the allowance's headers: %v", resp.StatusCode, err)
		}
		return l, r
	}
	l0, r0 := allowance("")
	if r0 >= l0 {
		fail("the scans above were not charged to the address they came from (%d of %d left): the test cannot tell one caller from another", r0, l0)
	}
	l1, r1 := allowance("203.0.113.7")
	// +1: a GCRA allowance grows back by one every 86 s at 1000 a day, and
	// may do so between the two requests.
	if r1 <= r0+1 {
		fail("a new client named in X-Forwarded-For by a connection from the composition's network has %d of %d left, no more than the address the scans came from (%d): the edge does not trust the network (AGENTREADY_TRUSTED_PROXIES must name AGENTREADY_SUBNET), so every client behind a proxy shares one allowance", r1, l1, r0)
	}
	note("trusted proxies: a client named in X-Forwarded-For has its own allowance (%d of %d), the proxy's address its own (%d of %d)", r1, l1, r0, l0)
}
