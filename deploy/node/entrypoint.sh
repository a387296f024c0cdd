#!/bin/bash
# Entrypoint of a minik8s node container (under tini): starts containerd,
# waits for its socket, then runs the kubelet and restarts it when it exits
# (as systemd's Restart=always would), until the container is stopped.
# containerd logs go to /var/log/containerd.log; the kubelet's to the
# container's output, so `docker logs node-1` is the kubelet's log.
#
# Runtime: MINIK8S_CONTAINER_RUNTIME (compose passes it from the host's
# environment) picks how the kubelet drives containerd: "cri" (the
# default) through containerd's CRI plugin (--container-runtime-endpoint
# unix:///run/containerd/containerd.sock, namespace k8s.io), which crictl
# (/etc/crictl.yaml) sees too, or "native" through containerd's Go client
# in namespace minik8s. containerd serves both either way
# (/etc/containerd/config.toml); the pod sandbox image is imported into
# k8s.io at every start, before the kubelet runs.
#
# Join: the first start reads the join file the bootstrap service wrote
# (MINIK8S_JOIN_FILE: SERVER, TOKEN, CA_CERT_HASH) and passes --server,
# --token and --discovery-token-ca-cert-hash; the kubelet writes its own
# kubeconfig (--kubeconfig) and uses that from then on.
set -uo pipefail

log() { echo "minik8s-node: $*" >&2; }

root_dir=${KUBELET_ROOT_DIR:-/var/lib/kubelet}
kubeconfig=${KUBELET_KUBECONFIG:-$root_dir/kubeconfig}
join_file=${MINIK8S_JOIN_FILE:-/var/lib/minik8s/join/join.env}
node_name=${NODE_NAME:-$(hostname)}
sock=/run/containerd/containerd.sock
runtime=${MINIK8S_CONTAINER_RUNTIME:-cri}
pause_image=registry.k8s.io/pause:3.10.2
case $runtime in
native | cri) ;;
*)
	log "MINIK8S_CONTAINER_RUNTIME=$runtime: want native or cri"
	exit 1
	;;
esac

containerd_pid=""
kubelet_pid=""
stopping=0

stop() {
	stopping=1
	log "stopping (signal)"
	[ -n "$kubelet_pid" ] && kill -TERM "$kubelet_pid" 2>/dev/null
	[ -n "$kubelet_pid" ] && wait "$kubelet_pid" 2>/dev/null
	[ -n "$containerd_pid" ] && kill -TERM "$containerd_pid" 2>/dev/null
	[ -n "$containerd_pid" ] && wait "$containerd_pid" 2>/dev/null
	exit 0
}
trap stop TERM INT

# Docker mounts /proc/sys read-only in a container that is not privileged;
# CNI plugins and kube-proxy (a host-network pod of this node) set
# per-interface sysctls in pod and node network namespaces, so make it writable (CAP_SYS_ADMIN allows it).
mount -o remount,bind,rw /proc/sys 2>/dev/null || log "cannot remount /proc/sys read-write"
# Pods route through this node (compose sets these too).
sysctl -qw net.ipv4.ip_forward=1 2>/dev/null || log "cannot enable net.ipv4.ip_forward"
sysctl -qw net.ipv4.conf.all.route_localnet=1 2>/dev/null || true
mkdir -p /run/containerd "$root_dir" /var/log/pods /etc/cni/net.d

containerd --config /etc/containerd/config.toml >>/var/log/containerd.log 2>&1 &
containerd_pid=$!
for i in $(seq 1 100); do
	if ctr --address "$sock" version >/dev/null 2>&1; then
		break
	fi
	if ! kill -0 "$containerd_pid" 2>/dev/null; then
		log "containerd exited; last lines of /var/log/containerd.log:"
		tail -n 20 /var/log/containerd.log >&2
		exit 1
	fi
	sleep 0.1
done
ctr --address "$sock" version >/dev/null 2>&1 || { log "containerd did not answer on $sock"; exit 1; }
log "containerd $(containerd --version | awk '{print $3}') ready on $sock"

