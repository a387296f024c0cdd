# registry.k8s.io/e2e-test-images/nonroot, built locally for Kubernetes'
# conformance suite: an image whose USER is 1234 (upstream: Alpine with
# USER 1234), here the suite's busybox image.
ARG BUSYBOX=registry.k8s.io/e2e-test-images/busybox:1.37.0-2
FROM ${BUSYBOX}
USER 1234
