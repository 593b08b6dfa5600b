#!/bin/sh
# deploy/base.sh IMAGE — build a Debian bookworm base image from Debian's own
# packages, for machines that reach Debian's mirror but no image registry:
# debootstrap --variant=minbase, trimmed like the official debian:bookworm-slim
# (no documentation, manual pages or translations; apt lists and caches
# removed), then `docker import`. The Dockerfile builds on it exactly as on
# debian:bookworm-slim (BASE_IMAGE). Runs as root (debootstrap needs it).
#
# The mirror is the one apt already uses here (/etc/apt/sources.list*),
# else deb.debian.org; DEBIAN_MIRROR and DEBIAN_SECURITY_MIRROR override.
set -eu

image=${1:?usage: deploy/base.sh IMAGE (e.g. agentready-base:bookworm)}
suite=bookworm

# The first http(s) Debian mirror apt is configured with (one-line or deb822 format).
mirror_from_apt() { # $1: the path it ends with: /debian or /debian-security
	cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
		grep -v '^[[:space:]]*#' | grep -oE 'https?://[^[:space:]]+' | sed 's,/$,,' | grep -E "$1\$" | head -n1
}
mirror=${DEBIAN_MIRROR:-$(mirror_from_apt /debian)}
mirror=${mirror:-http://deb.debian.org/debian}
security=${DEBIAN_SECURITY_MIRROR:-$(mirror_from_apt /debian-security)}
security=${security:-http://deb.debian.org/debian-security}

command -v debootstrap >/dev/null || { echo "deploy/base.sh: debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }
root=$(mktemp -d "${TMPDIR:-/tmp}/agentready-base.XXXXXX")
trap 'rm -rf "$root"' EXIT INT TERM

echo "deploy/base.sh: debootstrap --variant=minbase $suite from $mirror" >&2
debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$root.log" 2>&1 || {
	echo "deploy/base.sh: debootstrap failed; its log:" >&2; tail -n 40 "$root.log" >&2; rm -f "$root.log"; exit 1; }
rm -f "$root.log"

# What debian:bookworm-slim has: the suite, its updates and its security
# archive, in deb822 form; dpkg told to skip documentation and translations
# (the official image's /etc/dpkg/dpkg.cfg.d/docker), apt to keep no caches.
rm -f "$root/etc/apt/sources.list"
cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
cat >"$root/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
EOF
cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
echo 'Acquire::GzipIndexes "true";' >"$root/etc/apt/apt.conf.d/docker-gzip-indexes"
echo 'APT::AutoRemove::SuggestsImportant "false";' >"$root/etc/apt/apt.conf.d/docker-autoremove-suggests"
# What the installed packages left before the exclusions existed.
find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete 2>/dev/null || true
rm -rf "$root/usr/share/man"/* "$root/usr/share/info"/* "$root/usr/share/locale"/* "$root/usr/share/lintian"/* \
	"$root/var/cache/apt"/*.bin "$root/var/cache/apt/archives"/*.deb "$root/var/lib/apt/lists"/* \
	"$root/var/log"/*.log "$root/var/cache/debconf"/*-old "$root/var/lib/dpkg"/*-old
: >"$root/etc/machine-id" 2>/dev/null || true

tar --numeric-owner -C "$root" -c . |
	docker import --change 'CMD ["bash"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
		--message "debootstrap --variant=minbase $suite ($mirror)" - "$image" >/dev/null
echo "deploy/base.sh: $image built ($(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1/1e6}'))" >&2
