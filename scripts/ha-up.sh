#!/usr/bin/env bash
# Starts the highly-available compose cluster (docker-compose.ha.yaml,
# compose project minik8s-ha): three control-plane members, the load
# balancer on 127.0.0.1:${MINIK8S_HA_API_PORT:-7443}, one node; waits for the
# node, loads the workload and add-on images and deploys the add-ons
# (MINIK8S_HA_ADDONS=0 skips them). The host kubeconfig is
# .minik8s-ha/kubeconfig. make up HA=1 runs it after building the images.
#
#   scripts/ha-up.sh
set -euo pipefail
cd "$(dirname "$0")/.."

export COMPOSE_PROJECT_NAME=minik8s-ha
export KUBECONFIG_FILE=.minik8s-ha/kubeconfig
compose=${COMPOSE:-$(docker compose version >/dev/null 2>&1 && echo "docker compose" || echo docker-compose)}
workload=minik8s/busybox:latest,minik8s/busybox:v2
addons=minik8s/kube-proxy:latest,minik8s/cluster-dns:latest,minik8s/ingress-controller:latest

mkdir -p .minik8s-ha
start=$(date +%s)
$compose -f docker-compose.ha.yaml up -d --remove-orphans
echo "ha-up: members up after $(($(date +%s) - start)) s" >&2
if [ "${MINIK8S_HA_ADDONS:-1}" = 0 ]; then
	scripts/load-image.sh "$workload"
	scripts/wait-ready.sh -t 180
else
	scripts/load-image.sh "$workload,$addons"
	scripts/wait-ready.sh -t 180
	scripts/addons.sh
fi
scripts/ha-member.sh status
echo
echo "HA cluster ready. Use it with:"
echo "  export KUBECONFIG=$PWD/$KUBECONFIG_FILE"
echo "  bin/kubectl-lite get nodes"
