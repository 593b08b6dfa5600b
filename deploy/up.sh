#!/bin/sh
# deploy/up.sh — `make deploy-local`: deploy/compose.yaml on this machine
# (Redis, two origins, the edge), from a clean checkout. Run from the
# repository's root.
#   - The settings live in AGENTREADY_ENV_FILE (default data/deploy-local.env,
#     which git ignores). When the file is missing it is written with fresh
#     shared secrets (token keys, edge secret, Redis password) and its own
#     path: keep it, or tokens die with the next start. Add more settings to
#     it (deploy/agentready.env.example lists them) and run this again.
#   - The images are built when missing (deploy/image.sh: no registry needed).
#   - It waits until the edge answers through an origin, then prints the URL.
# Stop it with: docker-compose --env-file data/deploy-local.env -p agentready -f deploy/compose.yaml down
set -eu

say() { echo "deploy/up.sh: $*" >&2; }
die() { say "$*"; exit 1; }
[ -f deploy/compose.yaml ] || die "run me from the repository's root (make deploy-local)"
command -v docker >/dev/null || die "docker is missing (apt-get install docker.io docker-compose)"
docker version >/dev/null 2>&1 || die "the docker daemon does not answer: start it (systemctl start docker, or dockerd &)"
if command -v docker-compose >/dev/null 2>&1; then compose=docker-compose
elif docker compose version >/dev/null 2>&1; then compose="docker compose"
else die "docker-compose is missing (apt-get install docker-compose)"; fi

project=${PROJECT:-agentready}
env_file=${AGENTREADY_ENV_FILE:-data/deploy-local.env}
random_hex() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }
if [ ! -f "$env_file" ]; then
	mkdir -p "$(dirname "$env_file")"
	abs=$(cd "$(dirname "$env_file")" && pwd)/$(basename "$env_file")
	(
		umask 077
		cat >"$env_file" <<EOF
# agentready settings for deploy/compose.yaml, written by deploy/up.sh on $(date -u +%Y-%m-%d).
# Shared by the edge and both origins. Keep this file: the keys sign tokens.
# More settings: deploy/agentready.env.example and docs/deploy.md.
AGENTREADY_ENV_FILE=$abs
AGENTREADY_TOKEN_KEYS=k$(date -u +%Y%m%d):$(random_hex 32)
AGENTREADY_EDGE_SECRET=$(random_hex 32)
REDIS_PASSWORD=$(random_hex 16)
EOF
	)
	say "settings written to $env_file (fresh secrets; keep the file)"
fi
env_file=$(cd "$(dirname "$env_file")" && pwd)/$(basename "$env_file")
grep -q '^AGENTREADY_ENV_FILE=' "$env_file" || die "$env_file does not name itself: add the line AGENTREADY_ENV_FILE=$env_file (docs/deploy.md)"

: "${IMAGE:=agentready:latest}"
docker image inspect "$IMAGE" >/dev/null 2>&1 || IMAGE=$IMAGE sh deploy/image.sh agentready
docker image inspect "${REDIS_IMAGE:=agentready-redis:latest}" >/dev/null 2>&1 || REDIS_IMAGE=$REDIS_IMAGE sh deploy/image.sh redis

export AGENTREADY_IMAGE="$IMAGE" REDIS_IMAGE
say "starting (compose waits for Redis and both origins to be healthy)"
$compose --env-file "$env_file" -p "$project" -f deploy/compose.yaml up -d
# Healthy means the edge's /healthz, which the edge forwards to an origin, answered 200.
$compose --env-file "$env_file" -p "$project" -f deploy/compose.yaml exec -T edge agentready healthcheck --wait 60s >/dev/null ||
	die "the edge did not answer /healthz within 60 s; see: $compose --env-file $env_file -p $project -f deploy/compose.yaml logs"
addr=$($compose --env-file "$env_file" -p "$project" -f deploy/compose.yaml port edge 8080 | sed 's/^0\.0\.0\.0:/127.0.0.1:/')
run="$compose --env-file $env_file -p $project -f deploy/compose.yaml"
cat <<EOF

agentready is up: http://$addr
  curl 'http://$addr/api/scan?url=example.com&format=json'
  status: $run ps
  logs:   $run logs -f
  stop:   $run down        (add -v to drop Redis's data too)
EOF
