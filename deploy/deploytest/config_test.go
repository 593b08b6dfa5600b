package main

// The deployment files' rules, read from the files themselves (no docker):
// `make test` runs these, `make test-deploy` then proves the same rules
// against real containers (main.go). docs/deploy.md, "Hardening", says them.

import (
	"bufio"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// repoFile is a file of the repository, read from deploy/deploytest.
func repoFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return string(b)
}

type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Networks map[string]struct {
		IPAM struct {
			Config []struct {
				Subnet string `yaml:"subnet"`
			} `yaml:"config"`
		} `yaml:"ipam"`
	} `yaml:"networks"`
}

type composeService struct {
	Image       string            `yaml:"image"`
	SecurityOpt []string          `yaml:"security_opt"`
	CapDrop     []string          `yaml:"cap_drop"`
	CapAdd      []string          `yaml:"cap_add"`
	ReadOnly    bool              `yaml:"read_only"`
	Tmpfs       []string          `yaml:"tmpfs"`
	PidsLimit   int               `yaml:"pids_limit"`
	Privileged  bool              `yaml:"privileged"`
	Ports       []string          `yaml:"ports"`
	Volumes     []string          `yaml:"volumes"`
	Environment map[string]string `yaml:"environment"`
	Entrypoint  stringList        `yaml:"entrypoint"`
	Command     stringList        `yaml:"command"`
	Healthcheck struct {
		Test stringList `yaml:"test"`
	} `yaml:"healthcheck"`
}

// stringList is compose's string-or-list (command, entrypoint, test).
type stringList []string

func (s *stringList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*s = []string{n.Value}
		return nil
	}
	var l []string
	err := n.Decode(&l)
	*s = l
	return err
}

// readCompose parses deploy/compose.yaml with its anchors and merge keys
// resolved, as compose reads it.
func readCompose(t *testing.T) composeFile {
	t.Helper()
	var c composeFile
	if err := yaml.Unmarshal([]byte(repoFile(t, "deploy/compose.yaml")), &c); err != nil {
		t.Fatalf("deploy/compose.yaml: %v", err)
	}
	if len(c.Services) < 4 {
		t.Fatalf("deploy/compose.yaml has %d services, want redis, two origins and the edge", len(c.Services))
	}
	return c
}

// Every container runs with no capabilities, no way to gain one, a
// read-only root with somewhere in memory to write, and a process cap.
func TestComposeHardening(t *testing.T) {
	for name, s := range readCompose(t).Services {
		if !slices.Contains(s.SecurityOpt, "no-new-privileges:true") {
			t.Errorf("service %s: security_opt %q lacks no-new-privileges:true", name, s.SecurityOpt)
		}
		if !slices.Equal(s.CapDrop, []string{"ALL"}) {
			t.Errorf("service %s: cap_drop %q, want [ALL]", name, s.CapDrop)
		}
		if len(s.CapAdd) > 0 || s.Privileged {
			t.Errorf("service %s adds capabilities %q (privileged %v): none of the images needs one", name, s.CapAdd, s.Privileged)
		}
		if !s.ReadOnly {
			t.Errorf("service %s: read_only is not true", name)
		}
		if len(s.Tmpfs) == 0 {
			t.Errorf("service %s: a read-only root without a tmpfs: where does it write?", name)
		}
		for _, m := range s.Tmpfs {
			if !strings.Contains(m, "size=") {
				t.Errorf("service %s: tmpfs %q has no size: it would take up to half the machine's memory", name, m)
			}
		}
		if s.PidsLimit <= 0 {
			t.Errorf("service %s: no pids_limit", name)
		}
	}
}

// compose interpolation of REDIS_PASSWORD: ${REDIS_PASSWORD…} or
// $REDIS_PASSWORD, but not $$REDIS_PASSWORD (the container's shell reads
// that from its environment at run time).
var interpolatedPassword = regexp.MustCompile(`(^|[^$])\$\{?REDIS_PASSWORD`)

