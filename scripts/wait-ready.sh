#!/usr/bin/env bash
# Waits until the compose cluster's API answers with the admin kubeconfig and
# N nodes are Ready (default: as many as there are running node containers),
# like `docker compose up --wait` does for healthchecks. On timeout prints
# the nodes and the last kubelet log lines of every node container.
#
#   scripts/wait-ready.sh [-n NODES] [-t TIMEOUT_SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."

project=${COMPOSE_PROJECT_NAME:-minik8s}
kubeconfig=${KUBECONFIG_FILE:-.minik8s/kubeconfig}
kubectl=${KUBECTL:-bin/kubectl-lite}
want="" timeout=120
while getopts "n:t:" o; do
	case $o in
	n) want=$OPTARG ;;
	t) timeout=$OPTARG ;;
	*) exit 2 ;;
	esac
done
if [ -z "$want" ]; then
	want=$(docker ps -q --filter "label=com.docker.compose.project=$project" --filter label=io.minik8s.role=node | wc -l)
fi

start=$(date +%s)
# A Node object keeps saying Ready for a while after its kubelet stopped:
# count a node only once its kubelet renewed its Lease after its container
# (re)started. started prints "NODE STARTED-AT" per node container; cut to
# seconds, both times compare as strings.
started() {
	local c
	for c in $(docker ps -q --filter "label=com.docker.compose.project=$project" --filter label=io.minik8s.role=node); do
		docker inspect -f '{{.Config.Hostname}} {{.State.StartedAt}}' "$c"
	done
}
deadline=$((start + timeout))
k() { "$kubectl" --kubeconfig "$kubeconfig" "$@"; }

api=0 ready=0 out=""
while [ "$(date +%s)" -lt "$deadline" ]; do
	if [ "$api" = 0 ] && [ -s "$kubeconfig" ] && k get ns default >/dev/null 2>&1; then
		api=1
		echo "wait-ready: API serving after $(($(date +%s) - start)) s" >&2
	fi
	if [ "$api" = 1 ]; then
		# STATUS is Ready, or Ready,SchedulingDisabled for a cordoned node.
		out=$(k get nodes 2>/dev/null || true)
		ready=$(awk 'NR > 1 && $2 ~ /^Ready(,|$)/' <<<"$out" | wc -l)
		fresh=$(k get leases -n kube-node-lease -o 'custom-columns=NAME:.metadata.name,RENEW:.spec.renewTime' --no-headers 2>/dev/null |
			awk 'NR == FNR { since[$1] = substr($2, 1, 19); next } ($1 in since) && $2 >= since[$1]' <(started) - | wc -l || true)
		[ "$fresh" -lt "$ready" ] && ready=$fresh
		# The node controller lifts the not-ready NoSchedule taint a moment
		# after Ready; until then pods would all go to the other nodes.
		tainted=$(k get nodes -o json 2>/dev/null | grep -o '"key": *"node.kubernetes.io/[a-z-]*"' |
			grep -vc unschedulable || true)
		if [ "$ready" -ge "$want" ] && [ "${tainted:-0}" = 0 ]; then
			echo "wait-ready: $ready/$want nodes Ready after $(($(date +%s) - start)) s" >&2
			exit 0
		fi
	fi
	sleep 0.5
done

if [ "$api" = 0 ]; then
	echo "wait-ready: the API did not answer with $kubeconfig within ${timeout} s" >&2
else
	echo "wait-ready: $ready/$want nodes Ready after ${timeout} s:" >&2
	echo "$out" >&2
fi
for c in $(docker ps -aq --filter "label=com.docker.compose.project=$project" --filter label=io.minik8s.role=node); do
	echo "--- $(docker inspect -f '{{.Config.Hostname}} ({{.State.Status}})' "$c"): last log lines" >&2
	docker logs --tail 8 "$c" 2>&1 | sed 's/^/    /' >&2
done
exit 1
