#!/usr/bin/env bash
# bench-storage.sh: on the running compose cluster (make up), how long N
# pods take to be Running with a WaitForFirstConsumer claim each (class
# local-path, provisioned on the node the scheduler picks) against the same
# N pods without volumes. Prints one line per run and the ratio; exits
# non-zero when a run does not finish within its bound.
#
#   scripts/bench-storage.sh [N]      (default 200; make bench-storage N=...)
#
# The pods are minik8s/busybox sleeping, spread over the nodes by a
# topology spread constraint; each run has a namespace of its own, deleted
# (with its claims and their volumes: reclaim Delete) before the next.
set -euo pipefail
cd "$(dirname "$0")/.."

n=${1:-200}
case $n in '' | *[!0-9]*) echo "bench-storage: N must be a number of pods, got '$n'" >&2; exit 2 ;; esac
kubectl=(bin/kubectl-lite --kubeconfig .minik8s/kubeconfig)
bound=${BENCH_STORAGE_TIMEOUT:-900} # seconds per run

if ! "${kubectl[@]}" get nodes >/dev/null 2>&1; then
	echo "bench-storage: the compose cluster does not answer at .minik8s/kubeconfig: run make up first" >&2
	exit 2
fi

# manifest prints N pods in namespace $1, each with a claim when $2=claims.
manifest() {
	local ns=$1 withClaims=$2 i
	printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n' "$ns"
	for ((i = 0; i < n; i++)); do
		if [[ $withClaims == claims ]]; then
			cat <<EOF
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data-$i
  namespace: $ns
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: local-path
  resources:
    requests:
      storage: 16Mi
EOF
		fi
		cat <<EOF
---
apiVersion: v1
kind: Pod
metadata:
  name: p-$i
  namespace: $ns
  labels: {app: bench-storage}
spec:
  terminationGracePeriodSeconds: 0
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: kubernetes.io/hostname
    whenUnsatisfiable: ScheduleAnyway
    labelSelector:
      matchLabels: {app: bench-storage}
  containers:
  - name: c
    image: minik8s/busybox:latest
    imagePullPolicy: IfNotPresent
    command: [sleep, "3600"]
    resources:
      requests: {cpu: 1m, memory: 4Mi}
EOF
		if [[ $withClaims == claims ]]; then
			cat <<EOF
    volumeMounts:
    - {name: data, mountPath: /data}
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: data-$i}
EOF
		fi
	done
}

# run applies the pods (and claims) and prints the seconds until all N
# are Running.
run() {
	local ns=$1 withClaims=$2 start now running
	manifest "$ns" "$withClaims" >"/tmp/bench-storage-$ns.yaml"
	start=$(date +%s.%N)
	"${kubectl[@]}" apply -f "/tmp/bench-storage-$ns.yaml" >/dev/null
	while :; do
		running=$("${kubectl[@]}" get pods -n "$ns" -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | grep -c '^Running$' || true)
		now=$(date +%s.%N)
		if ((running >= n)); then
			break
		fi
		if awk -v a="$now" -v b="$start" -v m="$bound" 'BEGIN { exit !(a - b > m) }'; then
			echo "bench-storage: $ns: $running of $n pods Running after ${bound}s" >&2
			return 1
		fi
		sleep 1
	done
	awk -v a="$now" -v b="$start" 'BEGIN { printf "%.1f\n", a - b }'
}

# cleanup deletes the namespace and waits until it, and the volumes of
# its claims, are gone.
cleanup() {
	local ns=$1 i
	"${kubectl[@]}" delete namespace "$ns" --ignore-not-found --wait=false >/dev/null
	for ((i = 0; i < bound; i++)); do
		if [[ -z $("${kubectl[@]}" get namespace "$ns" --ignore-not-found -o name) ]] &&
			! "${kubectl[@]}" get pv -o jsonpath='{range .items[*]}{.spec.claimRef.namespace}{"\n"}{end}' | grep -qx "$ns"; then
			return 0
		fi
		sleep 1
	done
	echo "bench-storage: namespace $ns or its volumes still there after ${bound}s" >&2
	return 1
}

nodes=$("${kubectl[@]}" get nodes -o name | wc -l)
plain=$(run bench-storage-plain plain)
cleanup bench-storage-plain
echo "bench-storage: $n pods without volumes on $nodes nodes: all Running in ${plain}s"
claims=$(run bench-storage-claims claims)
pvs=$("${kubectl[@]}" get pv -o jsonpath='{range .items[*]}{.spec.claimRef.namespace}{"\n"}{end}' | grep -cx bench-storage-claims || true)
cleanup bench-storage-claims
echo "bench-storage: $n pods with a WaitForFirstConsumer local-path claim each ($pvs volumes provisioned) on $nodes nodes: all Running in ${claims}s"
awk -v a="$claims" -v b="$plain" 'BEGIN { printf "bench-storage: with claims / without: %.2fx\n", a / b }'
