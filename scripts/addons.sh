#!/usr/bin/env bash
# Deploys the cluster add-ons of deploy/addons (cluster DNS: the kube-dns
# Service at 10.96.0.10 and the cluster-dns Deployment; the default
# local-path StorageClass and its provisioner's identity) into the compose
# cluster and waits for their rollout. Their images must be in the nodes'
# containerd already (scripts/load-image.sh minik8s/cluster-dns:latest).
#
#   scripts/addons.sh [-t TIMEOUT_SECONDS]
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
k apply -f deploy/addons/ >&2
if ! k rollout status deployment/cluster-dns -n kube-system --timeout="${timeout}s" >&2; then
	k get pods -n kube-system -o wide >&2 || true
	exit 1
fi
echo "addons: cluster-dns rolled out after $(($(date +%s) - start)) s" >&2
