#!/usr/bin/env bash
# Installs the minik8s control plane on a Linux VM: the apiserver (embedded
# etcd in /var/lib/minik8s/etcd, certificates in /var/lib/minik8s/pki), the
# scheduler and the controller-manager, each its own systemd unit
# (deploy/systemd/*.service) or, with --no-systemd, a background process.
# Prints the command that joins a node (scripts/install-node.sh ...).
#
#   scripts/install-control-plane.sh [--advertise-address IP] [--tls-san N,...]
#       [--bin-dir DIR] [--no-systemd] [--no-pod-routes] [--print-env] [--stop]
#       [--static-pods [--node-name NAME] [--image-repository R] [--image-tag T]]
#       [-- APISERVER-FLAGS...]
#
# --static-pods lays the three components down as kubeadm does instead:
# "apiserver certs" writes the PKI and the kubelet's kubeconfig
# (/etc/kubernetes/kubelet.conf, system:node:NAME) first, the components
# become static pod manifests in /etc/kubernetes/manifests (kube-apiserver,
# kube-scheduler, kube-controller-manager, images R/apiserver:T ... with
# imagePullPolicy IfNotPresent: load them into containerd's namespace
# minik8s first, e.g. docker save ... | ctr -n minik8s images import -),
# and a kubelet (kubelet.service, or in the background with --no-systemd)
# runs them and registers this machine as a node labelled and tainted
# node-role.kubernetes.io/control-plane; they show as mirror pods in
# kube-system. --stop also stops that kubelet.
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
static=0 node_name=$(hostname | tr 'A-Z_' 'a-z-') image_repo=minik8s image_tag=latest
manifests=/etc/kubernetes/manifests kubelet_conf=/etc/kubernetes/kubelet.conf
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
	--static-pods) static=1 ;;
	--node-name) node_name=$2; shift ;;
	--image-repository) image_repo=$2; shift ;;
	--image-tag) image_tag=$2; shift ;;
	--stop)
		# A control plane of static pods stops with its manifests gone
		# (the kubelet stops their pods), then the kubelet.
		if [ -f "$manifests/kube-apiserver.yaml" ]; then
			rm -f "$manifests"/kube-apiserver.yaml "$manifests"/kube-scheduler.yaml "$manifests"/kube-controller-manager.yaml
			log "removed the control plane's static pod manifests from $manifests"
			for _ in $(seq 1 30); do
				pgrep -f '^/usr/local/bin/(apiserver|scheduler|controller-manager)( |$)' >/dev/null || break
				sleep 1
			done
			if [ -d /run/systemd/system ] && systemctl is-active --quiet kubelet.service 2>/dev/null; then
				systemctl stop kubelet.service && log "stopped kubelet.service"
			fi
		fi
		for c in "${components[@]}" kubelet; do
			f=/run/minik8s-$c.pid
			[ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null && log "stopped $c"
			rm -f "$f"
		done
		exit 0
		;;
	--) shift; extra=("$@"); break ;;
	-h | --help) sed -n '2,29s/^# \{0,1\}//p' "$0"; exit 0 ;;
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