# Images shipped in the node image (the CRI plugin's sandbox image) into
# the CRI plugin's namespace: nothing is pulled for a pod sandbox.
for tar in /usr/share/minik8s/images/*.tar; do
	[ -e "$tar" ] || continue
	if ! out=$(ctr --address "$sock" -n k8s.io images import --platform linux/amd64 "$tar" 2>&1); then
		log "importing $tar into namespace k8s.io failed: $out"
	fi
done

# node_ip is this container's address on its (first) network: it may change
# across restarts, so it is read at every start.
node_ip() {
	ip -4 -o addr show scope global 2>/dev/null | awk '$2 != "cni0" && $2 !~ /^veth/ {sub(/\/.*/, "", $4); print $4; exit}'
}

kubelet_args() {
	args=(
		--hostname-override "$node_name"
		--node-ip "$(node_ip)"
		--kubeconfig "$kubeconfig"
		# Registry mirrors in containerd's layout (deploy/node/certs.d):
		# registry.k8s.io through the compose network's registry.
		--registry-config-path /etc/containerd/certs.d
		--root-dir "$root_dir"
		--pod-manifest-path /etc/kubernetes/manifests
		--cni-conf-dir /etc/cni/net.d
		--cni-bin-dir /usr/lib/cni
		# Pods resolve through the cluster-dns add-on behind the kube-dns
		# Service (deploy/addons), kubeadm's clusterDNS: the tenth address
		# of the default service range.
		--cluster-dns "${CLUSTER_DNS:-10.96.0.10}"
		--cluster-domain "${CLUSTER_DOMAIN:-cluster.local}"
		# A serving certificate from the cluster CA for the node's
		# addresses, which the apiserver verifies
		# (--kubelet-certificate-authority); requested again when the
		# address changes across restarts.
		--rotate-server-certificates
		# Every node of this cluster is a container on one host's disk, as
		# kind's: disk signals measure the host, not the node, and a host
		# more than 90% full would taint every node disk-pressure at once.
		# As kind, disk eviction is off (0%); memory keeps kube's default.
		--eviction-hard "memory.available<100Mi,nodefs.available<0%,nodefs.inodesFree<0%,imagefs.available<0%"
	)
	if [ "$runtime" = cri ]; then
		# kube's flags: the CRI endpoint, and the sandbox image (which the
		# kubelet's image garbage collection keeps) that the CRI plugin's
		# sandbox_image names.
		args+=(--container-runtime-endpoint "unix://$sock" --pod-infra-container-image "$pause_image")
	else
		args+=(--containerd-address "$sock")
	fi
	if [ ! -s "$kubeconfig" ]; then
		if [ ! -s "$join_file" ]; then
			log "no kubeconfig at $kubeconfig and no join file at $join_file"
			return 1
		fi
		# shellcheck disable=SC1090
		. "$join_file"
		args+=(--server "$SERVER" --token "$TOKEN" --discovery-token-ca-cert-hash "$CA_CERT_HASH")
	fi
	# shellcheck disable=SC2206
	args+=(${KUBELET_EXTRA_ARGS:-})
}

backoff=1
while [ "$stopping" = 0 ]; do
	if ! kill -0 "$containerd_pid" 2>/dev/null; then
		log "containerd died; last lines of /var/log/containerd.log:"
		tail -n 20 /var/log/containerd.log >&2
		exit 1
	fi
	if kubelet_args; then
		shown=() prev=""
		for a in "${args[@]}"; do
			[ "$prev" = --token ] && a="<redacted>"
			shown+=("$a") prev=$a
		done
		log "starting kubelet ${shown[*]}"
		started=$(date +%s)
		kubelet "${args[@]}" &
		kubelet_pid=$!
		wait "$kubelet_pid"
		rc=$?
		kubelet_pid=""
		[ "$stopping" = 1 ] && break
		log "kubelet exited with status $rc"
		# A kubelet that ran for a while restarts at once; a crash loop backs off.
		if [ $(($(date +%s) - started)) -gt 30 ]; then backoff=1; fi
	fi
	log "restarting the kubelet in ${backoff}s"
	sleep "$backoff" &
	wait $!
	backoff=$((backoff * 2))
	[ "$backoff" -gt 10 ] && backoff=10
done
