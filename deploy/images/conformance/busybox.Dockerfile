# registry.k8s.io/e2e-test-images/busybox, built locally for Kubernetes'
# conformance suite: Debian's static busybox on an empty base, a shell by
# default. Every applet is in /bin, as in the upstream image (the suite
# runs /bin/sysctl, /bin/echo, /bin/true ...), and also where busybox's
# own --install puts it (/sbin, /usr/bin, /usr/sbin).
FROM scratch
COPY bin/busybox /bin/busybox
RUN ["/bin/busybox", "mkdir", "-p", "/usr/bin", "/sbin", "/usr/sbin", "/tmp", "/etc", "/root"]
RUN ["/bin/busybox", "sh", "-c", "for a in $(/bin/busybox --list); do [ -e /bin/$a ] || /bin/busybox ln -s busybox /bin/$a; done"]
RUN ["/bin/busybox", "--install", "-s"]
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
CMD ["sh"]
