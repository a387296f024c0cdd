#!/usr/bin/env bash
# Installs a minik8s worker node on a Debian/Ubuntu machine and joins it to
# a cluster: containerd, runc, the CNI plugins and iptables from the
# distribution, the kubelet and kube-proxy binaries in /usr/local/bin, then
# the kubelet and kube-proxy under systemd (deploy/systemd/kubelet.service,
# kube-proxy.service) or, with --no-systemd, in the background (for CI
# machines and containers without systemd). kube-proxy (the Services'
# rules, NetworkPolicies, routes to other nodes' pods) is a unit of its own:
# restart or upgrade it without touching the kubelet or the pods. crictl
# (bin/crictl, make crictl) goes to /usr/local/bin with /etc/crictl.yaml
# pointing at containerd's CRI socket.
#
# The kubelet drives containerd through containerd's Go client (namespace
# minik8s) unless --container-runtime-endpoint is given: then it speaks CRI
# to that endpoint (containerd's CRI plugin; CRI-O's socket works too).
# For containerd's own socket, a missing /etc/containerd/config.toml (or one
# this script installed) is replaced by deploy/node/containerd.toml (CRI
# plugin on, CNI plugins in /usr/lib/cni, cgroupfs, registry hosts in
# /etc/containerd/certs.d) and containerd restarted; another config is left
# alone, with a warning when it disables the CRI plugin. The sandbox image
# (bin/node-images/pause.tar, from scripts/images.sh node) is imported into
# namespace k8s.io when present.
#
#   scripts/install-node.sh --server https://CP:6443 --token ID.SECRET \
#       --discovery-token-ca-cert-hash sha256:HEX [options]
#
# Get the three values on the control plane with:
#   kubectl-lite token create --print-join-command
#
# Options:
#   --node-name NAME        node name (default: hostname)
#   --node-ip IP            InternalIP the apiserver reaches the kubelet at
#   --kubelet PATH          kubelet binary to install (default: bin/kubelet)
#   --kube-proxy PATH       kube-proxy binary to install (default: bin/kube-proxy)
#   --cluster-cidr CIDR     the pods' range across the cluster (kube-proxy's
#                           --cluster-cidr; default 10.244.0.0/16)
#   --root-dir DIR          kubelet state (default /var/lib/kubelet)
#   --containerd-address S  containerd socket (default /run/containerd/containerd.sock)
#   --container-runtime-endpoint unix:///PATH
#                           the kubelet speaks CRI to this runtime (e.g.
#                           unix:///run/containerd/containerd.sock); crictl
#                           uses it too
#   --crictl PATH           crictl binary to install (default: bin/crictl;
#                           built by scripts/crictl.sh when missing and Go is
#                           installed; skipped with a warning otherwise)
#   --cni-conf-dir DIR      (default /etc/cni/net.d)
#   --cluster-dns IP        pods' resolver, the kube-dns Service of the
#                           cluster-dns add-on (default 10.96.0.10; "" for none)
#   --proxy-kubeconfig FILE the control plane's kube-proxy.kubeconfig (in the
#                           apiserver's --cert-dir; install-control-plane.sh
#                           prints where): copied to /etc/minik8s (its server
#                           set to --server) as kube-proxy's --kubeconfig
#                           (system:kube-proxy: reads every Node, Service,
#                           Pod and NetworkPolicy); without it kube-proxy is
#                           not installed (no Services, NetworkPolicies or
#                           routes to other nodes' pods here)
#   --no-apt                do not install packages
#   --no-systemd            start the kubelet in the background; log in
#                           /var/log/minik8s-kubelet.log, pid in /run/minik8s-kubelet.pid
#                           (kube-proxy's: the same names with kube-proxy)
#   --wait SECONDS          wait for the kubelet's /healthz (default 60; 0: don't)
#   --stop                  stop a kubelet (and kube-proxy) started with
#                           --no-systemd, and exit
#   -- ARGS...              more kubelet flags
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
log() { echo "install-node: $*" >&2; }
die() {
	log "$*"
	exit 1
}

