package native_test

import (
	"testing"

	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/edgetest"
)

func start(t *testing.T, env map[string]string) string {
	return edgetest.StartStack(t, env, stack.Options{}).URL
}

// The behavioural table, against the edge handler compiled natively.
func TestNativeEdge(t *testing.T) { edgetest.Run(t, start) }
