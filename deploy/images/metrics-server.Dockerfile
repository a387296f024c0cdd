# minik8s/metrics-server: the static metrics-server binary (internal/cmd/
# metrics-server, `make metrics-server`) on an empty base; busybox for
# debugging.
FROM scratch
COPY bin/busybox /bin/busybox
COPY bin/metrics-server /usr/local/bin/metrics-server
ENV PATH=/usr/local/bin:/bin
EXPOSE 10250
ENTRYPOINT ["/usr/local/bin/metrics-server"]
