#!/usr/bin/env bash
# oracle.sh builds the real Kubernetes binaries that tests compare minik8s
# with (kubectl, kube-scheduler, kube-controller-manager, kube-apiserver),
# at the release pinned in internal/oracle/kube/go.mod, into a cache outside
# the repository. They are test-only: nothing minik8s ships is built from
# k8s.io/kubernetes.
#
#   scripts/oracle.sh [NAME...]   build NAMEs (default: the four binaries), print the
#                                 directory that holds them
#
# e2e.test, Kubernetes' end-to-end (conformance) suite, agnhost, its
# test-image binary, ginkgo, the runner of its parallel part, and
# sample-apiserver (k8s.io/sample-apiserver of the same release, the
# Aggregator spec's image) are built on request only (e2e.test takes over ten minutes on two cores).
# helm, Helm v4 (helm.sh/helm/v4 at the version pinned below), is the
# client the Helm chart tests drive against both apiservers; it is built in
# a module of its own, so neither minik8s' go.mod nor the kube sub-module
# takes Helm's dependencies. registry, the CNCF Distribution registry
# (github.com/distribution/distribution/v3 at the version pinned below), is
# the compose cluster's image registry (scripts/images.sh registry), built
# the same way.
#
# A binary is rebuilt only when the pinned module files' contents changed
# since it was built (a stamp beside it keeps their hash), so checkouts in
# several worktrees share one cache. MINIK8S_ORACLE_DIR overrides the cache
# directory. Building needs the Go module proxy (the first build of all
# four takes several minutes).
set -euo pipefail
export PATH=$PATH:/usr/local/go/bin
root=$(cd "$(dirname "$0")/.." && pwd)
mod="$root/internal/oracle/kube"
version=$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" {print $3}' "$mod/go.mod")
if [[ -z "$version" ]]; then
	echo "oracle.sh: no k8s.io/kubernetes requirement in $mod/go.mod" >&2
	exit 1
fi
helm_version=v4.3.2
registry_version=v3.1.2
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
	kubectl | kube-scheduler | kube-controller-manager | kube-apiserver)
		build=(go build -trimpath -ldflags "-s -w$stamp" -o "$dir/$name.tmp" "k8s.io/kubernetes/cmd/$name")
		;;
	agnhost)
		# The conformance suite's test-image binary (scripts/images.sh
		# conformance packs it as registry.k8s.io/e2e-test-images/agnhost).
		# Its dependencies' go.sum lines are not all pinned here: it is
		# built in a copy of the module (-mod=mod adds them there), so the
		# checkout's go.sum, and with it the other binaries' stamps, stay.
		build=(go build -mod=mod -trimpath -ldflags "-s -w" -o "$dir/$name.tmp" k8s.io/kubernetes/test/images/agnhost)
		;;
	ginkgo)
		# Ginkgo's own runner (the version the suite is built with): it
		# runs e2e.test's parallel part in several processes. Built in a
		# copy of the module, as agnhost.
		build=(go build -mod=mod -trimpath -ldflags "-s -w" -o "$dir/$name.tmp" github.com/onsi/ginkgo/v2/ginkgo)
		;;
	e2e.test)
		# The suite's own tests select every e2e package; -mod=mod adds
		# the go.sum lines of their test-only dependencies.
		build=(go test -mod=mod -c -trimpath -ldflags "-s -w$stamp" -o "$dir/$name.tmp" k8s.io/kubernetes/test/e2e)
		;;
	sample-apiserver)
		# The staging module of the same release (v0.MINOR.PATCH), added
		# to a copy of the module below.
		build=(go build -mod=mod -trimpath -ldflags "-s -w" -o "$dir/$name.tmp" k8s.io/sample-apiserver)
		;;
	registry)
		# The compose cluster's image registry (minik8s/registry,
		# scripts/images.sh registry): Distribution's registry program, in
		# a module of its own as helm.
		build=(go build -mod=mod -trimpath -ldflags "-s -w" -o "$dir/$name.tmp" github.com/distribution/distribution/v3/cmd/registry)
		;;
	helm)
		build=(go build -mod=mod -trimpath -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$helm_version" -o "$dir/$name.tmp" helm.sh/helm/v4/cmd/helm)
		;;
	*)
		echo "oracle.sh: unknown binary \"$name\" (kubectl, kube-scheduler, kube-controller-manager, kube-apiserver, e2e.test, agnhost, ginkgo, sample-apiserver, helm, registry)" >&2
		exit 2
		;;
	esac
	out="$dir/$name"
	want=$(cat "$mod/go.mod" "$mod/go.sum" | sha256sum | cut -d' ' -f1)
	release=$version
	if [[ $name == helm ]]; then
		want="helm.sh/helm/v4@$helm_version"
		release=$helm_version
	elif [[ $name == registry ]]; then
		want="github.com/distribution/distribution/v3@$registry_version"
		release=$registry_version
	fi
	if [[ -x "$out" && "$(cat "$out.stamp" 2>/dev/null)" == "$want" ]]; then
		continue
	fi
	echo "oracle.sh: building $name $release into $dir" >&2
	if [[ $name == helm ]]; then
		tmp=$(mktemp -d)
		(cd "$tmp" && go mod init minik8s.test/helm-oracle && go get "helm.sh/helm/v4@$helm_version" && CGO_ENABLED=0 "${build[@]}") >&2 || { rm -rf "$tmp"; exit 1; }
		rm -rf "$tmp"
	elif [[ $name == registry ]]; then
		tmp=$(mktemp -d)
		(cd "$tmp" && go mod init minik8s.test/registry && go get "github.com/distribution/distribution/v3@$registry_version" && CGO_ENABLED=0 "${build[@]}") >&2 || { rm -rf "$tmp"; exit 1; }
		rm -rf "$tmp"
	elif [[ $name == agnhost || $name == ginkgo || $name == sample-apiserver ]]; then
		tmp=$(mktemp -d)
		cp "$mod/go.mod" "$mod/go.sum" "$mod"/*.go "$tmp/"
		if [[ $name == sample-apiserver ]]; then
			(cd "$tmp" && go get "k8s.io/sample-apiserver@v0.${version#v1.}") || { rm -rf "$tmp"; exit 1; }
		fi
		(cd "$tmp" && CGO_ENABLED=0 "${build[@]}") || { rm -rf "$tmp"; exit 1; }
		rm -rf "$tmp"
	else
		(cd "$mod" && CGO_ENABLED=0 "${build[@]}")
	fi
	mv "$dir/$name.tmp" "$out"
	echo "$want" >"$out.stamp"
done
echo "$dir"
