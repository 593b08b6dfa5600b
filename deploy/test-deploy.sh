#!/bin/sh
# deploy/test-deploy.sh — `make test-deploy`: the deployment test, on a
# clean machine as on a developer's. Run from the repository's root, as root
# or with sudo available (for apt-get and dockerd).
#   1. installs what is missing: docker.io, docker-compose, debootstrap;
#   2. starts dockerd when no daemon answers, and stops it (by its pid) at the end;
#   3. builds the images (deploy/image.sh: agentready, Redis, the testkit);
#   4. runs the scenario (deploy/deploytest: docker run, compose up, scans,
#      screenshot, monitor and webhook verify, kill one origin, drain,
#      compose down) and prints what it measured.
# Containers, networks and volumes of the test are removed whatever happens;
# the images are kept (the next run reuses their layers).
set -eu

say() { echo "test-deploy: $*" >&2; }
die() { say "$*"; exit 1; }
[ -f deploy/compose.yaml ] || die "run me from the repository's root (make test-deploy)"
command -v go >/dev/null || die "Go is missing: it builds the testkit and runs the scenario"
sudo=
[ "$(id -u)" = 0 ] || sudo=sudo

# 1. tools
missing=
# A docker client alone (without dockerd, e.g. a CLI-only install) needs
# the daemon too, unless one answers already.
if ! command -v docker >/dev/null || { ! command -v dockerd >/dev/null && ! docker version >/dev/null 2>&1; }; then
	missing="$missing docker.io"
fi
command -v docker-compose >/dev/null || docker compose version >/dev/null 2>&1 || missing="$missing docker-compose"
command -v debootstrap >/dev/null || missing="$missing debootstrap"
if [ -n "$missing" ]; then
	say "installing:$missing"
	$sudo apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
if command -v docker-compose >/dev/null; then compose=docker-compose; else compose="docker compose"; fi

# 2. the daemon
dockerd_pid=
workdir=$(mktemp -d "${TMPDIR:-/tmp}/agentready-test-deploy.XXXXXX")
cleanup() {
	status=$?
	# The scenario removes its composition itself; this catches an interrupted run.
	for id in $(docker ps -aq --filter label=com.docker.compose.project=agentready-deploytest 2>/dev/null) \
		$(docker ps -aq --filter name=agentready-deploytest-cold 2>/dev/null) \
		$(docker ps -aq --filter name=agentready-deploytest-warn 2>/dev/null); do
		docker rm -f -v "$id" >/dev/null 2>&1 || true
	done
	docker rmi -f agentready-deploytest-context:latest >/dev/null 2>&1 || true
	docker network rm agentready-deploytest_default >/dev/null 2>&1 || true
	for v in $(docker volume ls -q --filter label=com.docker.compose.project=agentready-deploytest 2>/dev/null); do
		docker volume rm "$v" >/dev/null 2>&1 || true
	done
	if [ -n "$dockerd_pid" ]; then
		say "stopping the dockerd this test started (pid $dockerd_pid)"
		$sudo kill -TERM "$dockerd_pid" 2>/dev/null || true
		i=0
		while $sudo kill -0 "$dockerd_pid" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
		$sudo kill -0 "$dockerd_pid" 2>/dev/null && say "dockerd (pid $dockerd_pid) did not stop within 20 s"
	fi
	rm -rf "$workdir"
	exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if ! docker version >/dev/null 2>&1; then
	say "no docker daemon answers; starting dockerd (log: $workdir/dockerd.log)"
	$sudo sh -c "dockerd >'$workdir/dockerd.log' 2>&1 & echo \$! >'$workdir/dockerd.pid'"
	dockerd_pid=$(cat "$workdir/dockerd.pid")
	i=0
	until docker version >/dev/null 2>&1; do
		if ! $sudo kill -0 "$dockerd_pid" 2>/dev/null; then
			tail -n 30 "$workdir/dockerd.log" >&2
			dockerd_pid=
			die "dockerd exited while starting (its log is above)"
		fi
		i=$((i + 1))
		[ $i -le 600 ] || { tail -n 30 "$workdir/dockerd.log" >&2; die "dockerd did not answer within 60 s (its log is above)"; }
		sleep 0.1
	done
	say "dockerd answers (pid $dockerd_pid)"
fi

# 3. images
sh deploy/image.sh agentready redis testkit | tee "$workdir/images"
build_seconds=$(sed -n 's/^image=[^ ]* build_seconds=\([0-9]*\).*/\1/p' "$workdir/images" | head -n1)

# 4. the scenario
go run ./deploy/deploytest -image "${IMAGE:-agentready:latest}" -compose "$compose" -build-seconds "$build_seconds"
