#!/usr/bin/env bash
# A Docker engine for tests/launcher on a fresh Debian CI machine: install docker.io and debootstrap (the
# container tests build their offline base image with it) and start dockerd with the overlay2 storage driver
# where the kernel and filesystem support it (layers are copy-on-write), else vfs, which works inside
# containers and on any filesystem but copies the whole image for every build step and container (several
# minutes more for tests/launcher). OPBENCH_STORAGE_DRIVER=vfs forces vfs. Idempotent: an engine that
# already answers is kept.
set -euo pipefail
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
need=()
command -v dockerd >/dev/null || need+=(docker.io)
command -v debootstrap >/dev/null || need+=(debootstrap)
if [ ${#need[@]} -gt 0 ]; then
  $SUDO apt-get update -q && $SUDO apt-get install -y -q --no-install-recommends "${need[@]}"
fi
start_dockerd() {  # $1: storage driver; returns 0 once the engine answers
  $SUDO sh -c "nohup dockerd --storage-driver=$1 >$log 2>&1 &"
  for _ in $(seq 60); do
    docker info >/dev/null 2>&1 && return 0
    pgrep -x dockerd >/dev/null || return 1   # exited: this driver is not supported here
    sleep 1
  done
  return 1
}
log=/var/log/opbench-dockerd.log
if ! docker info >/dev/null 2>&1; then
  drivers="overlay2 vfs"; [ "${OPBENCH_STORAGE_DRIVER:-}" = vfs ] && drivers=vfs
  for driver in $drivers; do
    start_dockerd "$driver" && break
    echo "dockerd with $driver did not come up; last lines of $log:" >&2; $SUDO tail -5 "$log" >&2
    pid=$(pgrep -x dockerd || true); [ -z "$pid" ] || { $SUDO kill "$pid"; sleep 3; }
  done
  docker info >/dev/null 2>&1 || { echo "dockerd did not come up" >&2; exit 1; }
fi
echo "docker engine: $(docker version --format '{{.Server.Version}}') ($(docker info --format '{{.Driver}}'))"
