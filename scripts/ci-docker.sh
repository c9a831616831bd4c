#!/usr/bin/env bash
# A Docker engine for tests/launcher on a fresh Debian CI machine: install docker.io and debootstrap (the
# container tests build their offline base image with it) and start dockerd with the vfs storage driver,
# which works inside containers and on any filesystem. Idempotent: an engine that already answers is kept.
set -euo pipefail
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
need=()
command -v dockerd >/dev/null || need+=(docker.io)
command -v debootstrap >/dev/null || need+=(debootstrap)
if [ ${#need[@]} -gt 0 ]; then
  $SUDO apt-get update -q && $SUDO apt-get install -y -q --no-install-recommends "${need[@]}"
fi
if ! docker info >/dev/null 2>&1; then
  log=/var/log/opbench-dockerd.log
  $SUDO sh -c "nohup dockerd --storage-driver=vfs >$log 2>&1 &"
  for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { echo "dockerd did not come up; last lines of $log:" >&2; $SUDO tail -20 "$log" >&2; exit 1; }
fi
echo "docker engine: $(docker version --format '{{.Server.Version}}') ($(docker info --format '{{.Driver}}'))"
