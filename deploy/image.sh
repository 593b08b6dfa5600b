#!/bin/sh
# deploy/image.sh [agentready] [redis] [testkit] — build the container images
# (`make image` builds agentready). Run from the repository's root.
#   agentready  IMAGE (agentready:latest), from deploy/Dockerfile
#   redis       REDIS_IMAGE (agentready-redis:latest): Debian's Redis, for
#               deploy/compose.yaml where no registry has redis:7
#   testkit     TESTKIT_IMAGE (agentready-testkit:latest): the deployment
#               test's fixture site and webhook receiver (deploy/testkit)
# Where the bases come from (optional settings):
#   BASE_IMAGE  the runtime's base. Unset: agentready-base:bookworm, built
#               from Debian's packages by deploy/base.sh when it is missing
#               (no image registry needed). debian:bookworm-slim with a registry.
#   GO_IMAGE    the build stage's Go. Unset: agentready-go:<version>, this
#               machine's Go toolchain ($(go env GOROOT)) on top of the base,
#               built when missing; the modules then come from this
#               machine's module cache, so the build needs no network for
#               them. golang:1.26-bookworm with a registry.
#   VERSION     the version the binary reports (internal/version). Unset:
#               `git describe --tags --always --dirty` of this checkout.
#   DOCKER_BUILDKIT  0 or 1; unset: BuildKit when the buildx plugin is
#               installed, else the classic builder (Debian's docker.io has no
#               buildx). The Dockerfiles work with both.
# For agentready it prints the build time and the size, and a last line
# `image=… build_seconds=… size_bytes=…`.
set -eu

say() { echo "deploy/image.sh: $*" >&2; }
die() { say "$*"; exit 1; }

[ -f deploy/Dockerfile ] && [ -f go.mod ] || die "run me from the repository's root (make image)"
command -v docker >/dev/null || die "docker is missing (apt-get install docker.io)"
docker version >/dev/null 2>&1 || die "the docker daemon does not answer (start dockerd; deploy/test-deploy.sh does when it must)"
if [ -z "${DOCKER_BUILDKIT:-}" ]; then
	if docker buildx version >/dev/null 2>&1; then DOCKER_BUILDKIT=1; else DOCKER_BUILDKIT=0; fi
fi
export DOCKER_BUILDKIT
IMAGE=${IMAGE:-agentready:latest}
REDIS_IMAGE=${REDIS_IMAGE:-agentready-redis:latest}
TESTKIT_IMAGE=${TESTKIT_IMAGE:-agentready-testkit:latest}
[ $# -gt 0 ] || set -- agentready

have_image() { docker image inspect "$1" >/dev/null 2>&1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/agentready-image.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

# build TAG CONTEXT [docker build arguments]: quiet unless it fails.
build() {
	tag=$1 context=$2
	shift 2
	if ! docker build "$@" -t "$tag" "$context" >"$work/build.log" 2>&1; then
		tail -n 60 "$work/build.log" >&2
		die "building $tag failed (the end of docker build's output is above)"
	fi
}

local_go=
if [ -z "${BASE_IMAGE:-}" ]; then
	BASE_IMAGE=agentready-base:bookworm
	if have_image "$BASE_IMAGE"; then
		say "base $BASE_IMAGE exists; kept (docker rmi it to rebuild from Debian's mirror)"
	else
		sh deploy/base.sh "$BASE_IMAGE"
	fi
fi
case " $* " in *" agentready "*)
	if [ -z "${GO_IMAGE:-}" ]; then
		command -v go >/dev/null || die "GO_IMAGE is unset and there is no Go here: install Go 1.26, or set GO_IMAGE=golang:1.26-bookworm where a registry is reachable"
		goroot=$(go env GOROOT)
		GO_IMAGE="agentready-go:$(go env GOVERSION | sed 's/^go//')"
		if have_image "$GO_IMAGE"; then
			say "Go image $GO_IMAGE exists; kept"
		else
			say "building $GO_IMAGE: $goroot on $BASE_IMAGE"
			printf 'FROM %s\nCOPY go /usr/local/go\nENV PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin GOTOOLCHAIN=local\n' "$BASE_IMAGE" >"$work/Dockerfile"
			# One tar: the Dockerfile, and GOROOT as go/ (its tests and docs left out).
			name=$(basename "$goroot")
			tar -c -C "$work" Dockerfile -C "$(dirname "$goroot")" --exclude="$name/test" --exclude="$name/doc" \
				--transform "s,^$name,go," "$name" >"$work/go.tar"
			build "$GO_IMAGE" - <"$work/go.tar"
			rm -f "$work/go.tar" "$work/Dockerfile"
		fi
		local_go=1
	fi
	;;
esac

for target in "$@"; do
	case $target in
	agentready)
		# The context: the files git knows (tracked, or new and not ignored),
		# so not bin/, data/, build/ or node_modules; with a local Go image,
		# the module cache as a file:// proxy too.
		ctx="$work/context"
		mkdir -p "$ctx"
		if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
			git ls-files -z --cached --others --exclude-standard | tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -C "$ctx" -xf -
		else
			tar --exclude=./.git --exclude=./bin --exclude=./build --exclude=./data --exclude='*/node_modules' -cf - . | tar -C "$ctx" -xf -
		fi
		if [ -n "$local_go" ]; then
			go mod download || die "go mod download failed: the module cache cannot be filled here"
			cp -r "$(go env GOMODCACHE)/cache/download" "$ctx/.modproxy"
			: >"$ctx/.modproxy/agentready-modproxy"
		fi
		say "building $IMAGE (BASE_IMAGE=$BASE_IMAGE, GO_IMAGE=$GO_IMAGE, DOCKER_BUILDKIT=$DOCKER_BUILDKIT)"
		start=$(date +%s)
		# The version the binary reports (internal/version), from this checkout.
		version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || true)}
		build "$IMAGE" "$ctx" -f "$ctx/deploy/Dockerfile" --build-arg BASE_IMAGE="$BASE_IMAGE" --build-arg GO_IMAGE="$GO_IMAGE" --build-arg VERSION="$version"
		secs=$(($(date +%s) - start))
		rm -rf "$ctx"
		size=$(docker image inspect -f '{{.Size}}' "$IMAGE")
		say "built $IMAGE in ${secs}s: $((size / 1000000)) MB uncompressed"
		echo "image=$IMAGE build_seconds=$secs size_bytes=$size"
		;;
	redis)
		build "$REDIS_IMAGE" deploy -f deploy/redis.Dockerfile --build-arg BASE_IMAGE="$BASE_IMAGE"
		say "built $REDIS_IMAGE"
		;;
	testkit)
		command -v go >/dev/null || die "the testkit is built with this machine's Go, and there is none"
		mkdir -p "$work/testkit/sites"
		CGO_ENABLED=0 go build -trimpath -o "$work/testkit/testkit" ./deploy/testkit
		cp -r testdata/sites/full "$work/testkit/sites/full"
		printf 'FROM %s\nCOPY testkit /usr/local/bin/testkit\nCOPY sites /testkit/sites\nUSER 65534\nEXPOSE 8000 8001 9000\nCMD ["testkit", "-sites", "/testkit/sites"]\n' "$BASE_IMAGE" >"$work/testkit/Dockerfile"
		build "$TESTKIT_IMAGE" "$work/testkit"
		rm -rf "$work/testkit"
		say "built $TESTKIT_IMAGE"
		;;
	*) die "unknown image $target: agentready, redis or testkit" ;;
	esac
done
