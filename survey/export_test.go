package survey

import (
	"testing"

	"github.com/agentready/agentready/internal/testing/testenv"
)

// QueueURLs are the Redis servers the queue's tests run against: the one
// Redis (REDIS_URL) and, when there is one, the Redis Cluster
// (REDIS_CLUSTER_URL); under CI=true a missing one fails the test.
func QueueURLs(t *testing.T) map[string]string {
	t.Helper()
	urls := map[string]string{"redis": testenv.RedisURL(t)}
	if u, ok := testenv.OptionalRedisCluster(t); ok {
		urls["cluster"] = u
	}
	return urls
}

// StreamKey is the key of a survey's stream, for tests that look at it.
func StreamKey(name string) string { return keysFor(name).stream }

// QueueGroup is the consumer group of every survey's workers.
const QueueGroup = queueGroup
