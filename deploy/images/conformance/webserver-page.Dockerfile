# registry.k8s.io/e2e-test-images/kitten and nautilus, built locally for
# Kubernetes' conformance suite: agnhost's test-webserver serving a page of
# its own (PAGE: kitten or nautilus, from k8s.io/kubernetes'
# test/images/PAGE/html), as upstream's images are agnhost with the page.
#
# Upstream's agnhost is built on alpine:3.21 (test/images/agnhost/BASEIMAGE)
# and the ImageVolume spec mounts kitten as a volume and reads its
# /etc/os-release, expecting "Alpine Linux". Our agnhost stand-in is built on
# the Debian base (no image registry here), so this image carries the
# os-release of upstream's base: the files the suite reads are upstream's.
ARG AGNHOST=registry.k8s.io/e2e-test-images/agnhost:2.66.1
FROM ${AGNHOST}
ARG PAGE
RUN rm -f /etc/os-release
COPY deploy/images/conformance/alpine-os-release /etc/os-release
COPY bin/conformance/${PAGE}/ /
CMD ["test-webserver"]
