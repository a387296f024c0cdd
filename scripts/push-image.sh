#!/usr/bin/env bash
# Pushes images from a node's containerd (namespace minik8s) into the
# compose network's registry (the registry service, `make registry`), so
# that pods pulling them with imagePullPolicy Always find them: an image
# named registry.k8s.io/PATH:TAG or localhost:5001/PATH:TAG goes to
# registry:5000/PATH:TAG, which the nodes' containerd hosts directory
# (deploy/node/certs.d) makes a mirror of registry.k8s.io and the host's
# localhost:5001. The images must be loaded into the node first
# (scripts/load-image.sh); the registry keeps their digests.
#
#   scripts/push-image.sh IMAGE[,IMAGE...]
#
# COMPOSE_PROJECT_NAME picks the project (default minik8s).
set -euo pipefail

ns=${CONTAINERD_NAMESPACE:-minik8s}
project=${COMPOSE_PROJECT_NAME:-minik8s}
log() { echo "push-image: $*" >&2; }

if [ $# -ne 1 ]; then
	sed -n '2,13s/^# \{0,1\}//p' "$0" >&2
	exit 2
fi
IFS=, read -r -a images <<<"$1"

node=$(docker ps -q --filter "label=com.docker.compose.project=$project" --filter label=io.minik8s.role=node | head -n1)
if [ -z "$node" ]; then
	log "no running node container in compose project $project"
	exit 1
fi
registry=$(docker ps -q --filter "label=com.docker.compose.project=$project" --filter label=com.docker.compose.service=registry | head -n1)
if [ -z "$registry" ]; then
	log "the registry service is not running (make registry)"
	exit 1
fi

for image in "${images[@]}"; do
	case $image in
	registry.k8s.io/*) path=${image#registry.k8s.io/} ;;
	localhost:5001/*) path=${image#localhost:5001/} ;;
	*)
		log "$image: only registry.k8s.io/... and localhost:5001/... images are served by the registry"
		exit 2
		;;
	esac
	if ! out=$(docker exec "$node" ctr -n "$ns" images push --plain-http "registry:5000/$path" "$image" 2>&1); then
		log "pushing $image: $(echo "$out" | tail -n 1)"
		exit 1
	fi
	log "pushed $image as registry:5000/$path"
done
