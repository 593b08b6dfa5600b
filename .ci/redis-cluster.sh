#!/usr/bin/env bash
# Starts or stops a Redis Cluster of three masters (no replicas) on loopback,
# from Debian's redis-server, for the tests that run against a Cluster
# (REDIS_CLUSTER_URL, found through internal/testing/testenv).
#
#   .ci/redis-cluster.sh start    prints the Cluster's REDIS_URL form:
#                                 redis://127.0.0.1:17001,127.0.0.1:17002,127.0.0.1:17003
#   .ci/redis-cluster.sh stop     stops the three servers and removes their files
#
# REDIS_CLUSTER_PORTS (default "17001 17002 17003") and REDIS_CLUSTER_DIR
# (default /tmp/agentready-redis-cluster) choose where. start is idempotent:
# a Cluster already up on those ports is reused. Everything but the URL goes
# to stderr, so `export REDIS_CLUSTER_URL=$(.ci/redis-cluster.sh start)` works.
set -euo pipefail

ports=(${REDIS_CLUSTER_PORTS:-17001 17002 17003})
dir=${REDIS_CLUSTER_DIR:-/tmp/agentready-redis-cluster}

url() {
  local hosts=()
  for p in "${ports[@]}"; do hosts+=("127.0.0.1:$p"); done
  (IFS=,; echo "redis://${hosts[*]}")
}

state_ok() { redis-cli -p "$1" cluster info 2>/dev/null | grep -q '^cluster_state:ok'; }

stop() {
  for p in "${ports[@]}"; do
    if [ -f "$dir/$p/redis.pid" ]; then
      kill "$(cat "$dir/$p/redis.pid")" 2>/dev/null || true
    fi
  done
  for p in "${ports[@]}"; do
    for _ in $(seq 1 50); do
      redis-cli -p "$p" ping >/dev/null 2>&1 || break
      sleep 0.1
    done
  done
  rm -rf "$dir"
}

start() {
  command -v redis-server >/dev/null && command -v redis-cli >/dev/null ||
    { echo "redis-server and redis-cli are needed (apt-get install redis-server)" >&2; exit 1; }
  local up=1
  for p in "${ports[@]}"; do state_ok "$p" || up=0; done
  if [ "$up" = 1 ]; then
    echo "a Redis Cluster is already up on ports ${ports[*]}" >&2
    url
    return
  fi
  stop
  for p in "${ports[@]}"; do
    mkdir -p "$dir/$p"
    redis-server --bind 127.0.0.1 --port "$p" --protected-mode no \
      --cluster-enabled yes --cluster-config-file "$dir/$p/nodes.conf" --cluster-node-timeout 5000 \
      --save '' --appendonly no --dir "$dir/$p" \
      --daemonize yes --pidfile "$dir/$p/redis.pid" --logfile "$dir/$p/redis.log"
  done
  for p in "${ports[@]}"; do
    for _ in $(seq 1 50); do
      redis-cli -p "$p" ping >/dev/null 2>&1 && break
      sleep 0.1
    done
    redis-cli -p "$p" ping >/dev/null || { echo "redis-server on port $p did not start; see $dir/$p/redis.log" >&2; exit 1; }
  done
  local nodes=()
  for p in "${ports[@]}"; do nodes+=("127.0.0.1:$p"); done
  redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >&2
  # Every node must agree the slots are covered before clients use it.
  for p in "${ports[@]}"; do
    for _ in $(seq 1 100); do
      state_ok "$p" && break
      sleep 0.1
    done
    state_ok "$p" || { echo "the Cluster did not reach cluster_state:ok on port $p" >&2; exit 1; }
  done
  url
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  url) url ;;
  *) echo "usage: $0 start|stop|url" >&2; exit 2 ;;
esac
