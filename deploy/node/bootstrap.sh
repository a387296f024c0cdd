#!/bin/bash
# One-shot bootstrap of the compose cluster, run (in the node image) once the
# apiserver is healthy, at every `up`:
#  1. copies the admin kubeconfig the apiserver wrote into the shared PKI
#     volume to the host (MINIK8S_HOST_DIR, a bind mount of ./.minik8s), with
#     the server address the host reaches (127.0.0.1:MINIK8S_API_PORT) and
#     owned by whoever owns that directory;
#  2. makes sure a bootstrap token for joining nodes exists and writes the
#     join file nodes read (SERVER, TOKEN, CA_CERT_HASH) into the join volume.
#     Nodes see only this file, never the CA key or admin credentials.
# kube-proxy runs as a DaemonSet with its ServiceAccount's token
# (deploy/addons/kube-proxy.yaml), so nodes get no kube-proxy credentials
# from here.
set -euo pipefail

log() { echo "minik8s-bootstrap: $*" >&2; }

pki=${MINIK8S_PKI_DIR:-/var/lib/minik8s/pki}
host_dir=${MINIK8S_HOST_DIR:-/host}
join_dir=${MINIK8S_JOIN_DIR:-/var/lib/minik8s/join}
server=${MINIK8S_SERVER:-https://apiserver:6443}
host_server=https://127.0.0.1:${MINIK8S_API_PORT:-6443}
admin=$pki/admin.kubeconfig

for _ in $(seq 1 100); do
	[ -s "$admin" ] && break
	sleep 0.2
done
[ -s "$admin" ] || { log "no admin kubeconfig at $admin"; exit 1; }

# kubeconfigs carry the server on one "server:" line.
incluster=$(mktemp)
trap 'rm -f "$incluster"' EXIT
sed -E "s#^([[:space:]]*server:).*#\1 $server#" "$admin" >"$incluster"
kubectl() { kubectl-lite --kubeconfig "$incluster" "$@"; }

if [ -d "$host_dir" ]; then
	tmp=$host_dir/.kubeconfig.tmp
	sed -E "s#^([[:space:]]*server:).*#\1 $host_server#" "$admin" >"$tmp"
	chmod 600 "$tmp"
	chown "$(stat -c %u:%g "$host_dir")" "$tmp"
	mv -f "$tmp" "$host_dir/kubeconfig"
	log "wrote $host_dir/kubeconfig (server $host_server)"
fi

# Nodes joined before kube-proxy was an add-on read its kubeconfig from
# here; it goes, as the credentials it held are kube-proxy's alone.
rm -f "$join_dir/kube-proxy.kubeconfig"

# Reuse the token of the join file while the server still has it.
join=$join_dir/join.env
if [ -s "$join" ]; then
	TOKEN=$(sed -n 's/^TOKEN=//p' "$join")
	if kubectl token list 2>/dev/null | awk 'NR > 1 {print $1}' | grep -x "$TOKEN" >/dev/null; then
		log "join token ${TOKEN%%.*} still valid"
		exit 0
	fi
fi
# --print-join-command: "kubelet --server S --token T --discovery-token-ca-cert-hash H"
read -r -a cmd <<<"$(kubectl token create --ttl 0 --description "minik8s compose nodes" --print-join-command)"
SERVER="" TOKEN="" CA_CERT_HASH=""
for ((i = 1; i < ${#cmd[@]} - 1; i++)); do
	case ${cmd[$i]} in
	--server) SERVER=${cmd[$((i + 1))]} ;;
	--token) TOKEN=${cmd[$((i + 1))]} ;;
	--discovery-token-ca-cert-hash) CA_CERT_HASH=${cmd[$((i + 1))]} ;;
	esac
done
if [ -z "$SERVER" ] || [ -z "$TOKEN" ] || [ -z "$CA_CERT_HASH" ]; then
	log "unexpected join command: ${cmd[*]}"
	exit 1
fi
mkdir -p "$join_dir"
printf 'SERVER=%s\nTOKEN=%s\nCA_CERT_HASH=%s\n' "$SERVER" "$TOKEN" "$CA_CERT_HASH" >"$join.tmp"
chmod 600 "$join.tmp"
mv -f "$join.tmp" "$join"
log "created join token ${TOKEN%%.*} for $SERVER"
