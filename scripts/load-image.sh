#!/usr/bin/env bash
# Copies local Docker images into the containerd of the compose cluster's
# node containers, for linux/amd64 only, in both namespaces a kubelet may
# use: minik8s (the native driver's) and k8s.io (containerd's CRI plugin's,
# the CRI driver's and crictl's); each namespace that already has the image
# with the same digest is skipped (so nothing is sent twice). Pods then
# start them with imagePullPolicy IfNotPresent or Never, in either runtime
# mode (MINIK8S_CONTAINER_RUNTIME). CONTAINERD_NAMESPACES (space-separated)
# narrows the namespaces.
#
#   scripts/load-image.sh IMAGE[,IMAGE...] [NODE...]
#
# NODE is a compose service (node-1), a node name (a scaled node's container
# ID) or a container name; default: every running node container of the
# project (label io.minik8s.role=node). COMPOSE_PROJECT_NAME picks the
# project (default minik8s).
set -euo pipefail

read -r -a namespaces <<<"${CONTAINERD_NAMESPACES:-${CONTAINERD_NAMESPACE:-minik8s k8s.io}}"
project=${COMPOSE_PROJECT_NAME:-minik8s}
platform=${PLATFORM:-linux/amd64}
log() { echo "load-image: $*" >&2; }

if [ $# -lt 1 ]; then
	sed -n '2,17s/^# \{0,1\}//p' "$0" >&2
	exit 2
fi
IFS=, read -r -a images <<<"$1"
shift

# containers NODE...: the node containers' IDs.
containers() {
	if [ $# -eq 0 ]; then
		docker ps -q --filter "label=com.docker.compose.project=$project" --filter label=io.minik8s.role=node
		return
	fi
	local n id
	for n in "$@"; do
		id=$(docker ps -q --filter "label=com.docker.compose.project=$project" \
			--filter "label=com.docker.compose.service=$n" | head -n1)
		[ -n "$id" ] || id=$(docker ps -q --filter "label=com.docker.compose.project=$project" --filter "id=$n" | head -n1)
		[ -n "$id" ] || id=$(docker inspect -f '{{.Id}}' "$n" 2>/dev/null || true)
		if [ -z "$id" ]; then
			log "no running node container $n"
			return 1
		fi
		echo "$id"
	done
}

mapfile -t targets < <(containers "$@")
if [ ${#targets[@]} -eq 0 ]; then
	log "no running node containers in compose project $project"
	exit 1
fi

# normalize IMAGE: the name containerd knows a Docker image by
# (busybox -> docker.io/library/busybox:latest).
normalize() {
	local ref=$1 first
	case ${ref##*/} in
	*:*) ;;
	*) ref=$ref:latest ;;
	esac
	first=${ref%%/*}
	if [[ $ref != */* ]]; then
		ref=docker.io/library/$ref
	elif [[ $first != *.* && $first != *:* && $first != localhost ]]; then
		ref=docker.io/$ref
	fi
	echo "$ref"
}

work=$(mktemp -d /tmp/minik8s-load.XXXXXX)
trap 'rm -rf "$work"' EXIT
ids=()
for image in "${images[@]}"; do
	id=$(docker image inspect -f '{{.Id}}' "$image" 2>/dev/null) || {
		log "no local Docker image $image"
		exit 1
	}
	ids+=("$id")
done

# missing C: prints "INDEX NAMESPACE" for each image node container C
# lacks in each namespace, once its containerd answers. The config digest
# (the Docker image ID) identifies the same image on both sides.
missing() {
	local c=$1 i ref have ns
	for _ in $(seq 1 60); do
		docker exec "$c" ctr version >/dev/null 2>&1 && break
		sleep 0.5
	done
	for i in "${!images[@]}"; do
		ref=$(normalize "${images[$i]}")
		for ns in "${namespaces[@]}"; do
			have=$(docker exec "$c" ctr -n "$ns" images ls "name==$ref" 2>/dev/null | awk 'NR > 1 {print $3}' || true)
			# No "| grep -q" here: with pipefail, grep's early exit fails the
			# pipeline (SIGPIPE) and the check would flap.
			if [ -n "$have" ] && [[ $(docker exec "$c" ctr -n "$ns" content get "$have" 2>/dev/null) == *"${ids[$i]#sha256:}"* ]]; then
				continue
			fi
			echo "$i $ns"
		done
	done
}

# Phase 1, every node at once: what does each lack?
for c in "${targets[@]}"; do
	missing "$c" >"$work/$c.missing" &
done
wait
# Phase 2: save each image some node lacks, once.
for i in "${!images[@]}"; do
	if grep -q "^$i " "$work"/*.missing; then
		docker save "${images[$i]}" -o "$work/$i.tar"
	fi
done
# Phase 3, every node at once: import what it lacks.
fail=0
for c in "${targets[@]}"; do
	(
		name=$(docker inspect -f '{{.Config.Hostname}}' "$c")
		for i in "${!images[@]}"; do
			for ns in "${namespaces[@]}"; do
				if grep -qx "$i $ns" "$work/$c.missing"; then
					docker exec -i "$c" ctr -n "$ns" images import --platform "$platform" - <"$work/$i.tar" >/dev/null
					log "loaded ${images[$i]} into $name ($ns)"
				else
					log "$name already has ${images[$i]} ($ns)"
				fi
			done
		done
	) &
done
for job in $(jobs -p); do
	wait "$job" || fail=1
done
exit $fail
