# registry.k8s.io/e2e-test-images/sample-apiserver, built locally for
# Kubernetes' conformance suite (the Aggregator spec): k8s.io/sample-apiserver
# built by scripts/oracle.sh, on the suite's busybox (upstream's base is distroless;
# this one has the /tmp it has).
ARG BUSYBOX=registry.k8s.io/e2e-test-images/busybox:1.37.0-2
FROM ${BUSYBOX}
COPY bin/conformance/sample-apiserver /sample-apiserver
ENTRYPOINT ["/sample-apiserver"]
