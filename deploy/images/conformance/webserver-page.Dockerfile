# registry.k8s.io/e2e-test-images/kitten and nautilus, built locally for
# Kubernetes' conformance suite: agnhost's test-webserver serving a page of
# its own (PAGE: kitten or nautilus, from k8s.io/kubernetes'
# test/images/PAGE/html), as upstream's images are agnhost with the page.
ARG AGNHOST=registry.k8s.io/e2e-test-images/agnhost:2.66.1
FROM ${AGNHOST}
ARG PAGE
COPY bin/conformance/${PAGE}/ /
CMD ["test-webserver"]