// Redis requires a password, compose refuses to start without one, and it
// never appears on a command line (every user of the host sees those in ps).
func TestComposeRedisPassword(t *testing.T) {
	c := readCompose(t)
	redis, ok := c.Services["redis"]
	if !ok {
		t.Fatal("deploy/compose.yaml has no service redis")
	}
	if v := redis.Environment["REDIS_PASSWORD"]; !strings.HasPrefix(v, "${REDIS_PASSWORD:?") {
		t.Errorf("redis's REDIS_PASSWORD is %q; want it required: ${REDIS_PASSWORD:?what to do}", v)
	}
	if len(redis.Ports) > 0 {
		t.Errorf("redis publishes %q: it must answer on the composition's network only", redis.Ports)
	}
	lines := map[string]string{
		"entrypoint":  strings.Join(redis.Entrypoint, " "),
		"command":     strings.Join(redis.Command, " "),
		"healthcheck": strings.Join(redis.Healthcheck.Test, " "),
	}
	for what, line := range lines {
		if interpolatedPassword.MatchString(line) {
			t.Errorf("redis's %s has the password interpolated into it by compose: it would be on a command line", what)
		}
		for _, bad := range []string{"--requirepass", "--protected-mode no"} {
			if strings.Contains(line, bad) {
				t.Errorf("redis's %s contains %q", what, bad)
			}
		}
		if regexp.MustCompile(`(^|[\s+])-a\s`).MatchString(line) {
			t.Errorf("redis's %s gives redis-cli the password with -a, on its command line (REDISCLI_AUTH keeps it off)", what)
		}
	}
	// Redis reads the password from a configuration file.
	if !regexp.MustCompile(`requirepass %s\\n' "\$\$?REDIS_PASSWORD" > (/\S+\.conf)`).MatchString(lines["command"]) ||
		!regexp.MustCompile(`exec redis-server /\S+\.conf `).MatchString(lines["command"]) {
		t.Errorf("redis's command does not write requirepass into a configuration file that redis-server reads:\n%s", lines["command"])
	}
	for name, s := range c.Services {
		if name == "redis" {
			continue
		}
		u := s.Environment["REDIS_URL"]
		if !strings.HasPrefix(u, "redis://:${REDIS_PASSWORD:?") || !strings.HasSuffix(u, "@redis:6379/0") {
			t.Errorf("service %s: REDIS_URL %q; want redis://:${REDIS_PASSWORD:?…}@redis:6379/0", name, u)
		}
	}
}

// activeSettings are the env file's KEY=value lines that are not comments.
func activeSettings(t *testing.T, rel string) map[string]string {
	t.Helper()
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(repoFile(t, rel)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Errorf("%s: %q is not KEY=value", rel, line)
			continue
		}
		out[k] = v
	}
	return out
}

// composeDefault is the default of a ${NAME:-default} value.
func composeDefault(t *testing.T, v, name string) string {
	t.Helper()
	m := regexp.MustCompile(`^\$\{` + name + `:-([^}]+)\}$`).FindStringSubmatch(v)
	if m == nil {
		t.Fatalf("%q is not ${%s:-default}", v, name)
	}
	return m[1]
}

