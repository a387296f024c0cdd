#!/usr/bin/env bash
# crictl.sh builds crictl, the CRI command-line client of
# sigs.k8s.io/cri-tools at the version pinned below, into a cache outside
# the repository (as scripts/oracle.sh does for the test binaries) and
# copies it to bin/crictl. The node image (scripts/images.sh node) and
# scripts/install-node.sh put it on every node, with /etc/crictl.yaml
# (deploy/node/crictl.yaml) pointing it at containerd's CRI socket.
#
#   scripts/crictl.sh           build when missing, copy to bin/crictl, print its path
#
# cri-tools builds with `go install MODULE@VERSION` (no replace directives),
# from the Go module proxy only; the version is stamped as upstream's
# release build does (`crictl --version`: crictl version v1.37.0).
# MINIK8S_CRICTL_DIR overrides the cache directory.
set -euo pipefail
export PATH=$PATH:/usr/local/go/bin
root=$(cd "$(dirname "$0")/.." && pwd)
version=v1.37.0
dir=${MINIK8S_CRICTL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/minik8s/crictl/$version}
mkdir -p "$dir" "$root/bin"

# One build at a time (make up and make crictl may run together).
exec 9>"$dir/.lock"
flock 9
if [[ ! -x "$dir/crictl" ]] || [[ "$("$dir/crictl" --version 2>/dev/null)" != "crictl version $version" ]]; then
	echo "crictl.sh: building crictl $version into $dir" >&2
	tmp=$(mktemp -d)
	# Outside any module: go install MODULE@VERSION uses cri-tools' own
	# go.mod, with no go.sum of ours to check its modules against. First
	# from the module cache alone (its download directory as the proxy),
	# whose contents the go command verified against the checksum database
	# when it downloaded them, so the database is not asked again (an
	# offline machine, a fresh-machine container on the host's cache);
	# then through the configured proxy, verified as usual.
	build() {
		(cd "$tmp" && GOBIN="$tmp" CGO_ENABLED=0 GOFLAGS= "$@" go install -trimpath \
			-ldflags "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=$version" \
			"sigs.k8s.io/cri-tools/cmd/crictl@$version")
	}
	cache="file://$(go env GOMODCACHE)/cache/download"
	if ! build env GOPROXY="$cache" GOSUMDB=off 2>/dev/null; then
		if [ "${GOPROXY:-}" = off ]; then
			echo "crictl.sh: sigs.k8s.io/cri-tools@$version and its modules are not in the module cache, and GOPROXY=off" >&2
			rm -rf "$tmp"
			exit 1
		fi
		build env >&2 || { rm -rf "$tmp"; exit 1; }
	fi
	mv -f "$tmp/crictl" "$dir/crictl"
	rm -rf "$tmp"
fi
if ! cmp -s "$dir/crictl" "$root/bin/crictl"; then
	cp "$dir/crictl" "$root/bin/crictl.tmp"
	mv -f "$root/bin/crictl.tmp" "$root/bin/crictl"
fi
echo "$root/bin/crictl"
