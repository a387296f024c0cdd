# minik8s/ingress-controller: the static ingress-controller binary from
# `make build` on an empty base; busybox (Debian's busybox-static) for
# debugging. 80 and 443 serve the Ingresses, 10254 /healthz, /readyz and
# /metrics over HTTPS.
FROM scratch
COPY bin/busybox /bin/busybox
COPY bin/ingress-controller /usr/local/bin/ingress-controller
ENV PATH=/usr/local/bin:/bin
EXPOSE 80 443 10254
ENTRYPOINT ["/usr/local/bin/ingress-controller"]
