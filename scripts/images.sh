#!/usr/bin/env bash
# Builds the minik8s images from the binaries in bin/ (make build), each only
# when it is missing or its inputs changed: every image carries the SHA-256
# of its inputs in the label io.minik8s.inputs, and an image whose label
# matches is left alone. The build context is exactly the image's inputs.
#
#   scripts/images.sh [--force] [IMAGE-KEY...]   keys: apiserver scheduler
#                     controller-manager node kube-proxy cluster-dns
#                     ingress-controller busybox busybox-v2 metrics-server, registry (not
#                     built by default)
#                     (default all), conformance (on request only: the
#                     test images of Kubernetes' conformance suite, under
#                     their registry.k8s.io names), e2e-incluster (on
#                     request only: the end-to-end suite builds
#                     bin/e2e-incluster and asks for it), e2e-webhook
#                     (likewise, bin/e2e-webhook)
#
# The node image needs minik8s/debian-base:bookworm, built offline by
# scripts/base-image.sh when missing, crictl (scripts/crictl.sh, from the Go
# module proxy into a cache outside the repository) and the pod sandbox
# image registry.k8s.io/pause (built here, saved into the node image).
set -euo pipefail
cd "$(dirname "$0")/.."

force=0
if [ "${1:-}" = "--force" ]; then
	force=1
	shift
