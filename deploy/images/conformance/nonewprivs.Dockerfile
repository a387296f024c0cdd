# registry.k8s.io/e2e-test-images/nonewprivs, built locally for Kubernetes'
# conformance suite: k8s.io/kubernetes' test/images/nonewprivs/nnp.go (it
# prints its effective uid) installed setuid root, on the suite's busybox.
ARG BUSYBOX=registry.k8s.io/e2e-test-images/busybox:1.37.0-2
FROM ${BUSYBOX}
COPY bin/conformance/nnp /usr/local/bin/nnp
RUN chmod +s /usr/local/bin/nnp
CMD ["nnp"]