# manifest NAME BINARY PORT SCHEME ARGS...: kubeadm's static pod for one
# component: host network, system-node-critical, the host paths it reads
# and writes, a liveness probe on its own port.
manifest() {
	local name=$1 bin=$2 port=$3 scheme=$4 a
	shift 4
	cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: kube-$name
  namespace: kube-system
  labels:
    component: kube-$name
    tier: control-plane
spec:
  hostNetwork: true
  priorityClassName: system-node-critical
  securityContext:
    seccompProfile:
      type: RuntimeDefault
  containers:
  - name: kube-$name
    image: $image_repo/$bin:$image_tag
    imagePullPolicy: IfNotPresent
    command:
    - /usr/local/bin/$bin
YAML
	[ $# -gt 0 ] && echo "    args:"
	for a in "$@"; do
		printf '    - "%s"\n' "$a"
	done
	cat <<YAML
    livenessProbe:
      httpGet:
        host: 127.0.0.1
        path: /healthz
        port: $port
        scheme: $scheme
      initialDelaySeconds: 10
      timeoutSeconds: 15
      failureThreshold: 8
    volumeMounts:
    - name: pki
      mountPath: $pki
YAML
	# The scheduler and the controller-manager only read their
	# kubeconfigs and the CA there; the apiserver writes its files.
	[ "$name" = apiserver ] || echo "      readOnly: true"
	if [ "$name" = apiserver ]; then
		cat <<YAML
    - name: etcd-data
      mountPath: $state/etcd
    - name: admin
      mountPath: /etc/minik8s
    securityContext:
      capabilities:
        add: ["NET_ADMIN"]
YAML
	fi
	cat <<YAML
  volumes:
  - name: pki
    hostPath:
      path: $pki
      type: DirectoryOrCreate
YAML
	if [ "$name" = apiserver ]; then
		cat <<YAML
  - name: etcd-data
    hostPath:
      path: $state/etcd
      type: DirectoryOrCreate
  - name: admin
    hostPath:
      path: /etc/minik8s
      type: DirectoryOrCreate
YAML
	fi
}

# write_file PATH: stdin to PATH through a hidden temporary file (the
# kubelet skips hidden files), so the kubelet never reads half a manifest.
write_file() {
	local dir base
	dir=$(dirname "$1") base=$(basename "$1")
	cat >"$dir/.$base.tmp"
	mv -f "$dir/.$base.tmp" "$1"
}

if [ "$static" = 1 ]; then
	[ -x "$bin_dir/kubelet" ] || die "no $bin_dir/kubelet (run make build, or pass --bin-dir)"
	[ "$bin_dir" = /usr/local/bin ] || install -m 0755 "$bin_dir/kubelet" /usr/local/bin/kubelet
	mkdir -p "$manifests" "$pki" /var/lib/kubelet /var/log/pods
	# kubeadm's "init phase certs all" and "init phase kubeconfig": the
	# PKI and the kubelet's credentials before anything runs.
	apiserver certs --cert-dir "$pki" --advertise-address "$adv" --tls-san "${sans:+$sans,}$adv,localhost,127.0.0.1" \
		--embedded-etcd-client-url https://127.0.0.1:2379 --embedded-etcd-peer-url https://127.0.0.1:2380 \
		--write-kubeconfig "$admin" --node-name "$node_name" --kubelet-kubeconfig "$kubelet_conf"
	# shellcheck disable=SC2086
	{
		manifest apiserver apiserver 6443 HTTPS ${args[apiserver]} | write_file "$manifests/kube-apiserver.yaml"
		manifest scheduler scheduler 10259 HTTPS ${args[scheduler]} | write_file "$manifests/kube-scheduler.yaml"
		manifest controller-manager controller-manager 10257 HTTPS ${args[controller-manager]} | write_file "$manifests/kube-controller-manager.yaml"
	}
	log "wrote static pod manifests in $manifests"
	kubelet_args="--kubeconfig $kubelet_conf --root-dir /var/lib/kubelet --pod-manifest-path $manifests --hostname-override $node_name"
	kubelet_args+=" --node-ip $adv --register-with-taints node-role.kubernetes.io/control-plane:NoSchedule --rotate-server-certificates"
	if [ "$systemd" = 1 ]; then
		install -m 0644 "$here/deploy/systemd/kubelet.service" /etc/systemd/system/kubelet.service
		printf 'KUBELET_ARGS="%s"\n' "$kubelet_args" >/etc/minik8s/kubelet.env
		systemctl daemon-reload
		systemctl enable kubelet.service >/dev/null
		systemctl restart kubelet.service
		log "kubelet.service started (journalctl -u kubelet -f)"
	else
		pidfile=/run/minik8s-kubelet.pid
		if ! { [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }; then
			# shellcheck disable=SC2086
			nohup /usr/local/bin/kubelet $kubelet_args >>/var/log/minik8s-kubelet.log 2>&1 &
			echo $! >"$pidfile"
			log "kubelet started (pid $!, log /var/log/minik8s-kubelet.log)"
		fi
	fi
	k() { kubectl-lite --kubeconfig "$admin" "$@"; }
	for _ in $(seq 1 240); do
		k get node "$node_name" >/dev/null 2>&1 && break
		sleep 0.5
	done
	k get node "$node_name" >/dev/null 2>&1 || die "the apiserver static pod did not come up, or the kubelet did not register $node_name (see the kubelet's log)"
	# kubeadm's "mark-control-plane" phase: a kubelet may not label itself
	# node-role.kubernetes.io/* (NodeRestriction), the admin does.
	k label node "$node_name" node-role.kubernetes.io/control-plane= --overwrite >/dev/null
	log "control plane up as static pods on node $node_name; admin kubeconfig: $admin"
	exit 0
fi

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