fi
keys=("$@")
[ ${#keys[@]} -gt 0 ] || keys=(apiserver scheduler controller-manager node kube-proxy cluster-dns ingress-controller busybox busybox-v2)

base=minik8s/debian-base:bookworm
# The pod sandbox image (kubeadm's PauseVersion for the pinned release).
pause_image=registry.k8s.io/pause:3.10.2
log() { echo "images: $*" >&2; }

# bin/busybox is Debian's static busybox: control-plane healthchecks and the
# workload image use it, on an empty base, so it must be the static build.
ensure_busybox() {
	local src=${BUSYBOX:-}
	if [ -z "$src" ]; then
		src=$(dpkg -L busybox-static 2>/dev/null | grep -E '/bin/busybox$' | head -n1 || true)
	fi
	if [ -z "$src" ] || [ ! -x "$src" ]; then
		log "no static busybox: apt-get install busybox-static (or set BUSYBOX=/path/to/static/busybox)"
		exit 1
	fi
	mkdir -p bin
	if ! cmp -s "$src" bin/busybox; then
		cp "$src" bin/busybox
	fi
}

# build IMAGE DOCKERFILE TARGET INPUTS... [-- BUILD-ARG...]
build() {
	local image=$1 dockerfile=$2 target=$3
	shift 3
	local inputs=() bargs=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		inputs+=("$1")
		shift
	done
	[ "${1:-}" = "--" ] && shift
	for a in "$@"; do bargs+=(--build-arg "$a"); done
	for f in "${inputs[@]}"; do
		[ -e "$f" ] || { log "$image: missing $f (run make build)"; exit 1; }
	done
	# An image built on the Debian base is rebuilt when the base is.
	local extra=""
	for a in "$@"; do
		[[ $a == BASE=* ]] && extra=$(docker image inspect -f '{{.Id}}' "${a#BASE=}")
	done
	local sum
	sum=$( (sha256sum "$dockerfile" "${inputs[@]}" | awk '{print $1}'; echo "$target $* $extra") | sha256sum | awk '{print $1}')
	local have
	have=$(docker image inspect -f '{{index .Config.Labels "io.minik8s.inputs"}}' "$image" 2>/dev/null || true)
	if [ "$force" = 0 ] && [ "$have" = "$sum" ]; then
		return 0
	fi
	log "building $image"
	local targs=()
	[ -n "$target" ] && targs=(--target "$target")
	local out
	out=$(mktemp)
	if ! tar -c --dereference -f - "$dockerfile" "${inputs[@]}" |
		docker build -f "$dockerfile" "${targs[@]}" "${bargs[@]}" \
			--label "io.minik8s.inputs=$sum" -t "$image" - >"$out" 2>&1; then
		grep -v -e DEPRECATED -e 'legacy builder' -e buildx -e '^ *$' "$out" >&2
		rm -f "$out"
		log "building $image failed"
		exit 1
	fi
	rm -f "$out"
	log "built $image ($(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%.1f MB", $1/1e6}'))"
}

ensure_busybox
cp_files=(bin/busybox bin/kubectl-lite)
for k in "${keys[@]}"; do
	case $k in
	apiserver | scheduler | controller-manager)
		build "minik8s/$k:latest" "deploy/images/$k.Dockerfile" "" "${cp_files[@]}" "bin/$k"
		;;
	node)
		"$(dirname "$0")/base-image.sh" "$base"
		# crictl (scripts/crictl.sh: sigs.k8s.io/cri-tools from the Go
		# module proxy, cached outside the repository).
		"$(dirname "$0")/crictl.sh" >/dev/null
		# The pod sandbox image of containerd's CRI plugin
		# (deploy/node/containerd.toml sandbox_image), saved into the node
		# image, which imports it at every start: saved again only when
		# the image changed, so the node image's inputs stay the same.
		build "$pause_image" deploy/images/conformance/pause.Dockerfile "" bin/busybox deploy/images/conformance/pause.sh
		mkdir -p bin/node-images
		pause_id=$(docker image inspect -f '{{.Id}}' "$pause_image")
		if [ ! -s bin/node-images/pause.tar ] || [ "$(cat bin/node-images/pause.id 2>/dev/null)" != "$pause_id" ]; then
			docker save "$pause_image" -o bin/node-images/pause.tar
			echo "$pause_id" >bin/node-images/pause.id
		fi
		build minik8s/node:latest deploy/images/node.Dockerfile "" \
			bin/busybox bin/kubectl-lite bin/kubelet bin/crictl bin/node-images/pause.tar \
			deploy/node/containerd.toml deploy/node/crictl.yaml \
			deploy/node/certs.d/registry.k8s.io/hosts.toml deploy/node/certs.d/localhost_5001_/hosts.toml \
			deploy/node/entrypoint.sh deploy/node/bootstrap.sh -- "BASE=$base"
		;;
	kube-proxy)
		# The node network agent (deploy/addons/kube-proxy.yaml), loaded
		# into the nodes' containerd like the other add-ons.
		"$(dirname "$0")/base-image.sh" "$base"
		build minik8s/kube-proxy:latest deploy/images/kube-proxy.Dockerfile "" bin/kube-proxy -- "BASE=$base"
		;;
	cluster-dns)
		# The DNS add-on (deploy/addons/cluster-dns.yaml), loaded into the
		# nodes' containerd like the workload images.
		build minik8s/cluster-dns:latest deploy/images/cluster-dns.Dockerfile "" \
			bin/busybox bin/cluster-dns
		;;
	ingress-controller)
		# The ingress add-on (deploy/addons/ingress-controller.yaml),
		# loaded into the nodes' containerd like the workload images.
		build minik8s/ingress-controller:latest deploy/images/ingress-controller.Dockerfile "" \
			bin/busybox bin/ingress-controller
		;;
	registry)
		# The compose network's image registry (docker-compose.yaml's
		# registry service, profile registry).
		mkdir -p bin/registry
		cp "$("$(dirname "$0")/oracle.sh" registry)/registry" bin/registry/registry
		build minik8s/registry:latest deploy/images/registry.Dockerfile "" \
			bin/busybox bin/registry/registry deploy/images/registry-config.yml
		;;
	metrics-server)
		# The opt-in metrics add-on (deploy/metrics-server), loaded into the
		# nodes' containerd like the workload images.
		build minik8s/metrics-server:latest deploy/images/metrics-server.Dockerfile "" \
			bin/busybox bin/metrics-server
		;;
	busybox)
		build minik8s/busybox:latest deploy/images/busybox.Dockerfile "" \
			bin/busybox deploy/images/busybox-httpd.sh -- VERSION=v1
		docker tag minik8s/busybox:latest minik8s/busybox:v1
		;;
	e2e-incluster)
		build minik8s/e2e-incluster:latest deploy/images/e2e-incluster.Dockerfile "" \
			bin/e2e-incluster
		;;
	e2e-webhook)
		build minik8s/e2e-webhook:latest deploy/images/e2e-webhook.Dockerfile "" \
			bin/e2e-webhook
		;;
	busybox-v2)
		build minik8s/busybox:v2 deploy/images/busybox.Dockerfile "" \
			bin/busybox deploy/images/busybox-httpd.sh -- VERSION=v2
		;;
	conformance)
		# The images e2e.test's conformance specs run, built here under the
		# names and tags k8s.io/kubernetes' test/utils/image/manifest.go
		# gives them at the pinned release (there is no registry to pull
		# from). agnhost comes from scripts/oracle.sh, with the porter's
		# certificate from the same module.
		local_oracle=$("$(dirname "$0")/oracle.sh" agnhost)
		kube_src=$(cd internal/oracle/kube && go list -m -f '{{.Dir}}' k8s.io/kubernetes)
		mkdir -p bin/conformance
		cp "$local_oracle/agnhost" bin/conformance/agnhost
		cp "$kube_src/test/images/agnhost/porter/localhost.crt" "$kube_src/test/images/agnhost/porter/localhost.key" bin/conformance/
		chmod 0644 bin/conformance/localhost.crt bin/conformance/localhost.key
		"$(dirname "$0")/base-image.sh" "$base"
		e2e=registry.k8s.io/e2e-test-images
		build "$e2e/agnhost:2.66.1" deploy/images/conformance/agnhost.Dockerfile "" \
			bin/conformance/agnhost bin/conformance/localhost.crt bin/conformance/localhost.key -- "BASE=$base"
		docker tag "$e2e/agnhost:2.66.1" "$e2e/agnhost:2.55"
		# busybox 1.37.0 built from its release source, as upstream's image
		# (Debian's drops badly named environment variables: see the file).
		build "$e2e/busybox:1.37.0-2" deploy/images/conformance/busybox.Dockerfile "" -- "BASE=$base"
		build "$e2e/nginx:1.27.0-2" deploy/images/conformance/nginx.Dockerfile "" -- "BASE=$base"
		docker tag "$e2e/nginx:1.27.0-2" "$e2e/nginx:1.28.0-2"
		build registry.k8s.io/pause:3.10.2 deploy/images/conformance/pause.Dockerfile "" bin/busybox deploy/images/conformance/pause.sh
		build "$e2e/glibc-dns-testing:2.1.1" deploy/images/conformance/glibc-dns-testing.Dockerfile "" -- "BASE=$base"
		# kitten and nautilus: agnhost's test-webserver with a page.
		for page in kitten nautilus; do
			mkdir -p "bin/conformance/$page"
			cp "$kube_src/test/images/$page/html/"* "bin/conformance/$page/"
			chmod 0644 "bin/conformance/$page/"*
			build "$e2e/$page:1.8" deploy/images/conformance/webserver-page.Dockerfile "" \
				bin/conformance/agnhost "bin/conformance/$page/$page.jpg" "bin/conformance/$page/data.json" \
				deploy/images/conformance/alpine-os-release -- "PAGE=$page"
		done
		build "$e2e/nonroot:1.5" deploy/images/conformance/nonroot.Dockerfile "" bin/busybox
		(cd internal/oracle/kube && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o ../../../bin/conformance/nnp "$kube_src/test/images/nonewprivs/nnp.go")
		build "$e2e/nonewprivs:1.4" deploy/images/conformance/nonewprivs.Dockerfile "" bin/busybox bin/conformance/nnp
		# The Aggregator spec's pair: sample-apiserver and etcd.
		cp "$("$(dirname "$0")/oracle.sh" sample-apiserver)/sample-apiserver" bin/conformance/sample-apiserver
		build "$e2e/sample-apiserver:1.29.2" deploy/images/conformance/sample-apiserver.Dockerfile "" bin/busybox bin/conformance/sample-apiserver
		CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o bin/conformance/etcd go.etcd.io/etcd/server/v3
		build registry.k8s.io/etcd:3.7.0-0 deploy/images/conformance/etcd.Dockerfile "" bin/busybox bin/conformance/etcd
		;;
	*)
		log "unknown image key $k"
		exit 2
		;;
	esac
done
