#!/usr/bin/env bash
# Installs the minik8s control plane on a Linux VM: the apiserver (embedded
# etcd in /var/lib/minik8s/etcd, certificates in /var/lib/minik8s/pki), the
# scheduler and the controller-manager, each its own systemd unit
# (deploy/systemd/*.service) or, with --no-systemd, a background process.
# Prints the command that joins a node (scripts/install-node.sh ...).
#
#   scripts/install-control-plane.sh [--advertise-address IP] [--tls-san N,...]
#       [--bin-dir DIR] [--no-systemd] [--no-pod-routes] [--print-env] [--stop]
#       [-- APISERVER-FLAGS...]
#
# The admin kubeconfig is written to /etc/minik8s/admin.kubeconfig. The
# apiserver keeps routes to the nodes' pod CIDRs (--pod-routes) so that it
# reaches webhooks and aggregated APIs at pod IPs; --no-pod-routes leaves
# them out when this machine also joins as a node (its kubelet keeps them).
# --print-env prints the units' environment files and installs nothing.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
log() { echo "install-control-plane: $*" >&2; }
die() {
	log "$*"
	exit 1
}

adv="" sans="" bin_dir="$here/bin" systemd=1 extra=() pod_routes=--pod-routes print_env=0
state=/var/lib/minik8s pki=/var/lib/minik8s/pki admin=/etc/minik8s/admin.kubeconfig
components=(apiserver scheduler controller-manager)
while [ $# -gt 0 ]; do
	case $1 in
	--advertise-address) adv=$2; shift ;;
	--tls-san) sans=$2; shift ;;
	--bin-dir) bin_dir=$2; shift ;;
	--no-systemd) systemd=0 ;;
	--no-pod-routes) pod_routes="" ;;
	--print-env) print_env=1 ;;
	--stop)
		for c in "${components[@]}"; do
			f=/run/minik8s-$c.pid
			[ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null && log "stopped $c"
			rm -f "$f"
		done
		exit 0
		;;
	--) shift; extra=("$@"); break ;;
	-h | --help) sed -n '2,18s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) die "unknown argument $1 (see --help)" ;;
	esac
	shift
done
[ "$print_env" = 1 ] || [ "$(id -u)" = 0 ] || die "run as root"
if [ -z "$adv" ]; then
	adv=$(ip -4 route get 1.1.1.1 2>/dev/null | awk '{for (i=1;i<NF;i++) if ($i=="src") {print $(i+1); exit}}')
fi
[ -n "$adv" ] || die "cannot tell this machine's address: pass --advertise-address"

declare -A args
# shellcheck disable=SC2206
apiserver_args=(--cert-dir "$pki" --data-dir "$state/etcd" --advertise-address "$adv"
	--tls-san "${sans:+$sans,}$adv,localhost,127.0.0.1" --write-kubeconfig "$admin" $pod_routes
	# Kubelets' serving certificates (install-node.sh: --rotate-server-
	# certificates) are approved for their nodes' addresses and verified.
	--kubelet-certificate-authority "$pki/ca.crt" --approve-kubelet-serving-certificates
	# The embedded etcd on kubeadm's ports, TLS with client certificates of
	# $pki/etcd/ca.crt (etcdctl: see the README's "The embedded etcd").
	--embedded-etcd-client-url https://127.0.0.1:2379 --embedded-etcd-peer-url https://127.0.0.1:2380 "${extra[@]}")
args[apiserver]="${apiserver_args[*]}"
# Their HTTPS /metrics (10259, 10257) delegate authentication and
# authorization to the apiserver with their own kubeconfigs, as kubeadm's.
delegate() { echo "--authentication-kubeconfig $pki/$1.kubeconfig --authorization-kubeconfig $pki/$1.kubeconfig"; }
args[scheduler]="--kubeconfig $pki/scheduler.kubeconfig $(delegate scheduler) --leader-elect=true"
args[controller-manager]="--kubeconfig $pki/controller-manager.kubeconfig $(delegate controller-manager) --leader-elect=true --allocate-node-cidrs=true --cluster-cidr 10.244.0.0/16"
env_var() { echo "$1" | tr 'a-z-' 'A-Z_'; }
if [ "$print_env" = 1 ]; then
	for c in "${components[@]}"; do
		printf '# /etc/minik8s/%s.env\n%s_ARGS="%s"\n' "$c" "$(env_var "$c")" "${args[$c]}"
	done
	exit 0
fi

for c in "${components[@]}" kubectl-lite; do
	[ -x "$bin_dir/$c" ] || die "no $bin_dir/$c (run make build, or pass --bin-dir)"
	[ "$bin_dir" = /usr/local/bin ] || install -m 0755 "$bin_dir/$c" "/usr/local/bin/$c"
done
mkdir -p /etc/minik8s "$state"

start() { # start COMPONENT
	local c=$1 var
	var=$(env_var "$c")_ARGS
	if [ "$systemd" = 1 ]; then
		install -m 0644 "$here/deploy/systemd/$c.service" "/etc/systemd/system/$c.service"
		printf '%s="%s"\n' "$var" "${args[$c]}" >"/etc/minik8s/$c.env"
		systemctl daemon-reload
		systemctl enable "$c.service" >/dev/null
		systemctl restart "$c.service"
		log "$c.service started (journalctl -u $c -f)"
	else
		local pidfile=/run/minik8s-$c.pid
		if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
			log "$c already runs (pid $(cat "$pidfile"))"
			return
		fi
		# shellcheck disable=SC2086
		nohup "/usr/local/bin/$c" ${args[$c]} >>"/var/log/minik8s-$c.log" 2>&1 &
		echo $! >"$pidfile"
		log "$c started (pid $!, log /var/log/minik8s-$c.log)"
	fi
}

if [ "$systemd" = 1 ] && ! [ -d /run/systemd/system ]; then
	die "systemd is not running here: use --no-systemd"
fi
start apiserver
for _ in $(seq 1 120); do
	[ -s "$admin" ] && kubectl-lite --kubeconfig "$admin" get ns default >/dev/null 2>&1 && break
	sleep 0.5
done
kubectl-lite --kubeconfig "$admin" get ns default >/dev/null 2>&1 || die "the apiserver did not come up"
start scheduler
start controller-manager
log "control plane up; admin kubeconfig: $admin"
join=$(kubectl-lite --kubeconfig "$admin" token create --description "install-control-plane" --print-join-command)
read -r -a j <<<"$join"
echo "Join a node: copy $pki/kube-proxy.kubeconfig (kube-proxy's credentials,"
echo "system:kube-proxy) to that machine, then run there, from a minik8s checkout"
echo "with bin/kubelet and bin/kube-proxy:"
echo "  scripts/install-node.sh ${j[*]:1} --proxy-kubeconfig /path/to/kube-proxy.kubeconfig"
