# minik8s/cluster-dns: the static cluster-dns binary from `make build` on an
# empty base; busybox (Debian's busybox-static) for probes and debugging.
FROM scratch
COPY bin/busybox /bin/busybox
COPY bin/cluster-dns /usr/local/bin/cluster-dns
ENV PATH=/usr/local/bin:/bin
EXPOSE 53/udp 53/tcp 8080
ENTRYPOINT ["/usr/local/bin/cluster-dns"]
