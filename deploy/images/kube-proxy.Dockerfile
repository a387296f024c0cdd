# minik8s/kube-proxy: kube-proxy from `make build` with the iptables tools
# it runs (iptables, iptables-restore, iptables-save: Debian bookworm's, the
# same build and nf_tables backend as the node image's, so both write the
# same tables) and iproute2, on the Debian base, as registry.k8s.io's
# kube-proxy image is. The add-on deploy/addons/kube-proxy.yaml runs it on
# every node's host network.
ARG BASE=minik8s/debian-base:bookworm
FROM ${BASE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends iptables iproute2 \
 && apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /usr/share/doc/* /usr/share/man/*
COPY bin/kube-proxy /usr/local/bin/kube-proxy
EXPOSE 10256
ENTRYPOINT ["/usr/local/bin/kube-proxy"]
