# minik8s/registry: the CNCF Distribution registry (the program of Docker's
# registry:2 image; github.com/distribution/distribution/v3, built by
# scripts/oracle.sh registry at the version pinned there) on an empty base,
# storing on the volume at /var/lib/registry. The compose cluster's nodes
# pull registry.k8s.io images through it (deploy/node/certs.d).
FROM scratch
COPY bin/busybox /bin/busybox
COPY bin/registry/registry /usr/local/bin/registry
COPY deploy/images/registry-config.yml /etc/distribution/config.yml
ENV PATH=/usr/local/bin:/bin
EXPOSE 5000
VOLUME /var/lib/registry
ENTRYPOINT ["/usr/local/bin/registry"]
CMD ["serve", "/etc/distribution/config.yml"]
