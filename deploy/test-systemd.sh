#!/bin/sh
# deploy/test-systemd.sh — run deploy/agentready.service under a real systemd,
# for machines whose PID 1 is not systemd: systemd boots as PID 1 of a
# container (Debian's systemd and chromium-headless-shell on the base
# image), the unit starts `serve` from the agentready image's binary, and the
# script checks what the unit promises:
#   - systemd-analyze verify passes; the service runs as a dynamic user with
#     no capabilities, no_new_privs and a seccomp filter;
#   - a scan through it, and a screenshot (Chromium under the unit, with its
#     own sandbox: a renderer in user, PID and network namespaces of its own
#     and one seccomp filter more than the service);
#   - systemctl stop: a clean exit (status 0) within TimeoutStopSec.
# Not part of `make test-deploy`: booting systemd in a container needs
# CAP_SYS_ADMIN, no seccomp filter of Docker's and the host's cgroups, which
# not every CI machine grants. Needs the images of deploy/image.sh
# (agentready, redis, testkit); run from the repository's root.
set -eu

say() { echo "test-systemd: $*" >&2; }
die() { say "FAIL: $*"; docker exec ar-systemd journalctl -u agentready --no-pager 2>/dev/null | tail -n 40 >&2 || true; exit 1; }
IMAGE=${IMAGE:-agentready:latest}
if [ -z "${DOCKER_BUILDKIT:-}" ]; then
	if docker buildx version >/dev/null 2>&1; then DOCKER_BUILDKIT=1; else DOCKER_BUILDKIT=0; fi
	export DOCKER_BUILDKIT
fi
BASE_IMAGE=${BASE_IMAGE:-agentready-base:bookworm}
for i in "$IMAGE" "$BASE_IMAGE" agentready-redis:latest agentready-testkit:latest; do
	docker image inspect "$i" >/dev/null 2>&1 || die "image $i is missing: sh deploy/image.sh agentready redis testkit"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/agentready-systemd.XXXXXX")
