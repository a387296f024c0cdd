#!/usr/bin/env bash
# oracle.sh builds the real Kubernetes binaries that tests compare minik8s
# with (kubectl, kube-scheduler, kube-controller-manager, kube-apiserver),
# at the release pinned in internal/oracle/kube/go.mod, into a cache outside
# the repository. They are test-only: nothing minik8s ships is built from
# k8s.io/kubernetes.
#
#   scripts/oracle.sh [NAME...]   build NAMEs (default: all four), print the
#                                 directory that holds them
#
# A binary is rebuilt only when the pinned module files are newer than it.
# MINIK8S_ORACLE_DIR overrides the cache directory. Building needs the Go
# module proxy (the first build of all four takes several minutes).
set -euo pipefail
export PATH=$PATH:/usr/local/go/bin
root=$(cd "$(dirname "$0")/.." && pwd)
mod="$root/internal/oracle/kube"
version=$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" {print $3}' "$mod/go.mod")
if [[ -z "$version" ]]; then
	echo "oracle.sh: no k8s.io/kubernetes requirement in $mod/go.mod" >&2
	exit 1
fi
dir=${MINIK8S_ORACLE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/minik8s/oracle/$version}
mkdir -p "$dir"

names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=(kubectl kube-scheduler kube-controller-manager kube-apiserver)

# Version stamps as Kubernetes' own build sets them: components report
# them in /version and in their User-Agent (kubectl/v1.37.2 ...).
minor=${version#v*.}; minor=${minor%%.*}
major=${version#v}; major=${major%%.*}
stamp=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	stamp+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
	stamp+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

# One build at a time: tests in parallel packages may all ask at once.
exec 9>"$dir/.lock"
flock 9
for name in "${names[@]}"; do
	case "$name" in
	kubectl | kube-scheduler | kube-controller-manager | kube-apiserver) ;;
	*)
		echo "oracle.sh: unknown binary \"$name\" (kubectl, kube-scheduler, kube-controller-manager, kube-apiserver)" >&2
		exit 2
		;;
	esac
	out="$dir/$name"
	if [[ -x "$out" && "$out" -nt "$mod/go.mod" && "$out" -nt "$mod/go.sum" ]]; then
		continue
	fi
	echo "oracle.sh: building $name $version into $dir" >&2
	(cd "$mod" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w$stamp" -o "$out.tmp" "k8s.io/kubernetes/cmd/$name")
	mv "$out.tmp" "$out"
done
echo "$dir"
