# registry.k8s.io/e2e-test-images/glibc-dns-testing, built locally for
# Kubernetes' conformance suite: the DNS specs run dig in it. Upstream it is
# debian:bookworm-slim with dnsutils (and a CoreDNS binary no conformance
# spec runs); here the Debian base with dnsutils.
ARG BASE=minik8s/debian-base:bookworm
FROM ${BASE}
RUN apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -qy --no-install-recommends dnsutils \
	&& rm -rf /var/lib/apt/lists/*
