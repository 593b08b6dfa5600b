package archtest

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/agentready/agentready/"

// rule: packages under scope must not depend (directly or transitively) on
// any package under a forbidden prefix, except the allowed ones.
type rule struct {
	scope     string
	forbidden []string
	allowed   []string
	why       string
}

var rules = []rule{
	{scope: "engine", forbidden: []string{"origin", "edge", "wasm", "cmd", "internal/stack"},
		why: "the engine is a library anyone can embed"},
	{scope: "edge", forbidden: []string{"engine", "origin", "wasm", "cmd", "internal/stack"},
		why: "the engine's parsers would bloat the WebAssembly module; the edge talks to the origin over HTTP only"},
	{scope: "wasm", forbidden: []string{"engine", "origin", "edge", "cmd"}, allowed: []string{"edge/wasi/abi"},
		why: "the host shares only the host-function ABI with the edge's wasip1 adapter"},
	{scope: "apierr", forbidden: []string{""}, allowed: []string{"apierr"},
		why: "the error vocabulary is shared by every side and depends on nothing"},
	{scope: "origin", forbidden: []string{"cmd", "wasm", "internal/stack"},
		why: "cmd wires packages together; the origin does not depend on its wiring"},
	{scope: "cmd", forbidden: []string{"internal/testing", "internal/e2e", "internal/tools", "bench"},
		why: "test rigs, end-to-end suites and developer tools are not shipped: nothing a binary links may import them"},
	{scope: "webhook", forbidden: []string{""}, allowed: []string{"webhook"},
		why: "receivers import the webhook package: only the standard library and the Standard Webhooks library (webhook/TestDependencies checks the rest)"},
}

type pkg struct {
	ImportPath string
	Deps       []string
}

func TestDependencyRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps=false", "-json=ImportPath,Deps", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	n := 0
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		n++
		rel := strings.TrimPrefix(p.ImportPath, module)
		for _, r := range rules {
			if !under(rel, r.scope) {
				continue
			}
			for _, d := range p.Deps {
				if !strings.HasPrefix(d, module) {
					continue
				}
				drel := strings.TrimPrefix(d, module)
				if forbidden(drel, r) {
					t.Errorf("%s depends on %s: forbidden (%s)", rel, drel, r.why)
				}
			}
		}
	}
	if n < 20 {
		t.Fatalf("listed only %d packages", n)
	}
}

func under(rel, scope string) bool { return rel == scope || strings.HasPrefix(rel, scope+"/") }

func forbidden(dep string, r rule) bool {
	for _, a := range r.allowed {
		if under(dep, a) {
			return false
		}
	}
	for _, f := range r.forbidden {
		if f == "" || under(dep, f) {
			return true
		}
	}
	return false
}

// The rule for the binaries forbids the rigs and tools wherever they sit
// under their trees, and nothing a binary needs.
func TestBinariesRuleNamesTheRigs(t *testing.T) {
	var cmd rule
	for _, r := range rules {
		if r.scope == "cmd" {
			cmd = r
		}
	}
	for dep, want := range map[string]bool{
		"internal/testing/fixture": true, "internal/testing/testenv": true, "internal/e2e/monitorkill": true,
		"internal/tools/testsummary": true, "bench/internal/benchkit": true,
		"internal/stack": false, "internal/version": false, "origin/store": false, "engine/fetch": false,
	} {
		if got := forbidden(dep, cmd); got != want {
			t.Errorf("a binary depending on %s: forbidden %v, want %v", dep, got, want)
		}
	}
}
