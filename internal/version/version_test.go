package version

import (
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	info := func(main string, settings ...string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/agentready/agentready", Version: main}}
			for i := 0; i+1 < len(settings); i += 2 {
				bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
			}
			return bi, true
		}
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	const rev = "0123456789abcdef0123456789abcdef01234567"
	for _, c := range []struct {
		name, linked string
		read         func() (*debug.BuildInfo, bool)
		want         string
	}{
		{"the linker's wins", "v1.4.0-3-gabcdef1-dirty", info("v1.3.0"), "v1.4.0-3-gabcdef1-dirty"},
		{"a module version", "", info("v1.3.0"), "v1.3.0"},
		{"a pseudo-version of a dirty checkout", "", info("v0.0.0-20260102150405-0123456789ab+dirty"), "v0.0.0-20260102150405-0123456789ab+dirty"},
		{"the revision without a version", "", info("(devel)", "vcs.revision", rev, "vcs.modified", "false"), "devel-0123456789ab"},
		{"a modified tree", "", info("(devel)", "vcs.revision", rev, "vcs.modified", "true"), "devel-0123456789ab-dirty"},
		{"nothing known", "", info("(devel)"), "devel"},
		{"no build information", "", none, "devel"},
		{"a linked value that cannot stand in a User-Agent", `1.0 "x"`, info("v1.3.0"), "v1.3.0"},
		{"a linked value with a space", "1.0 beta", none, "devel"},
	} {
		if got := resolve(c.linked, c.read); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// A test binary has no linked version and no VCS information: "devel",
// never empty.
func TestStringIsNeverEmpty(t *testing.T) {
	if String() == "" {
		t.Fatal("String() is empty")
	}
}
