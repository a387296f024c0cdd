# registry.k8s.io/pause, built locally for Kubernetes' conformance suite
# (its pods use it as an ordinary container image): /pause sleeps until
# SIGINT or SIGTERM and then exits 0, as the upstream /pause does. It is a
# shell script on Debian's static busybox, the one binary in the image.
FROM scratch
COPY bin/busybox /bin/busybox
COPY deploy/images/conformance/pause.sh /pause
ENTRYPOINT ["/pause"]
