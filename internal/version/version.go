// Package version is agentready's one version, as the build knows it:
// /healthz, the MCP server's serverInfo and card, the scanner's User-Agent,
// a survey's methods and User-Agent, and `agentready version` all say
// String().
//
// Where it comes from, first found wins:
//
//  1. the linker: `make build` (and the container image) pass
//     -ldflags "-X github.com/agentready/agentready/internal/version.version=$(git describe --tags --always --dirty)";
//  2. the build information Go stamps into the binary: the main module's
//     version (a tag, or a pseudo-version such as
//     v0.0.0-20260102150405-abcdef123456+dirty, when built from a Git
//     checkout), else the VCS revision: devel-abcdef123456[-dirty];
//  3. "devel" (go test, go run, or a build without VCS information).
package version

import (
	"runtime/debug"
	"strings"
	"sync"
)

// version is set by the linker (-X); empty means "ask the build information".
var version string

// Devel is the version of a build that knows nothing better.
const Devel = "devel"

var cached = sync.OnceValue(func() string { return resolve(version, debug.ReadBuildInfo) })

// String is agentready's version: what the linker set, else what Go's build
// information says, else "devel". It never returns "".
func String() string { return cached() }

// resolve is String's rule, with its sources as arguments (for tests).
func resolve(linked string, read func() (*debug.BuildInfo, bool)) string {
	if v := clean(linked); v != "" {
		return v
	}
	bi, ok := read()
	if !ok || bi == nil {
		return Devel
	}
	if v := clean(bi.Main.Version); v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = clean(s.Value)
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return Devel
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v := Devel + "-" + rev
	if dirty {
		v += "-dirty"
	}
	return v
}

// clean keeps a version that can stand as the version of a User-Agent
// product token and in a JSON string unescaped: letters, digits and
// "+-._~" (a tag, a pseudo-version, git describe's output). Anything else
// is dropped: an -X value with a space or a quote is a build mistake.
func clean(v string) string {
	v = strings.TrimSpace(v)
	for _, r := range v {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("+-._~", r)
		if !ok {
			return ""
		}
	}
	return v
}
