#!/usr/bin/env bash
# Starts containerd and dockerd on this host unless they already answer on
# their sockets. Uses systemd when it runs; otherwise starts them in the
# background with logs under /var/log. Idempotent. Run as root.
#
#   scripts/start-daemons.sh [containerd] [docker]   (default both)
set -euo pipefail

wait_for() { # wait_for NAME CMD...: up to 30 s for CMD to succeed
	local name=$1
	shift
	for _ in $(seq 1 60); do
		if "$@" >/dev/null 2>&1; then return 0; fi
		sleep 0.5
	done
	echo "start-daemons: $name did not come up; see /var/log/$name.log" >&2
	return 1
}

have_systemd() { [ -d /run/systemd/system ]; }

want=("$@")
[ ${#want[@]} -gt 0 ] || want=(containerd docker)

for d in "${want[@]}"; do
	case "$d" in
	containerd)
		if ! ctr --address /run/containerd/containerd.sock version >/dev/null 2>&1; then
			if have_systemd; then
				systemctl start containerd
			else
				nohup containerd >/var/log/containerd.log 2>&1 &
			fi
			wait_for containerd ctr --address /run/containerd/containerd.sock version
		fi
		;;
	docker)
		if ! docker info >/dev/null 2>&1; then
			if have_systemd; then
				systemctl start docker
			else
				nohup dockerd >/var/log/dockerd.log 2>&1 &
			fi
			wait_for dockerd docker info
		fi
		;;
	*)
		echo "start-daemons: unknown daemon $d: want containerd or docker" >&2
		exit 2
		;;
	esac
done
