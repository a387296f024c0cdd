# minik8s/busybox: the workload image of the examples and the e2e suite.
# Debian's static busybox on an empty base, every applet linked in /bin.
# Its default command serves HTTP on :8080 with an index page naming the
# pod (hostname) and the image VERSION, so rollouts can be told apart.
FROM scratch
ARG VERSION=v1
COPY bin/busybox /bin/busybox
RUN ["/bin/busybox", "mkdir", "-p", "/usr/bin", "/sbin", "/usr/sbin", "/tmp", "/www", "/etc"]
RUN ["/bin/busybox", "--install", "-s"]
COPY deploy/images/busybox-httpd.sh /bin/minik8s-httpd
ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
    MINIK8S_VERSION=${VERSION}
LABEL io.minik8s.version=${VERSION}
EXPOSE 8080
CMD ["/bin/minik8s-httpd"]
