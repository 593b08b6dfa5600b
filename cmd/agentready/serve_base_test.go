package main

import (
	"strings"
	"testing"

	"github.com/agentready/agentready/internal/stack"
)

// serve warns, but starts, when its public listener is reachable from other
// machines and AGENTREADY_BASE_URL is unset; an origin, a loopback address
// and a configured base URL say nothing.
func TestBaseURLWarning(t *testing.T) {
	for _, tc := range []struct {
		name string
		role stack.Role
		addr string
		base string
		warn bool
	}{
		{"loopback", stack.RoleAll, "127.0.0.1:8080", "", false},
		{"localhost", stack.RoleAll, "localhost:8080", "", false},
		{"IPv6 loopback", stack.RoleAll, "[::1]:8080", "", false},
		{"every interface", stack.RoleAll, "0.0.0.0:8080", "", true},
		{"no host is every interface", stack.RoleAll, ":8080", "", true},
		{"an edge on a private address", stack.RoleEdge, "10.0.0.5:8080", "", true},
		{"a blank base URL is unset", stack.RoleAll, "0.0.0.0:8080", "  ", true},
		{"base URL set", stack.RoleAll, "0.0.0.0:8080", "https://agentready.example.com", false},
		{"an origin is not the public listener", stack.RoleOrigin, "0.0.0.0:8081", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := baseURLWarning(tc.role, tc.addr, func(k string) string { return map[string]string{"AGENTREADY_BASE_URL": tc.base}[k] })
			if tc.warn != (got != "") {
				t.Fatalf("warning %q, want one: %v", got, tc.warn)
			}
			if tc.warn && (!strings.Contains(got, "AGENTREADY_BASE_URL is unset") || !strings.Contains(got, "Host header") || !strings.Contains(got, "Vary: Host")) {
				t.Errorf("the warning does not say what is unset, what follows and what to do: %q", got)
			}
		})
	}
}