server="" token="" hash="" node_name="" node_ip="" kubelet_src="$here/bin/kubelet"
proxy_src="$here/bin/kube-proxy" cluster_cidr=10.244.0.0/16
root_dir=/var/lib/kubelet sock=/run/containerd/containerd.sock cni_conf=/etc/cni/net.d
cluster_dns=10.96.0.10 proxy_kubeconfig="" cri_endpoint="" crictl_src="$here/bin/crictl"
pause_image=registry.k8s.io/pause:3.10.2
apt=1 systemd=1 wait=60 stop=0 extra=()
pidfile=/run/minik8s-kubelet.pid logfile=/var/log/minik8s-kubelet.log
while [ $# -gt 0 ]; do
	case $1 in
	--server) server=$2; shift ;;
	--token) token=$2; shift ;;
	--discovery-token-ca-cert-hash) hash=$2; shift ;;
	--node-name) node_name=$2; shift ;;
	--node-ip) node_ip=$2; shift ;;
	--kubelet) kubelet_src=$2; shift ;;
	--kube-proxy) proxy_src=$2; shift ;;
	--cluster-cidr) cluster_cidr=$2; shift ;;
	--root-dir) root_dir=$2; shift ;;
	--containerd-address) sock=$2; shift ;;
	--container-runtime-endpoint) cri_endpoint=$2; shift ;;
	--crictl) crictl_src=$2; shift ;;
	--cni-conf-dir) cni_conf=$2; shift ;;
	--cluster-dns) cluster_dns=$2; shift ;;
	--proxy-kubeconfig) proxy_kubeconfig=$2; shift ;;
	--no-apt) apt=0 ;;
	--no-systemd) systemd=0 ;;
	--wait) wait=$2; shift ;;
	--pid-file) pidfile=$2; shift ;;
	--log-file) logfile=$2; shift ;;
	--stop) stop=1 ;;
	--) shift; extra=("$@"); break ;;
	-h | --help) sed -n '2,70s/^# \{0,1\}//p' "$0" | sed '/^set -euo/,$d'; exit 0 ;;
	*) die "unknown argument $1 (see --help)" ;;
	esac
	shift
done

# kube-proxy's pid and log files sit beside the kubelet's.
proxy_pidfile=${pidfile/kubelet/kube-proxy} proxy_logfile=${logfile/kubelet/kube-proxy}
[ "$proxy_pidfile" != "$pidfile" ] || proxy_pidfile=$pidfile.kube-proxy
[ "$proxy_logfile" != "$logfile" ] || proxy_logfile=$logfile.kube-proxy

# stop PID-FILE: ends a background daemon and waits (up to 30 s) for it.
stop_kubelet() {
	local pid
	[ -s "$1" ] || return 0
	pid=$(cat "$1")
	if kill "$pid" 2>/dev/null; then
		for _ in $(seq 1 60); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.5
		done
		kill -9 "$pid" 2>/dev/null || true
		log "stopped $(basename "$1" .pid) $pid"
	fi
	rm -f "$1"
}
if [ "$stop" = 1 ]; then
	stop_kubelet "$pidfile"
	stop_kubelet "$proxy_pidfile"
	exit 0
fi

healthy() { (exec 3<>/dev/tcp/127.0.0.1/10248 && printf 'GET /healthz HTTP/1.0\r\n\r\n' >&3 && grep -q '^ok' <&3) 2>/dev/null; }

[ "$(id -u)" = 0 ] || die "run as root"
if [ ! -s "$root_dir/kubeconfig" ]; then
	[ -n "$server" ] && [ -n "$token" ] && [ -n "$hash" ] ||
		die "--server, --token and --discovery-token-ca-cert-hash are needed to join (see --help)"
fi
[ -x "$kubelet_src" ] || die "no kubelet binary at $kubelet_src (run make build, or pass --kubelet)"
[ -z "$proxy_kubeconfig" ] || [ -s "$proxy_kubeconfig" ] || die "--proxy-kubeconfig: no file at $proxy_kubeconfig"
[ -z "$proxy_kubeconfig" ] || [ -x "$proxy_src" ] || die "no kube-proxy binary at $proxy_src (run make build, or pass --kube-proxy)"

