# registry.k8s.io/etcd, built locally for Kubernetes' conformance suite
# (the Aggregator spec runs it beside the sample-apiserver): the etcd server
# of the go.etcd.io/etcd/server/v3 version minik8s embeds, at
# /usr/local/bin/etcd as upstream's image has it, on the suite's busybox.
ARG BUSYBOX=registry.k8s.io/e2e-test-images/busybox:1.37.0-2
FROM ${BUSYBOX}
COPY bin/conformance/etcd /usr/local/bin/etcd
ENTRYPOINT ["/usr/local/bin/etcd"]
