# minik8s/node: a worker node in a container (kind-style). Debian's
# containerd, runc, CNI plugins (/usr/lib/cni) and iptables; the kubelet and
# kubectl-lite from `make build`; crictl (scripts/crictl.sh) with
# /etc/crictl.yaml on containerd's CRI socket; the pod sandbox image
# (registry.k8s.io/pause), which the entrypoint imports into containerd's
# k8s.io namespace at every start. tini is PID 1 (reaps the shims' orphans and
# forwards signals); the entrypoint runs containerd, then supervises the
# kubelet. /var/lib/containerd must be a volume (overlay on overlay fails).
ARG BASE=minik8s/debian-base:bookworm
FROM ${BASE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      containerd runc containernetworking-plugins iptables iproute2 \
      ca-certificates tini procps \
 && apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /usr/share/doc/* /usr/share/man/*
COPY bin/busybox /usr/bin/busybox
COPY deploy/node/containerd.toml /etc/containerd/config.toml
COPY deploy/node/certs.d /etc/containerd/certs.d
COPY deploy/node/crictl.yaml /etc/crictl.yaml
COPY bin/crictl /usr/local/bin/crictl
COPY bin/node-images/pause.tar /usr/share/minik8s/images/pause.tar
COPY deploy/node/entrypoint.sh /usr/local/bin/minik8s-node
COPY deploy/node/bootstrap.sh /usr/local/bin/minik8s-bootstrap
COPY bin/kubectl-lite /usr/local/bin/kubectl-lite
COPY bin/kubelet /usr/local/bin/kubelet
RUN mkdir -p /etc/cni/net.d /var/lib/kubelet /var/log/pods /var/lib/minik8s/join
VOLUME /var/lib/containerd
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "-g", "--", "/usr/local/bin/minik8s-node"]
