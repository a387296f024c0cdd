# minik8s/apiserver: the static apiserver binary from `make build` (CGO_ENABLED=0) on an
# empty base. busybox (Debian's busybox-static) is there only for the
# healthcheck's `busybox wget`, kubectl-lite for the apiserver's.
FROM scratch
COPY bin/busybox /bin/busybox
COPY bin/kubectl-lite /usr/local/bin/kubectl-lite
COPY bin/apiserver /usr/local/bin/apiserver
ENV PATH=/usr/local/bin:/bin
WORKDIR /var/lib/minik8s
EXPOSE 6443
ENTRYPOINT ["/usr/local/bin/apiserver"]
