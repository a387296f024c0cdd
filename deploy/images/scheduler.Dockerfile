# minik8s/scheduler: the static scheduler binary from `make build` (CGO_ENABLED=0) on an
# empty base. busybox (Debian's busybox-static) is there for a shell in
# the container; kubectl-lite reads the HTTPS /healthz for the healthcheck.
FROM scratch
COPY bin/busybox /bin/busybox
COPY bin/kubectl-lite /usr/local/bin/kubectl-lite
COPY bin/scheduler /usr/local/bin/scheduler
ENV PATH=/usr/local/bin:/bin
WORKDIR /var/lib/minik8s
EXPOSE 10259
ENTRYPOINT ["/usr/local/bin/scheduler"]