// The example settings promise nothing the deployment does not do: no
// active REDIS_URL with a password (a placeholder there looks like a
// protected Redis when Redis has none), and trusted proxies that name the
// composition's network (or every client behind the proxy shares one
// allowance).
func TestEnvExample(t *testing.T) {
	const example = "deploy/agentready.env.example"
	set := activeSettings(t, example)
	if u, ok := set["REDIS_URL"]; ok && regexp.MustCompile(`^rediss?://[^@/]*:[^@/]+@`).MatchString(u) {
		t.Errorf("%s sets REDIS_URL with a password: ship it commented (docs/deploy.md)", example)
	}
	c := readCompose(t)
	nets := c.Networks["default"].IPAM.Config
	if len(nets) != 1 {
		t.Fatalf("deploy/compose.yaml's default network has %d ipam configs, want one fixed subnet", len(nets))
	}
	subnet, err := netip.ParsePrefix(composeDefault(t, nets[0].Subnet, "AGENTREADY_SUBNET"))
	if err != nil {
		t.Fatalf("the composition's subnet: %v", err)
	}
	trusted := set["AGENTREADY_TRUSTED_PROXIES"]
	covered := false
	for _, e := range strings.Split(trusted, ",") {
		if p, err := netip.ParsePrefix(strings.TrimSpace(e)); err == nil && p.Bits() <= subnet.Bits() && p.Contains(subnet.Addr()) {
			covered = true
		}
	}
	if !covered {
		t.Errorf("%s: AGENTREADY_TRUSTED_PROXIES=%s does not name the composition's network %s", example, trusted, subnet)
	}
	if !strings.Contains(repoFile(t, example), "#AGENTREADY_SUBNET="+subnet.String()+"\n") {
		t.Errorf("%s does not show AGENTREADY_SUBNET with compose's default %s", example, subnet)
	}
	for _, k := range []string{"AGENTREADY_TOKEN_KEYS", "AGENTREADY_EDGE_SECRET"} {
		if _, ok := set[k]; !ok {
			t.Errorf("%s does not list %s among the settings production must set", example, k)
		}
	}
}

// ignored reports whether a .dockerignore excludes path, as Docker's
// pattern matcher reads the patterns: filepath.Match syntax plus ** for any
// number of directories, a pattern also excluding everything below what it
// matches, and ! re-including; the last matching pattern wins.
func ignored(patterns []string, path string) bool {
	out := false
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(p, "!")
		var re strings.Builder
		re.WriteString("^")
		for i := 0; i < len(p); i++ {
			switch {
			case strings.HasPrefix(p[i:], "**/"):
				re.WriteString("(.*/)?")
				i += 2
			case strings.HasPrefix(p[i:], "**"):
				re.WriteString(".*")
				i++
			case p[i] == '*':
				re.WriteString("[^/]*")
			case p[i] == '?':
				re.WriteString("[^/]")
			default:
				re.WriteString(regexp.QuoteMeta(p[i : i+1]))
			}
		}
		re.WriteString("(/.*)?$")
		if regexp.MustCompile(re.String()).MatchString(path) {
			out = !neg
		}
	}
	return out
}

// The build context leaves out local state and secrets, and keeps what
// deploy/Dockerfile copies. main.go checks the same with docker build.
func TestDockerignore(t *testing.T) {
	var patterns []string
	for _, l := range strings.Split(repoFile(t, ".dockerignore"), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			patterns = append(patterns, strings.TrimPrefix(filepath.Clean(l), "/"))
		}
	}
	for _, p := range contextExcluded {
		if !ignored(patterns, p) {
			t.Errorf(".dockerignore lets %s into the build context", p)
		}
	}
	for _, p := range contextKept {
		if ignored(patterns, p) {
			t.Errorf(".dockerignore leaves out %s, which the build needs", p)
		}
	}
}

// A unit ordered after a service it needs also wants it: After= alone
// orders but never starts it.
func TestSystemdUnitWantsWhatItFollows(t *testing.T) {
	var after, wants []string
	for _, l := range strings.Split(repoFile(t, "deploy/agentready.service"), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), "=")
		if !ok {
			continue
		}
		switch k {
		case "After":
			after = append(after, strings.Fields(v)...)
		case "Wants", "Requires":
			wants = append(wants, strings.Fields(v)...)
		}
	}
	if !slices.Contains(after, "redis-server.service") {
		t.Fatalf("deploy/agentready.service: After=%q no longer names redis-server.service; update this test", after)
	}
	for _, u := range after {
		if !slices.Contains(wants, u) {
			t.Errorf("deploy/agentready.service: After=%s without Wants=%s: the unit would wait for it but never start it", u, u)
		}
	}
}
