package edgetable_test

import (
	"testing"

	"github.com/agentready/agentready/internal/stack"
	"github.com/agentready/agentready/internal/testing/edgetest"
	"github.com/agentready/agentready/internal/testing/stacktest"
)

func startNative(t *testing.T, env map[string]string) string {
	return stacktest.Start(t, env, stack.Options{}).URL
}

// The behavioural table, against the edge handler compiled natively.
func TestNativeEdge(t *testing.T) { edgetest.Run(t, startNative) }
