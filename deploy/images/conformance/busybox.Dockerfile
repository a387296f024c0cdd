# registry.k8s.io/e2e-test-images/busybox, built locally for Kubernetes'
# conformance suite: Debian's static busybox on an empty base, every
# applet linked, a shell by default (as the upstream image).
FROM scratch
COPY bin/busybox /bin/busybox
RUN ["/bin/busybox", "mkdir", "-p", "/usr/bin", "/sbin", "/usr/sbin", "/tmp", "/etc", "/root"]
RUN ["/bin/busybox", "--install", "-s"]
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
CMD ["sh"]
