#!/usr/bin/env bash
# Deploys the cluster add-ons of deploy/addons (kube-proxy: the Services'
# rules, NetworkPolicies and pod routes on every node, waited for first, so
# that Services answer when this returns; cluster DNS: the kube-dns
# Service at 10.96.0.10 and the cluster-dns Deployment; the default
# local-path StorageClass and its provisioner's identity; the ingress
# controller: the default IngressClass minik8s and a DaemonSet on hostPorts
# 80 and 443) into the compose cluster and waits for their rollout. Their
# images must be in the nodes' containerd already (scripts/load-image.sh
# minik8s/kube-proxy:latest,minik8s/cluster-dns:latest,minik8s/ingress-controller:latest).
#
#   scripts/addons.sh [-t TIMEOUT_SECONDS]
#
# MINIK8S_PROXY_MODE=nftables (or iptables, the default) sets kube-proxy's
# --proxy-mode in the DaemonSet (make up passes the environment on).
set -euo pipefail
cd "$(dirname "$0")/.."

kubeconfig=${KUBECONFIG_FILE:-.minik8s/kubeconfig}
kubectl=${KUBECTL:-bin/kubectl-lite}
timeout=120
while getopts "t:" o; do
	case $o in
	t) timeout=$OPTARG ;;
	*) exit 2 ;;
	esac
done
k() { "$kubectl" --kubeconfig "$kubeconfig" "$@"; }

start=$(date +%s)
case ${MINIK8S_PROXY_MODE:-} in
"") k apply -f deploy/addons/ >&2 ;;
iptables | nftables)
	# kube-proxy's manifest with --proxy-mode added after --cluster-cidr.
	for f in deploy/addons/*.yaml; do
		echo ---
		if [ "$f" = deploy/addons/kube-proxy.yaml ]; then
			sed "s|^\( *\)- --cluster-cidr=\(.*\)$|&\n\1- --proxy-mode=$MINIK8S_PROXY_MODE|" "$f"
		else
			cat "$f"
		fi
	done | k apply -f - >&2
	;;
*)
	echo "addons: MINIK8S_PROXY_MODE=$MINIK8S_PROXY_MODE: want iptables or nftables" >&2
	exit 2
	;;
esac
# rollout NAMESPACE KIND/NAME waits for one add-on; the pods of its
# namespace are shown when it does not roll out.
rollout() {
	if ! k rollout status "$2" -n "$1" --timeout="${timeout}s" >&2; then
		k get pods -n "$1" -o wide >&2 || true
		exit 1
	fi
	echo "addons: $2 rolled out after $(($(date +%s) - start)) s" >&2
}
rollout kube-system daemonset/kube-proxy
rollout kube-system deployment/cluster-dns
rollout ingress-minik8s daemonset/ingress-controller
