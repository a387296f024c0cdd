#!/usr/bin/env bash
# Membership of the highly-available compose cluster (docker-compose.ha.yaml,
# project minik8s-ha): its control-plane members apiserver-N, each an
# apiserver with an embedded etcd member, with scheduler-N and
# controller-manager-N beside it (N = 1..3; 4 is a spare apiserver).
#
#   scripts/ha-member.sh status          # etcd members (leader, started), Lease holders, alias answers
#   scripts/ha-member.sh remove N        # etcd member remove, then stop N's containers (volumes kept)
#   scripts/ha-member.sh readd N         # remove N if still a member, wipe its etcd and pki volumes,
#                                        # start it again: it adds itself (--embedded-etcd-join)
#   scripts/ha-member.sh add 4           # start the spare member apiserver-4: it joins the cluster
#
# A member is removed from etcd before it goes for good: a cluster of three
# that merely lost one still counts it for its quorum (two of three), and
# etcd refuses to add a member while that would leave too few started ones
# for a quorum. Restarting a member that kept its volumes needs none of
# this: docker start / compose up brings it back with its data.
set -euo pipefail
cd "$(dirname "$0")/.."

project=minik8s-ha
export COMPOSE_PROJECT_NAME=$project
compose=${COMPOSE:-$(docker compose version >/dev/null 2>&1 && echo "docker compose" || echo docker-compose)}
dc() { $compose -f docker-compose.ha.yaml "$@"; }
log() { echo "ha-member: $*" >&2; }

container() { docker ps -q --filter "label=com.docker.compose.project=$project" --filter "label=com.docker.compose.service=$1" | head -n1; }

# members: the numbers of running apiserver containers.
running() {
	local n
	for n in 1 2 3 4; do
		[ -n "$(container "apiserver-$n")" ] && echo "$n"
	done
	return 0
}

# etcdctl N ARGS: "apiserver etcd member ARGS" inside apiserver-N, against its own etcd.
member_cmd() {
	local n=$1
	shift
	docker exec "$(container "apiserver-$n")" apiserver etcd member "$@" --cert-dir /var/lib/minik8s/pki --endpoints https://127.0.0.1:2379
}

# other N: a running member other than N that answers.
other() {
	local m
	for m in $(running); do
		[ "$m" = "$1" ] && continue
		if member_cmd "$m" list --timeout 10s >/dev/null 2>&1; then
			echo "$m"
			return 0
		fi
	done
	log "no other running member answers"
	return 1
}

is_member() { member_cmd "$2" list --timeout 10s | awk 'NR > 1 {print $2}' | grep -qx "apiserver-$1"; }

remove() {
	local n=$1 m
	m=$(other "$n")
	if is_member "$n" "$m"; then
		member_cmd "$m" remove "apiserver-$n"
	else
		log "apiserver-$n is not an etcd member"
	fi
	dc rm -s -f "apiserver-$n" "scheduler-$n" "controller-manager-$n" 2>/dev/null || dc --profile spare rm -s -f "apiserver-$n"
}

wait_healthy() {
	local c=$1 i
	for i in $(seq 1 120); do
		case $(docker inspect -f '{{.State.Health.Status}}' "$c" 2>/dev/null) in
		healthy) return 0 ;;
		esac
		sleep 1
	done
	log "$c is not healthy after 120 s"
	docker logs --tail 20 "$c" >&2
	return 1
}

case ${2:-1} in
[1-4]) ;;
*) log "member number $2: want 1, 2, 3 (or 4, the spare)"; exit 2 ;;
esac

case ${1:-} in
status)
	m=$(other 0)
	member_cmd "$m" list
	echo
	docker exec "$(container "apiserver-$m")" kubectl-lite --kubeconfig /var/lib/minik8s/pki/admin.kubeconfig \
		get leases -n kube-system kube-scheduler kube-controller-manager \
		-o custom-columns=LEASE:.metadata.name,HOLDER:.spec.holderIdentity,RENEWED:.spec.renewTime
	;;
remove)
	[ -n "${2:-}" ] || { sed -n '2,18s/^# \{0,1\}//p' "$0" >&2; exit 2; }
	remove "$2"
	log "apiserver-$2 removed (its volumes ${project}_etcd-$2 and ${project}_pki-$2 kept: readd wipes them)"
	;;
readd)
	n=${2:?usage: readd N}
	m=$(other "$n")
	if is_member "$n" "$m"; then
		member_cmd "$m" remove "apiserver-$n"
	fi
	dc rm -s -f "apiserver-$n" "scheduler-$n" "controller-manager-$n"
	docker volume rm -f "${project}_etcd-$n" "${project}_pki-$n" >/dev/null
	join=""
	for o in $(running); do join="${join:+$join,}https://apiserver-$o:2379"; done
	log "apiserver-$n wiped; joining through $join"
	MINIK8S_HA_JOIN=$join dc up -d --no-deps "apiserver-$n"
	wait_healthy "$(container "apiserver-$n")"
	dc up -d --no-deps "scheduler-$n" "controller-manager-$n"
	member_cmd "$n" list
	;;
add)
	n=${2:?usage: add 4}
	[ "$n" = 4 ] || { log "only the spare member 4 is defined in docker-compose.ha.yaml"; exit 2; }
	dc --profile spare up -d --no-deps apiserver-4
	wait_healthy "$(container apiserver-4)"
	member_cmd 4 list
	;;
*)
	sed -n '2,18s/^# \{0,1\}//p' "$0" >&2
	exit 2
	;;
esac
