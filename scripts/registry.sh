#!/usr/bin/env bash
# Starts the compose cluster's image registry (the registry service of
# docker-compose.yaml, profile registry: CNCF Distribution built by
# scripts/oracle.sh) and waits until it answers; builds its image first
# when missing. Idempotent.
#
#   scripts/registry.sh
#
# Then: scripts/push-image.sh IMAGE pushes an image loaded into the nodes;
# `docker push localhost:5001/NAME:TAG` from the host.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "registry: $*" >&2; }
if docker compose version >/dev/null 2>&1; then
	compose=(docker compose)
else
	compose=(docker-compose)
fi

scripts/images.sh registry
"${compose[@]}" --profile registry up -d registry >&2
for _ in $(seq 1 60); do
	id=$("${compose[@]}" --profile registry ps -q registry 2>/dev/null || true)
	if [ -n "$id" ] && [ "$(docker inspect -f '{{.State.Health.Status}}' "$id" 2>/dev/null)" = healthy ]; then
		log "ready: registry:5000 in the compose network, 127.0.0.1:5001 on the host"
		exit 0
	fi
	sleep 1
done
log "the registry did not become healthy in 60 s:"
"${compose[@]}" --profile registry logs --tail 20 registry >&2 || true
exit 1
