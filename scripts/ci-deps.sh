#!/usr/bin/env bash
# Installs, idempotently, what `make test` needs on a fresh Debian machine.
# Today that is Go (already at /usr/local/go on these machines) and make;
# the kubelet and cluster tests will add containerd, runc, CNI and Docker here.
set -euo pipefail
need=()
command -v make >/dev/null || need+=(make)
command -v git >/dev/null || need+=(git)
if [ ${#need[@]} -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${need[@]}"
fi
if ! command -v go >/dev/null && [ ! -x /usr/local/go/bin/go ]; then
	echo "ci-deps: Go is missing: expected /usr/local/go/bin/go" >&2
	exit 1
fi
