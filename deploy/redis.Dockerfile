# Redis from Debian's package, for deploy/compose.yaml where no image
# registry is reachable (with one, REDIS_IMAGE=redis:7-bookworm works the
# same: the compose file replaces the entrypoint and command, and runs Redis
# as the user redis that both images have). Keeps its data on the /data
# volume with the append-only file: monitors, idempotency keys and
# allowances survive a restart. Run alone, it has no password and stays in
# protected mode: it answers only on the container's loopback (compose gives
# it a password from the env file).
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log \
 && install -d -o redis -g redis -m 0750 /data
USER redis
WORKDIR /data
EXPOSE 6379
CMD ["redis-server", "--bind", "0.0.0.0", "--protected-mode", "yes", "--dir", "/data", "--appendonly", "yes"]
# Last, as in deploy/Dockerfile: the classic builder leaves an anonymous
# volume behind for every step after a VOLUME.
VOLUME /data
