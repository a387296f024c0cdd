#!/usr/bin/env bash
# Installs and starts, idempotently, what `make test` needs on a fresh Debian
# machine: Go (already at /usr/local/go on these machines), make, containerd,
# runc, the CNI plugins, iptables, iproute2, Docker + Compose and debootstrap
# (for the offline base image), busybox-static (for the workload image); then
# starts containerd and dockerd when they are not already answering.
set -euo pipefail
pkgs=(make git containerd runc containernetworking-plugins iptables iproute2
	docker.io docker-compose debootstrap busybox-static ca-certificates)
need=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
if ! command -v go >/dev/null && [ ! -x /usr/local/go/bin/go ]; then
	echo "ci-deps: Go is missing: expected /usr/local/go/bin/go" >&2
	exit 1
fi
"$(dirname "$0")/start-daemons.sh"
