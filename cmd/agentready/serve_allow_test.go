package main

import (
	"strings"
	"testing"
)

// An allow-list entry that does not parse stops serve before anything
// starts, naming the setting, the entry and what to write instead.
func TestServeAllowListErrors(t *testing.T) {
	for _, tc := range []struct {
		name, env string
		args      []string
		want      string
	}{
		{"a host name", "localhost:8080", nil, `"localhost:8080" is not an address with a port (host names are not accepted`},
		{"port 0 by flag", "", []string{"--allow", "127.0.0.1:0"}, `"127.0.0.1:0" names port 0`},
		{"a metadata address", "10.0.0.0/8,169.254.169.254", nil, "cloud metadata address"},
		{"a non-standard IPv4 notation", "127.1", nil, "is not an IP address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("AGENTREADY_ALLOW", tc.env)
			code, _, errb := runCLI(append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--edge-wasm", ""}, tc.args...)...)
			if code != exitUsage || !strings.Contains(errb, "--allow (AGENTREADY_ALLOW)") || !strings.Contains(errb, tc.want) || !strings.Contains(errb, "write an IP address") {
				t.Errorf("exit %d (want %d), stderr %q (want it to say %q)", code, exitUsage, errb, tc.want)
			}
		})
	}
}
