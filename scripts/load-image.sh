#!/usr/bin/env bash
# Copies local Docker images into the containerd (namespace minik8s) of the
# compose cluster's node containers, for linux/amd64 only, skipping every
# node that already has the image with the same digest (so nothing is sent
# twice). Pods then start them with imagePullPolicy IfNotPresent or Never.
#
#   scripts/load-image.sh IMAGE[,IMAGE...] [NODE...]
#
# NODE is a compose service (node-1), a node name (a scaled node's container
# ID) or a container name; default: every running node container of the
# project (label io.minik8s.role=node). COMPOSE_PROJECT_NAME picks the
# project (default minik8s).
set -euo pipefail

ns=${CONTAINERD_NAMESPACE:-minik8s}
project=${COMPOSE_PROJECT_NAME:-minik8s}
platform=${PLATFORM:-linux/amd64}
log() { echo "load-image: $*" >&2; }

if [ $# -lt 1 ]; then
	sed -n '2,13s/^# \{0,1\}//p' "$0" >&2
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

# A node that just started may not have its containerd up yet.
for c in "${targets[@]}"; do
	for _ in $(seq 1 60); do
		docker exec "$c" ctr version >/dev/null 2>&1 && break
		sleep 0.5
	done
done

for image in "${images[@]}"; do
	# Docker names images like containerd does once normalized: a bare
	# "busybox:latest" is docker.io/library/busybox:latest there.
	ref=$image
	case $ref in
	*:*) ;;
	*) ref=$ref:latest ;;
	esac
	first=${ref%%/*}
	if [[ $ref != */* ]]; then
		ref=docker.io/library/$ref
	elif [[ $first != *.* && $first != *:* && $first != localhost ]]; then
		ref=docker.io/$ref
	fi
	id=$(docker image inspect -f '{{.Id}}' "$image" 2>/dev/null) || {
		log "no local Docker image $image"
		exit 1
	}
	tar=""
	for c in "${targets[@]}"; do
		name=$(docker inspect -f '{{.Config.Hostname}}' "$c")
		# The config digest (the image ID) names the same image on both sides.
		have=$(docker exec "$c" ctr -n "$ns" images ls "name==$ref" 2>/dev/null | awk 'NR > 1 {print $3}' || true)
		if [ -n "$have" ] && docker exec "$c" ctr -n "$ns" content get "$have" 2>/dev/null | grep -q "${id#sha256:}"; then
			log "$name already has $image"
			continue
		fi
		if [ -z "$tar" ]; then
			tar=$(mktemp /tmp/minik8s-image.XXXXXX)
			trap 'rm -f "$tar"' EXIT
			docker save "$image" -o "$tar"
		fi
		docker exec -i "$c" ctr -n "$ns" images import --platform "$platform" - <"$tar" >/dev/null
		log "loaded $image into $name"
	done
	[ -n "$tar" ] && rm -f "$tar"
	tar=""
done
