# minik8s/e2e-incluster: the end-to-end suite's in-cluster API client
# (internal/e2e/incluster), a static binary on an empty base. The suite
# builds bin/e2e-incluster and this image itself (scripts/images.sh
# e2e-incluster) and loads it into the nodes.
FROM scratch
COPY bin/e2e-incluster /usr/local/bin/incluster
ENTRYPOINT ["/usr/local/bin/incluster"]
