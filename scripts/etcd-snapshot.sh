#!/usr/bin/env bash
# Backs up and restores the compose cluster's etcd and PKI (make snapshot,
# make restore SNAPSHOT=FILE).
#
#   scripts/etcd-snapshot.sh save [DIR]      # DIR defaults to snapshots/
#   scripts/etcd-snapshot.sh restore FILE
#
# save runs `apiserver snapshot save` in the running apiserver container
# against its embedded etcd (https://127.0.0.1:2379, the apiserver-etcd-client
# certificate of its --cert-dir), into the etcd-snapshots volume, and copies
# the file out to DIR/etcd-snapshot-manual-UNIXTIME.db, with the PKI volume
# beside it as .pki.tar: the snapshot alone cannot bring back the cluster CA
# and the service-account key that its certificates and tokens were signed
# with. Keep DIR outside .minik8s (make clean removes .minik8s).
#
# restore runs `apiserver snapshot restore` in a one-off apiserver container
# (the apiserver itself not running) into the etcd volume, which must be
# empty: a cluster that still has data is refused and left as it is, so
# `make clean` first. The .pki.tar beside FILE, if any, goes into the PKI
# volume when that is empty. Then `make up` starts the cluster on it: every
# object is back with its resourceVersion, nodes re-join, kubelets restart
# their pods. The store revision is bumped and compacted, so any client
# still watching from before gets 410 Gone and relists.
set -euo pipefail
cd "$(dirname "$0")/.."

compose=${COMPOSE:-$(docker compose version >/dev/null 2>&1 && echo "docker compose" || echo docker-compose)}
read -r -a compose <<<"$compose"
log() { echo "etcd-snapshot: $*" >&2; }

save() {
	local dir=${1:-snapshots} name cid
	name=etcd-snapshot-manual-$(date +%s)
	cid=$("${compose[@]}" ps -q apiserver)
	if [ -z "$cid" ]; then
		log "the apiserver container is not running (make up)"
		exit 1
	fi
	mkdir -p "$dir"
	"${compose[@]}" exec -T apiserver apiserver snapshot save \
		--cert-dir=/var/lib/minik8s/pki --embedded-etcd-client-url=https://127.0.0.1:2379 \
		"/var/lib/minik8s/snapshots/$name.db"
	docker cp "$cid:/var/lib/minik8s/snapshots/$name.db" "$dir/$name.db.part"
	mv "$dir/$name.db.part" "$dir/$name.db"
	docker cp "$cid:/var/lib/minik8s/pki" - >"$dir/$name.pki.tar.part"
	mv "$dir/$name.pki.tar.part" "$dir/$name.pki.tar"
	log "saved $dir/$name.db and $dir/$name.pki.tar"
	log "restore with: make clean && make restore SNAPSHOT=$dir/$name.db"
}

restore() {
	local file=${1:?usage: etcd-snapshot.sh restore FILE} abs pki
	if [ ! -f "$file" ]; then
		log "$file: no such file"
		exit 2
	fi
	abs=$(cd "$(dirname "$file")" && pwd)/$(basename "$file")
	# The file is checked first (sha256, database): a truncated or corrupt
	# one is refused before anything is written. The data dir must be
	# empty: a running apiserver's is not, so a live cluster is refused
	# here and nothing changes. A refusal is one line: the apiserver's
	# reason (compose's own chatter dropped), with the host's file name.
	errf=$(mktemp)
	trap 'rm -f "$errf"' EXIT
	if ! "${compose[@]}" run --rm --no-deps -T -v "$abs:/restore/snapshot.db:ro" apiserver \
		snapshot restore /restore/snapshot.db --data-dir=/var/lib/minik8s/etcd \
		--embedded-etcd-peer-url=https://127.0.0.1:2380 2>"$errf"; then
		msg=$(grep '^apiserver: ' "$errf" | tail -n 1 || true)
		[ -n "$msg" ] || msg=$(grep -v '^[[:space:]]*$' "$errf" | tail -n 1 || true)
		msg=${msg#apiserver: }
		msg=${msg//\/restore\/snapshot.db/$file}
		case $msg in
		*"is not empty"*) msg="$msg (this cluster has data: make clean first, with the snapshot kept outside .minik8s)" ;;
		esac
		log "restore of $file refused, nothing changed: ${msg:-the one-off apiserver container failed}"
		exit 1
	fi
	cat "$errf" >&2
	pki=${abs%.db}.pki.tar
	if [ -f "$pki" ]; then
		# busybox in the apiserver image unpacks it, only into an empty volume.
		"${compose[@]}" run --rm --no-deps -T --entrypoint /bin/busybox apiserver sh -c \
			'cd /var/lib/minik8s && if [ -n "$(busybox ls -A pki)" ]; then echo "etcd-snapshot: the pki volume is not empty: kept as it is" >&2; busybox cat >/dev/null; else busybox tar -x -f -; fi' <"$pki"
		log "restored $file and $pki"
	else
		log "restored $file; no $pki: the apiserver makes a new CA and service-account key, so tokens and certificates issued before are not accepted"
	fi
}

case ${1:-} in
save) shift; save "$@" ;;
restore) shift; restore "$@" ;;
*)
	echo "usage: $0 save [DIR] | restore FILE" >&2
	exit 2
	;;
esac
