# registry.k8s.io/e2e-test-images/agnhost, built locally for Kubernetes'
# conformance suite: the agnhost binary from k8s.io/kubernetes'
# test/images/agnhost at the release the oracle module pins, on the Debian
# base with the tools the suite runs in it (curl, dig, nc, ip, socat), the
# porter's certificate, the /uploads directory and the user and group the
# suite's tests look for. The upstream image is the same binary on Alpine.
ARG BASE=minik8s/debian-base:bookworm
FROM ${BASE}
RUN apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -qy --no-install-recommends \
		curl ca-certificates dnsutils netcat-openbsd iproute2 iputils-ping socat util-linux procps \
	&& rm -rf /var/lib/apt/lists/*
RUN mkdir /uploads \
	&& groupadd -g 50000 group-defined-in-image \
	&& useradd -u 1000 -M -G group-defined-in-image user-defined-in-image
COPY bin/conformance/localhost.crt bin/conformance/localhost.key /
COPY bin/conformance/agnhost /agnhost
RUN ln -s agnhost /agnhost-2
EXPOSE 80 8080 8081 9376 5000
ENTRYPOINT ["/agnhost"]
CMD ["pause"]
