#!/usr/bin/env bash
# Installs, idempotently, what a make target needs on a Debian or Ubuntu
# machine, then starts containerd and dockerd when they are not answering.
#
#   scripts/deps.sh up     # the compose cluster: Docker + Compose, debootstrap
#                          # (the node image's Debian base, built offline),
#                          # busybox-static (the workload image)
#   scripts/deps.sh test   # also what the tests run on the host: containerd,
#                          # runc, the CNI plugins, iptables, iproute2
#
# Root installs with apt-get, anyone else through sudo. Where it cannot
# (no apt-get, no sudo), it prints the one command to run and exits 1.
# MINIK8S_SKIP_DEPS=1 skips it all (a machine set up by other means).
set -euo pipefail
cd "$(dirname "$0")/.."

target=${1:-up}
log() { echo "deps: $*" >&2; }
die() { log "$*"; exit 1; }

[ "${MINIK8S_SKIP_DEPS:-}" = 1 ] && exit 0

# package:why, in the order a reader would ask about them.
up_pkgs=(
	"make:the build"
	"git:the version stamped into the binaries"
	"ca-certificates:Go module downloads"
	"docker.io:Docker runs the cluster's containers"
	"docker-compose:Compose starts the cluster"
	"debootstrap:the node image's Debian base, built offline"
	"busybox-static:the workload image and the control-plane health checks"
	"iproute2:node networking checks"
)
test_pkgs=(
	"containerd:the kubelet's tests run pods in the host's containerd"
	"runc:containerd's runtime"
	"containernetworking-plugins:the kubelet's CNI tests"
	"iptables:the service proxy and masquerade tests"
)
case "$target" in
up) pkgs=("${up_pkgs[@]}") ;;
test) pkgs=("${up_pkgs[@]}" "${test_pkgs[@]}") ;;
*) die "unknown target $target: want up or test" ;;
esac

if ! command -v go >/dev/null && [ ! -x /usr/local/go/bin/go ]; then
	die "Go is missing: install Go 1.26 from https://go.dev/dl/ into /usr/local/go and add /usr/local/go/bin to PATH"
fi

# sudo_cmd is how this user runs a command as root ("" for root).
sudo_cmd=""
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null; then
		sudo_cmd="sudo"
	else
		sudo_cmd="none"
	fi
fi
as_root() {
	case "$sudo_cmd" in
	"") "$@" ;;
	none) die "need root for: $* (run it as root, or install sudo)" ;;
	*) sudo "$@" ;;
	esac
}

missing=() why=()
if command -v dpkg-query >/dev/null && command -v apt-get >/dev/null; then
	for entry in "${pkgs[@]}"; do
		p=${entry%%:*}
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
			missing+=("$p")
			why+=("$p (${entry#*:})")
		fi
	done
	if [ ${#missing[@]} -gt 0 ]; then
		if [ "$sudo_cmd" = none ]; then
			die "missing ${missing[*]}; run as root: apt-get install -y ${missing[*]}"
		fi
		list=$(printf '%s; ' "${why[@]}")
		log "installing with apt-get${sudo_cmd:+ (through sudo)}: ${list%; }"
		aptlog=$(mktemp /tmp/minik8s-deps.XXXXXX)
		if ! { as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
			as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$aptlog" 2>&1; then
			tail -n 20 "$aptlog" >&2
			rm -f "$aptlog"
			die "apt-get install ${missing[*]} failed (its last lines are above)"
		fi
		rm -f "$aptlog"
	fi
else
	# Not Debian-like: check the commands, say what to install.
	need=()
	for cmd in docker make git debootstrap; do
		command -v "$cmd" >/dev/null || need+=("$cmd")
	done
	if ! docker compose version >/dev/null 2>&1 && ! command -v docker-compose >/dev/null; then
		need+=(docker-compose)
	fi
	if [ "$target" = test ]; then
		for cmd in containerd runc iptables ip; do
			command -v "$cmd" >/dev/null || need+=("$cmd")
		done
	fi
	if [ ${#need[@]} -gt 0 ]; then
		die "missing ${need[*]} and this is not a Debian-like system (no apt-get): install them with your package manager (on Debian: apt-get install ${pkgs[*]%%:*})"
	fi
fi

# The host containerd's CRI plugin, which the kubelet's CRI driver tests
# use: this machine's root lacks CAP_SYS_RESOURCE, so the plugin may not
# lower a sandbox's oom_score_adj (-998) and every RunPodSandbox would
# fail; restrict_oom_score_adj keeps it at the parent's. A containerd
# already running reads the change on a restart (its containers survive).
cri_cfg=/etc/containerd/config.toml
if [ "$target" = test ] && [ -f "$cri_cfg" ] && ! grep -q '^[[:space:]]*restrict_oom_score_adj *= *true' "$cri_cfg"; then
	log "containerd: restrict_oom_score_adj = true in $cri_cfg (its CRI plugin, for the kubelet's CRI tests)"
	if grep -q '^[[:space:]]*restrict_oom_score_adj *=' "$cri_cfg"; then
		# containerd config default writes it false: set it in place, a
		# second key would make the file invalid TOML.
		as_root sed -i 's/^\([[:space:]]*restrict_oom_score_adj *= *\).*/\1true/' "$cri_cfg"
	elif grep -q '^[[:space:]]*\[plugins\."io\.containerd\.grpc\.v1\.cri"\][[:space:]]*$' "$cri_cfg"; then
		as_root sed -i '/^[[:space:]]*\[plugins\."io\.containerd\.grpc\.v1\.cri"\][[:space:]]*$/a\    restrict_oom_score_adj = true' "$cri_cfg"
	else
		printf '\n[plugins."io.containerd.grpc.v1.cri"]\n  restrict_oom_score_adj = true\n' | as_root tee -a "$cri_cfg" >/dev/null
	fi
	if as_root ctr --address /run/containerd/containerd.sock version >/dev/null 2>&1; then
		log "restarting containerd to read it"
		if [ -d /run/systemd/system ]; then
			as_root systemctl restart containerd
		else
			# Only the containerd serving that socket (not dockerd's own).
			pid=$(as_root ss -xlpn 2>/dev/null | awk '/\/run\/containerd\/containerd\.sock /' | grep -o 'pid=[0-9]*' | head -n1 | cut -d= -f2)
			if [ -n "$pid" ]; then
				as_root kill "$pid"
				for _ in $(seq 1 50); do as_root kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
			else
				log "cannot tell which containerd serves /run/containerd/containerd.sock: restart it yourself to apply $cri_cfg"
			fi
		fi
	fi
fi

# Daemons: containerd for the tests, dockerd for the cluster.
if [ "$target" = test ] && ! as_root ctr --address /run/containerd/containerd.sock version >/dev/null 2>&1; then
	log "starting containerd (not answering on /run/containerd/containerd.sock)"
	as_root scripts/start-daemons.sh containerd
fi
if ! docker info >/dev/null 2>&1; then
	if [ -n "$sudo_cmd" ] && sudo -n docker info >/dev/null 2>&1; then
		die "dockerd runs but $(id -un) may not use it: add yourself to the docker group (sudo usermod -aG docker $(id -un), then log in again)"
	fi
	log "starting dockerd (docker info does not answer)"
	as_root scripts/start-daemons.sh docker
fi
