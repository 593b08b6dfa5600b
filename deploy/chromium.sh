#!/bin/sh
# CHROME_PATH of the container image (deploy/Dockerfile): Debian's headless
# Chromium. Its sandbox needs user namespaces, which Docker's default seccomp
# profile does not allow, so it runs without one unless the operator says the
# runtime permits it (AGENTREADY_CHROMIUM_SANDBOX=1). What protects the host
# either way: docs/deploy.md, "Chromium's sandbox".
if [ "${AGENTREADY_CHROMIUM_SANDBOX:-0}" = 1 ]; then
	exec /usr/lib/chromium/chromium-headless-shell "$@"
fi
exec /usr/lib/chromium/chromium-headless-shell --no-sandbox "$@"
