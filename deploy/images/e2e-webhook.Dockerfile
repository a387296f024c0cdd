# minik8s/e2e-webhook: the end-to-end suite's admission webhook server
# (internal/e2e/webhook), a static binary on an empty base. The suite
# builds bin/e2e-webhook and this image itself (scripts/images.sh
# e2e-webhook) and loads it into the nodes.
FROM scratch
COPY bin/e2e-webhook /usr/local/bin/webhook
ENTRYPOINT ["/usr/local/bin/webhook"]