cleanup() {
	docker rm -f -v ar-systemd ar-systemd-kit ar-systemd-redis >/dev/null 2>&1 || true
	docker network rm ar-systemd >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

id=$(docker create "$IMAGE")
docker cp "$id:/usr/local/bin/agentready" "$work/agentready"
docker cp "$id:/usr/local/lib/agentready/edge.wasm" "$work/edge.wasm"
docker rm -v "$id" >/dev/null   # -v: the /data volume docker create made
cp deploy/agentready.service "$work/"
random_hex() { od -An -tx1 -N32 /dev/urandom | tr -d ' \n'; }
cat >"$work/agentready.env" <<EOF
AGENTREADY_TOKEN_KEYS=k1:$(random_hex)
AGENTREADY_EDGE_SECRET=$(random_hex)
REDIS_URL=redis://redis:6379/0
CHROME_PATH=/usr/bin/chromium-headless-shell
AGENTREADY_ALLOW_PRIVATE=1
EOF
cat >"$work/Dockerfile" <<EOF
FROM $BASE_IMAGE
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends systemd systemd-sysv dbus chromium-headless-shell fonts-liberation ca-certificates procps \\
 && rm -rf /var/lib/apt/lists/* \\
 && systemctl mask getty.target console-getty.service systemd-udevd.service systemd-udev-trigger.service systemd-logind.service
COPY agentready /usr/local/bin/agentready
COPY edge.wasm /usr/local/lib/agentready/edge.wasm
COPY agentready.service /etc/systemd/system/agentready.service
COPY agentready.env /etc/agentready/agentready.env
RUN chmod 0600 /etc/agentready/agentready.env && systemctl enable agentready.service
STOPSIGNAL SIGRTMIN+3
CMD ["/lib/systemd/systemd"]
EOF
say "building the systemd image"
docker build -t agentready-systemd-test:latest "$work" >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log" >&2; die "building the systemd image"; }

docker network create ar-systemd >/dev/null
docker run -d --name ar-systemd-kit --network ar-systemd --network-alias site.agentready.test agentready-testkit:latest >/dev/null
# Without a password, on this test's own network: the image's protected mode
# would refuse the unit's connections from another container.
docker run -d --name ar-systemd-redis --network ar-systemd --network-alias redis agentready-redis:latest \
	redis-server --bind 0.0.0.0 --protected-mode no --dir /data >/dev/null
docker run -d --name ar-systemd --network ar-systemd --cap-add SYS_ADMIN --security-opt seccomp=unconfined \
	--security-opt apparmor=unconfined --cgroupns=host -v /sys/fs/cgroup:/sys/fs/cgroup:rw \
	--tmpfs /run --tmpfs /run/lock agentready-systemd-test:latest >/dev/null || die "systemd did not start in a container here"
inside() { docker exec ar-systemd sh -c "$1"; }

i=0
until [ "$(inside 'systemctl is-active agentready' 2>/dev/null)" = active ]; do
	i=$((i + 1)); [ $i -le 300 ] || die "agentready.service is not active within 30 s"; sleep 0.1
done
inside 'systemd-analyze verify /etc/systemd/system/agentready.service' || die "systemd-analyze verify"
say "systemd-analyze verify: ok"
pid=$(inside 'systemctl show -p MainPID --value agentready')
status=$(inside "grep -E '^(Uid|CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/$pid/status | tr -s '\t\n' '  '")
say "service process: $status"
case $status in *"CapEff: 0000000000000000"*"CapBnd: 0000000000000000"*"NoNewPrivs: 1"*"Seccomp: 2"*) ;; *) die "the service is not confined as the unit says: $status" ;; esac
case $status in *"Uid: 0 "*) die "the service runs as root" ;; esac

inside 'agentready healthcheck --wait 30s' >/dev/null || die "/healthz"
inside 'agentready healthcheck --url "http://127.0.0.1:8080/api/scan?format=json&url=http://site.agentready.test:8000/"' >/dev/null || die "a scan through the service"
inside 'agentready healthcheck --wait 60s --url "http://127.0.0.1:8080/api/screenshot?url=http://site.agentready.test:8000/"' >/dev/null ||
	die "no screenshot within 60 s"
say "a scan and its screenshot: ok"
uid=$(inside "stat -c %u /proc/$pid")
renderer=$(inside "pgrep -f -- --type=renderer | head -n1")
[ -n "$renderer" ] || die "no Chromium renderer is running"
inside "tr '\0' ' ' </proc/$renderer/cmdline" | grep -q -- --no-sandbox && die "Chromium runs with --no-sandbox under the unit"
nsr=$(docker exec -u "$uid" ar-systemd sh -c "readlink /proc/$renderer/ns/user /proc/$renderer/ns/pid /proc/$renderer/ns/net | tr '\n' ' '")
# The service's own links are not readable (it is not dumpable); its user,
# PID and network namespaces are the container's (the unit makes none).
nss=$(docker exec -u "$uid" ar-systemd sh -c "readlink /proc/self/ns/user /proc/self/ns/pid /proc/self/ns/net | tr '\n' ' '")
fr=$(inside "sed -n 's/^Seccomp_filters:\t//p' /proc/$renderer/status")
fs=$(inside "sed -n 's/^Seccomp_filters:\t//p' /proc/$pid/status")
say "renderer namespaces: $nsr; the service's: $nss; seccomp filters: renderer $fr, service $fs"
for ns in $nsr; do case " $nss " in *" $ns "*) die "the renderer shares the service's $ns: Chromium's sandbox is off" ;; esac; done
[ "$fr" -gt "$fs" ] || die "the renderer has no seccomp filter of Chromium's own"
say "Chromium's sandbox is on under the unit"

t0=$(date +%s%N)
inside 'systemctl stop agentready'
ms=$((($(date +%s%N) - t0) / 1000000))
result=$(inside 'systemctl show -p Result -p ExecMainStatus agentready | tr "\n" " "')
say "systemctl stop: ${ms} ms, $result"
case $result in *"Result=success"*"ExecMainStatus=0"*) ;; *) die "unclean stop: $result" ;; esac
say "PASS"