if [ "$apt" = 1 ]; then
	pkgs=(containerd runc containernetworking-plugins iptables iproute2 ca-certificates)
	need=()
	for p in "${pkgs[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
	done
	if [ ${#need[@]} -gt 0 ]; then
		log "installing ${need[*]}"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
	fi
fi
if [ "$kubelet_src" != /usr/local/bin/kubelet ]; then
	install -m 0755 "$kubelet_src" /usr/local/bin/kubelet
fi
if [ -n "$proxy_kubeconfig" ] && [ "$proxy_src" != /usr/local/bin/kube-proxy ]; then
	install -m 0755 "$proxy_src" /usr/local/bin/kube-proxy
fi
mkdir -p /etc/minik8s "$root_dir" "$cni_conf" /var/log/pods

# crictl, with /etc/crictl.yaml on the CRI endpoint (containerd's socket by default).
if [ ! -x "$crictl_src" ] && [ "$crictl_src" = "$here/bin/crictl" ] &&
	{ command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ]; }; then
	"$here/scripts/crictl.sh" >/dev/null || log "building crictl failed"
fi
if [ -x "$crictl_src" ]; then
	if [ "$crictl_src" != /usr/local/bin/crictl ]; then
		install -m 0755 "$crictl_src" /usr/local/bin/crictl
	fi
	endpoint=${cri_endpoint:-unix://$sock}
	sed "s#unix:///run/containerd/containerd.sock#$endpoint#" "$here/deploy/node/crictl.yaml" >/etc/crictl.yaml.tmp
	mv -f /etc/crictl.yaml.tmp /etc/crictl.yaml
else
	log "no crictl at $crictl_src (make crictl, or pass --crictl): not installed"
fi

# CRI on containerd's own socket: its CRI plugin must be on and configured
# as a minik8s node's (deploy/node/containerd.toml).
restart_containerd=0
if [ -n "$cri_endpoint" ] && [ "${cri_endpoint#unix://}" = "$sock" ]; then
	cfg=/etc/containerd/config.toml
	if [ ! -e "$cfg" ] || grep -q '^# containerd of a minik8s node' "$cfg"; then
		mkdir -p /etc/containerd
		if ! cmp -s "$here/deploy/node/containerd.toml" "$cfg"; then
			install -m 0644 "$here/deploy/node/containerd.toml" "$cfg"
			restart_containerd=1
			log "installed $cfg (CRI plugin on)"
		fi
		if [ ! -d /etc/containerd/certs.d ]; then
			cp -r "$here/deploy/node/certs.d" /etc/containerd/certs.d
		fi
	elif grep -A10 '^disabled_plugins' "$cfg" | grep -qE '"(io\.containerd\.grpc\.v1\.)?cri"'; then
		log "warning: $cfg disables containerd's CRI plugin, which --container-runtime-endpoint needs"
	fi
fi
# Pods route through this machine.
sysctl -qw net.ipv4.ip_forward=1 || log "cannot enable net.ipv4.ip_forward"

# --rotate-server-certificates: a serving certificate from the cluster CA
# for the node's addresses, which the control plane approves and verifies
# (install-control-plane.sh).
args=(--kubeconfig "$root_dir/kubeconfig" --root-dir "$root_dir"
	--cni-conf-dir "$cni_conf" --cni-bin-dir /usr/lib/cni --rotate-server-certificates)
if [ -n "$cri_endpoint" ]; then
	args+=(--container-runtime-endpoint "$cri_endpoint" --pod-infra-container-image "$pause_image")
else
	args+=(--containerd-address "$sock")
fi
[ -n "$node_name" ] && args+=(--hostname-override "$node_name")
[ -n "$node_ip" ] && args+=(--node-ip "$node_ip")
[ -n "$cluster_dns" ] && args+=(--cluster-dns "$cluster_dns")
# kube-proxy runs as system:kube-proxy: the kubelet's own credentials may
# read only its Node (the Node authorizer), kube-proxy reads every one.
proxy_args=()
if [ -n "$proxy_kubeconfig" ]; then
	pk=/etc/minik8s/kube-proxy.kubeconfig
	if [ -n "$server" ]; then
		sed -E "s#^([[:space:]]*server:).*#\1 $server#" "$proxy_kubeconfig" >"$pk.tmp"
	else
		cp "$proxy_kubeconfig" "$pk.tmp"
	fi
	chmod 600 "$pk.tmp"
	mv -f "$pk.tmp" "$pk"
	proxy_args=(--kubeconfig "$pk" --cluster-cidr "$cluster_cidr")
	[ -n "$node_name" ] && proxy_args+=(--hostname-override "$node_name")
else
	log "no --proxy-kubeconfig: no kube-proxy here (no Services, NetworkPolicies or routes to other nodes' pods)"
fi
if [ ! -s "$root_dir/kubeconfig" ]; then
	args+=(--server "$server" --token "$token" --discovery-token-ca-cert-hash "$hash")
fi
args+=("${extra[@]}")

# import_pause: the CRI plugin's sandbox image, shipped beside the binaries
# (scripts/images.sh node saves it), into namespace k8s.io: no pull needed.
import_pause() {
	local tar="$here/bin/node-images/pause.tar"
	[ -n "$cri_endpoint" ] && [ "${cri_endpoint#unix://}" = "$sock" ] && [ -s "$tar" ] || return 0
	for _ in $(seq 1 60); do
		ctr --address "$sock" version >/dev/null 2>&1 && break
		sleep 0.5
	done
	ctr --address "$sock" -n k8s.io images import --platform linux/amd64 "$tar" >/dev/null ||
		log "importing $pause_image into containerd (namespace k8s.io) failed"
}

have_systemd() { [ -d /run/systemd/system ] && command -v systemctl >/dev/null; }
if [ "$systemd" = 1 ] && ! have_systemd; then
	die "systemd is not running here: use --no-systemd"
fi

if [ "$systemd" = 1 ]; then
	if ! systemctl cat containerd.service >/dev/null 2>&1; then
		install -m 0644 "$here/deploy/systemd/containerd.service" /etc/systemd/system/containerd.service
	fi
	install -m 0644 "$here/deploy/systemd/kubelet.service" /etc/systemd/system/kubelet.service
	umask 077
	printf 'KUBELET_ARGS="%s"\n' "${args[*]}" >/etc/minik8s/kubelet.env
	umask 022
	systemctl daemon-reload
	systemctl enable --now containerd.service >/dev/null
	if [ "$restart_containerd" = 1 ]; then
		systemctl restart containerd.service
	fi
	import_pause
	systemctl enable kubelet.service >/dev/null
	systemctl restart kubelet.service
	log "kubelet.service started (journalctl -u kubelet -f)"
	if [ ${#proxy_args[@]} -gt 0 ]; then
		install -m 0644 "$here/deploy/systemd/kube-proxy.service" /etc/systemd/system/kube-proxy.service
		umask 077
		printf 'KUBE_PROXY_ARGS="%s"\n' "${proxy_args[*]}" >/etc/minik8s/kube-proxy.env
		umask 022
		systemctl daemon-reload
		systemctl enable kube-proxy.service >/dev/null
		systemctl restart kube-proxy.service
		log "kube-proxy.service started (journalctl -u kube-proxy -f)"
	fi
else
	if ! ctr --address "$sock" version >/dev/null 2>&1; then
		log "starting containerd in the background (/var/log/containerd.log)"
		nohup containerd >>/var/log/containerd.log 2>&1 &
		for _ in $(seq 1 60); do
			ctr --address "$sock" version >/dev/null 2>&1 && break
			sleep 0.5
		done
		ctr --address "$sock" version >/dev/null 2>&1 || die "containerd did not start; see /var/log/containerd.log"
	elif [ "$restart_containerd" = 1 ]; then
		log "warning: containerd was already running: restart it to load /etc/containerd/config.toml"
	fi
	import_pause
	if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
		die "a kubelet already runs (pid $(cat "$pidfile")); stop it with --stop"
	fi
	if healthy; then
		die "another kubelet already answers on 127.0.0.1:10248 on this machine"
	fi
	nohup /usr/local/bin/kubelet "${args[@]}" >>"$logfile" 2>&1 &
	echo $! >"$pidfile"
	log "kubelet started in the background (pid $!, log $logfile)"
	if [ ${#proxy_args[@]} -gt 0 ]; then
		stop_kubelet "$proxy_pidfile"
		nohup /usr/local/bin/kube-proxy "${proxy_args[@]}" >>"$proxy_logfile" 2>&1 &
		echo $! >"$proxy_pidfile"
		log "kube-proxy started in the background (pid $!, log $proxy_logfile)"
	fi
fi

if [ "$wait" != 0 ]; then
	for _ in $(seq 1 $((wait * 2))); do
		if [ "$systemd" = 0 ] && ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
			tail -n 20 "$logfile" >&2
			die "the kubelet exited"
		fi
		if healthy; then
			log "kubelet healthy"
			exit 0
		fi
		sleep 0.5
	done
	die "the kubelet did not answer on 127.0.0.1:10248/healthz within ${wait} s"
fi
