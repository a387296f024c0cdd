# minik8s build, test and benchmark entry points.
# Go from the official tarball lives in /usr/local/go/bin, often not on PATH.
export PATH := $(PATH):/usr/local/go/bin
GO        ?= go
BIN       := bin
BINARIES  := apiserver scheduler controller-manager kubelet kube-proxy kubectl-lite
# A semantic version, as Kubernetes components report (kubectl get nodes
# shows it): the nearest v* tag, else v0.1.0 with the commit.
VERSION   ?= $(shell git describe --tags --match 'v*' --dirty 2>/dev/null || echo v0.1.0-g$$(git rev-parse --short HEAD 2>/dev/null || echo dev))
LDFLAGS   := -s -w -X github.com/minik8s/minik8s/internal/version.release=$(VERSION)
TESTFLAGS ?=
BENCHTIME ?= 2s

.PHONY: all build test oracle oracle-bin unit fuzz vet bench clean-bin cluster-dns ingress-controller metrics-server metrics-server-addon registry $(BINARIES) deps deps-test images up down clean demo e2e conformance bench-storage real-control-plane minik8s-control-plane snapshot restore

all: build

build: $(BINARIES) cluster-dns ingress-controller hollow-nodes

$(BINARIES):
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/$@ ./$@

# cluster-dns is the in-cluster DNS add-on (a Deployment in kube-system).
cluster-dns:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/$@ ./internal/cmd/cluster-dns

# ingress-controller is the built-in ingress controller add-on (a DaemonSet
# with hostPorts 80 and 443, deploy/addons/ingress-controller.yaml).
ingress-controller:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/$@ ./internal/cmd/ingress-controller

# crictl is the CRI command-line client (sigs.k8s.io/cri-tools, version
# pinned in scripts/crictl.sh, built from the Go module proxy into a cache
# outside the repository): the node image and scripts/install-node.sh put
# it on every node with /etc/crictl.yaml (deploy/node/crictl.yaml).
.PHONY: crictl
crictl:
	scripts/crictl.sh

# metrics-server serves metrics.k8s.io (kubectl top, the HPA): an opt-in
# add-on, deploy/metrics-server (make metrics-server-addon).
metrics-server:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/$@ ./internal/cmd/metrics-server

vet:
	$(GO) vet ./...

# test runs every unit and integration test: integration tests start real
# embedded etcd servers and apiservers on loopback ports in temp dirs; e2e
# first runs the end-to-end suite on the compose cluster (make e2e), so the
# run over ./... leaves internal/e2e out. internal/cmd/testsummary prints
# what go test prints, then every skipped test with its reason (a suite that
# needs root or containerd and did not run shows there) and every failure.
test: deps-test build vet oracle-bin e2e oracle
	$(GO) build -o $(BIN)/testsummary ./internal/cmd/testsummary
	$(BIN)/testsummary $(GO) test $(TESTFLAGS) -count=1 -timeout 20m -json \
		$$($(GO) list ./... | grep -v '/internal/e2e\(/\|$$\)')

# oracle-bin builds the real Kubernetes binaries the tests run (kubectl,
# kube-scheduler, kube-controller-manager, kube-apiserver) and Helm once,
# before the tests that wait for them; a clean machine takes several minutes.
oracle-bin:
	scripts/oracle.sh kubectl kube-scheduler kube-controller-manager kube-apiserver helm >/dev/null

# oracle compares minik8s with Kubernetes v1.37 itself where it can be
# linked in: internal/oracle/printers is a module of its own (so
# k8s.io/kubernetes stays out of minik8s' dependencies) whose test checks
# every server-side table against kube-apiserver's printers and kubectl's.
# Tests in the main module run the real binaries (scripts/oracle.sh).
# internal/oracle/operator, likewise a module of its own (controller-runtime
# stays out of minik8s' dependencies), runs a controller-runtime operator
# against the apiserver and controller-manager.
oracle:
	cd internal/oracle/printers && $(GO) vet -mod=mod ./... && $(GO) test -mod=mod -count=1 ./...
	cd internal/oracle/operator && $(GO) vet -mod=mod ./... && $(GO) test -mod=mod -count=1 ./...

# unit skips the integration tests that need etcd or a server.
unit:
	$(GO) test $(TESTFLAGS) -short -count=1 ./...

# fuzz runs each decoder's fuzz test for FUZZTIME beyond its seed corpus
# (the seeds alone run in test and unit).
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzProtobufDecode$$' -fuzztime $(FUZZTIME) ./apiserver/protobuf/
	$(GO) test -run '^$$' -fuzz '^FuzzApplyPatch$$' -fuzztime $(FUZZTIME) ./apiserver/fieldmanager/

# bench runs the benchmarks and prints one summary (bin/bench.txt keeps the
# raw output): raw etcd txn/s and apiserver creates/s at 1 and 64 clients
# over HTTPS with authentication and RBAC (the loopback plain-HTTP port as a
# labelled second row), LIST latency for 10,000 pods, watch delivery latency
# with 1 and 1,000 watchers, idle RSS of the apiserver; Deployments to
# Available and scheduling throughput with the daemons' shipped client QPS
# and a tuned one; service-proxy rule updates at the production minimum
# sync period; pod startup with and without pod networking and bare
# containerd at the same concurrency; logs and exec through the apiserver.
# Everything listens on loopback ports the kernel picks and writes in temp
# dirs, so it runs beside a compose cluster; only the proxy and pod-startup
# benchmarks need root (network namespaces, containerd) and skip without it.
# -v shows each benchmark's progress and why one was skipped. The summary
# exits non-zero when a benchmark failed.
BENCH_OUT ?= $(BIN)/bench.txt
# Services (x 5 endpoints) of the proxy sync benchmark in make bench: the
# iptables mode's full sync grows about quadratically (iptables-nft), past
# half an hour at 10,000 on a 2-core VM; nftables takes seconds there.
PROXY_SYNC_BENCH_SERVICES ?= 1000
bench:
	@mkdir -p $(BIN)
	{ \
	$(GO) test -v -run '^$$' -bench . -benchtime $(BENCHTIME) -timeout 30m ./apiserver/...; \
	$(GO) test -v -run '^$$' -bench BenchmarkDeploymentsAvailable -benchtime 1x -timeout 40m ./controller-manager/deployment/; \
	$(GO) test -v -run '^$$' -bench BenchmarkSchedulingThroughput -benchtime 1x -timeout 40m ./scheduler/scheduling/; \
	$(GO) test -v -run '^$$' -bench 'BenchmarkEndpointChangeToRules|BenchmarkClusterIPVsPodIP' -benchtime 6x -timeout 30m ./kubelet/proxy/; \
	PROXY_SYNC_BENCH_SERVICES=$(PROXY_SYNC_BENCH_SERVICES) $(GO) test -v -run '^$$' -bench BenchmarkSyncProxyRules -benchtime 1x -timeout 60m ./kubelet/proxy/; \
	$(GO) test -v -run '^$$' -bench BenchmarkPodStartup -benchtime 1x -timeout 30m ./kubelet/pods/; \
	$(GO) test -v -run '^$$' -bench . -benchtime $(BENCHTIME) -timeout 30m ./kubelet/server/; \
	} 2>&1 | tee $(BENCH_OUT)
	@$(GO) build -o $(BIN)/benchsummary ./internal/cmd/benchsummary
	@$(BIN)/benchsummary $(BENCH_OUT)

# bench-vs-kube runs the same load on minik8s' apiserver and scheduler and
# on kube-apiserver and kube-scheduler v1.37 (built into the oracle cache by
# scripts/oracle.sh when missing) in one run, all over TLS with token
# authentication and RBAC, and prints a table of the figures with ratios
# ours/kube (internal/benchvskube). BENCH_VS_KUBE_FLAGS adds flags, e.g.
# --nodes=5000 for the scheduler at cluster scale; see bin/bench-vs-kube -h.
.PHONY: bench-vs-kube
BENCH_VS_KUBE_FLAGS ?=
bench-vs-kube: apiserver scheduler
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/bench-vs-kube ./internal/cmd/bench-vs-kube
	$(BIN)/bench-vs-kube --oracle-dir "$$(scripts/oracle.sh kube-apiserver kube-scheduler)" --bin $(BIN) $(BENCH_VS_KUBE_FLAGS)

clean-bin:
	rm -rf $(BIN)

# --- local cluster (docker-compose.yaml) -----------------------------------
# Compose v2 plugin when Docker has it, else docker-compose v1.
COMPOSE    ?= $(shell docker compose version >/dev/null 2>&1 && echo "docker compose" || echo docker-compose)
KUBECONFIG_FILE := .minik8s/kubeconfig
KUBECTL    := $(BIN)/kubectl-lite --kubeconfig $(KUBECONFIG_FILE)
WORKLOAD_IMAGES := minik8s/busybox:latest,minik8s/busybox:v2
ADDON_IMAGES    := minik8s/kube-proxy:latest,minik8s/cluster-dns:latest,minik8s/ingress-controller:latest
E2E_TIMEOUT ?= 30m

# deps installs what the cluster needs (Docker, Compose, debootstrap,
# busybox-static) and starts dockerd; deps-test also what the tests need on
# the host (containerd, runc, CNI plugins, iptables). Both are idempotent:
# apt-get as root or through sudo, one line saying what and why.
deps:
	scripts/deps.sh up

deps-test:
	scripts/deps.sh test

# images builds the control-plane, node and workload images from bin/, each
# only when missing or stale (and the Debian base image offline when missing).
images: deps build
	scripts/images.sh

# up starts the cluster, waits until every node is Ready and deploys the
# add-ons (deploy/addons: kube-proxy on every node, cluster DNS, the
# local-path StorageClass, the ingress controller; node-1's ports 80 and 443 are published on the
# host's loopback, MINIK8S_HTTP_PORT and MINIK8S_HTTPS_PORT to change them).
#
# HA=1 (make up HA=1, make down HA=1, make clean HA=1) works on the
# highly-available cluster of docker-compose.ha.yaml instead: compose
# project minik8s-ha, three control-plane members (apiserver with an
# embedded etcd member, scheduler, controller-manager each), a load
# balancer on 127.0.0.1:7443 (MINIK8S_HA_API_PORT), one node, host
# kubeconfig .minik8s-ha/kubeconfig (scripts/ha-up.sh; membership:
# scripts/ha-member.sh). It can run beside the default cluster.
HA ?=
HA_COMPOSE = COMPOSE_PROJECT_NAME=minik8s-ha $(COMPOSE) -f docker-compose.ha.yaml --profile spare
ifeq ($(HA),1)
up: images
	COMPOSE="$(COMPOSE)" scripts/ha-up.sh
else
up: images
	@mkdir -p .minik8s
	$(COMPOSE) up -d --remove-orphans
	scripts/load-image.sh $(WORKLOAD_IMAGES),$(ADDON_IMAGES)
	scripts/wait-ready.sh
	scripts/addons.sh
	@echo
	@echo "Cluster ready. Use it with:"
	@echo "  export KUBECONFIG=$$PWD/$(KUBECONFIG_FILE)"
	@echo "  $(BIN)/kubectl-lite get nodes"
	@echo "  make demo"
endif

# real-control-plane replaces the running cluster's scheduler and
# controller-manager by the real kube-scheduler and kube-controller-manager
# (scripts/oracle.sh builds them; deploy/compose/real-control-plane.yaml);
# minik8s-control-plane puts ours back.
REAL_COMPOSE = MINIK8S_ORACLE_DIR=$$(scripts/oracle.sh kube-scheduler kube-controller-manager) \
	$(COMPOSE) -f docker-compose.yaml -f deploy/compose/real-control-plane.yaml --profile real-control-plane
real-control-plane:
	$(COMPOSE) stop scheduler controller-manager
	$(REAL_COMPOSE) up -d kube-scheduler kube-controller-manager

minik8s-control-plane:
	$(REAL_COMPOSE) rm -s -f kube-scheduler kube-controller-manager
	$(COMPOSE) up -d scheduler controller-manager

ifeq ($(HA),1)
down:
	$(HA_COMPOSE) down --remove-orphans

clean:
	$(HA_COMPOSE) down -v --remove-orphans
	rm -rf .minik8s-ha
else
# down stops and removes the containers; volumes (etcd, PKI, node images) stay.
down:
	$(COMPOSE) --profile registry down --remove-orphans

# clean also removes the volumes and the host kubeconfig.
clean:
	$(COMPOSE) --profile registry down -v --remove-orphans
	rm -rf .minik8s
endif

# snapshot saves the running cluster's etcd (apiserver snapshot save against
# the embedded etcd) and its PKI to $(SNAPSHOT_DIR)/etcd-snapshot-manual-UNIXTIME.db
# and .pki.tar; restore SNAPSHOT=FILE puts them into an empty cluster (after
# make clean; a cluster with data is refused, unchanged) and starts it
# (scripts/etcd-snapshot.sh).
SNAPSHOT_DIR ?= snapshots
snapshot:
	COMPOSE="$(COMPOSE)" scripts/etcd-snapshot.sh save $(SNAPSHOT_DIR)

restore:
	@test -n "$(SNAPSHOT)" || { echo "usage: make restore SNAPSHOT=FILE (a file make snapshot saved)"; exit 2; }
	$(MAKE) images
	COMPOSE="$(COMPOSE)" scripts/etcd-snapshot.sh restore $(SNAPSHOT)
	$(MAKE) up

# registry starts the cluster's image registry (CNCF Distribution, compose
# profile registry): nodes pull registry.k8s.io images through it, the host
# pushes to localhost:5001 (scripts/push-image.sh pushes images loaded into
# the nodes).
registry:
	scripts/registry.sh

# metrics-server-addon deploys the metrics server into the running cluster
# (image built and loaded into the nodes, deploy/metrics-server applied).
metrics-server-addon: metrics-server
	scripts/images.sh metrics-server
	scripts/load-image.sh minik8s/metrics-server:latest
	$(KUBECTL) apply -f deploy/metrics-server/
	$(KUBECTL) rollout status deployment/metrics-server -n kube-system --timeout=120s

# demo applies deploy/examples (Deployment web, its Service and Ingress)
# and waits for it.
demo:
	$(KUBECTL) apply -f deploy/examples/
	$(KUBECTL) rollout status deployment/web --timeout=120s
	$(KUBECTL) get pods -l app=web -o wide
	@echo
	@echo "Through the ingress controller: curl -H 'Host: web.example' http://localhost:$${MINIK8S_HTTP_PORT:-80}/"

# conformance runs Kubernetes' own conformance specs (e2e.test of the pinned
# release, with its test images built locally) against the running cluster
# (make up): the whole suite, its parallel part in PROCS processes, then
# [Serial]; writes .minik8s/conformance/summary.txt. FOCUS narrows it to one
# serial run (scripts/conformance.sh).
conformance:
	scripts/conformance.sh

# bench-storage times N pods (default 200) to Running on the compose
# cluster with a WaitForFirstConsumer local-path claim each, against the
# same pods without volumes (make up first).
N ?= 200
bench-storage:
	scripts/bench-storage.sh $(N)

# e2e runs internal/e2e against a compose cluster it starts from a clean
# state and tears down at the end.
e2e: images
	MINIK8S_E2E=1 $(GO) test -count=1 -timeout $(E2E_TIMEOUT) -v ./internal/e2e/...

# e2e-ha runs the fault tests of internal/e2e/ha_test.go (SIGKILL of the
# etcd leader's member under writes and a watch, a partition, a member
# wiped and re-added) against the HA cluster, which it starts (without
# the add-ons) when it is not up and leaves running (make down HA=1).
# Not part of make test or CI: three apiservers beside the default
# cluster are too much for the 2-core CI machine.
.PHONY: e2e-ha
e2e-ha: images
	MINIK8S_HA_ADDONS=0 COMPOSE="$(COMPOSE)" scripts/ha-up.sh
	MINIK8S_E2E_HA=1 $(GO) test -count=1 -timeout 20m -v -run '^TestHA' ./internal/e2e/

# hollow-nodes runs many hollow nodes (kubemark's hollow kubelets: the
# kubelet's node status and pod manager on an in-memory runtime, see
# kubelet/hollow) in one process. `make hollow-nodes-up KUBECONFIG=FILE
# N=100` starts N of them in the background against the apiserver of FILE,
# whose identity must be allowed to impersonate (the admin kubeconfig);
# the log and pid file are in HOLLOW_DIR. `make hollow-nodes-down` stops
# them (SIGTERM) and, with the default HOLLOW_FLAGS, deletes their Nodes.
.PHONY: hollow-nodes hollow-nodes-up hollow-nodes-down
HOLLOW_DIR   ?= .minik8s/hollow-nodes
HOLLOW_FLAGS ?= --delete-nodes-on-exit
hollow-nodes:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/$@ ./internal/cmd/hollow-nodes

hollow-nodes-up: hollow-nodes
	@test -n "$(KUBECONFIG)" || { echo "hollow-nodes-up: set KUBECONFIG=FILE (an identity allowed to impersonate, e.g. the admin kubeconfig)" >&2; exit 2; }
	@mkdir -p $(HOLLOW_DIR)
	@if test -f $(HOLLOW_DIR)/hollow-nodes.pid && kill -0 $$(cat $(HOLLOW_DIR)/hollow-nodes.pid) 2>/dev/null; then \
		echo "hollow-nodes is already running (pid $$(cat $(HOLLOW_DIR)/hollow-nodes.pid)): make hollow-nodes-down first" >&2; exit 1; fi
	nohup $(BIN)/hollow-nodes --kubeconfig "$(KUBECONFIG)" --count $(N) $(HOLLOW_FLAGS) >$(HOLLOW_DIR)/hollow-nodes.log 2>&1 & echo $$! >$(HOLLOW_DIR)/hollow-nodes.pid
	@sleep 1; if ! kill -0 $$(cat $(HOLLOW_DIR)/hollow-nodes.pid) 2>/dev/null; then \
		echo "hollow-nodes exited:" >&2; tail -5 $(HOLLOW_DIR)/hollow-nodes.log >&2; rm -f $(HOLLOW_DIR)/hollow-nodes.pid; exit 1; fi
	@echo "hollow-nodes: $(N) nodes, pid $$(cat $(HOLLOW_DIR)/hollow-nodes.pid), log $(HOLLOW_DIR)/hollow-nodes.log"

hollow-nodes-down:
	@if ! test -f $(HOLLOW_DIR)/hollow-nodes.pid; then echo "hollow-nodes is not running (no $(HOLLOW_DIR)/hollow-nodes.pid)"; exit 0; fi; \
	pid=$$(cat $(HOLLOW_DIR)/hollow-nodes.pid); \
	if kill -TERM $$pid 2>/dev/null; then \
		for i in $$(seq 1 90); do kill -0 $$pid 2>/dev/null || break; sleep 1; done; \
		if kill -0 $$pid 2>/dev/null; then echo "hollow-nodes (pid $$pid) did not stop within 90 s" >&2; exit 1; fi; \
	fi; \
	rm -f $(HOLLOW_DIR)/hollow-nodes.pid; echo "hollow-nodes stopped (pid $$pid)"; tail -2 $(HOLLOW_DIR)/hollow-nodes.log

# scale-run is the cluster-scale run (internal/scalerun): a standalone
# apiserver, controller-manager and scheduler as separate processes and
# NODES hollow nodes; times NODES Ready, DEPLOYMENTS x REPLICAS pods
# Running, a rolling update of all of them, and LOSE nodes killed until
# their pods are evicted and every Deployment is available again; prints
# the apiserver's p99 per verb and each process' CPU seconds and peak RSS.
# TUNED=1 runs the tuned flags instead of the shipped defaults; the
# controller-manager's --node-eviction-rate is EVICTION_RATE (the shipped
# 0.1 nodes/s would take 10,000 s for 1,000 lost nodes).
NODES ?= 5000
DEPLOYMENTS ?= 100
REPLICAS ?= 100
LOSE ?= 1000
TUNED ?= 0
EVICTION_RATE ?= 10
.PHONY: scale-run
scale-run: apiserver scheduler controller-manager hollow-nodes
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/scale-run ./internal/cmd/scale-run
	$(BIN)/scale-run --bin-dir $(BIN) --nodes $(NODES) --deployments $(DEPLOYMENTS) --replicas $(REPLICAS) \
		--lose-nodes $(LOSE) --node-eviction-rate $(EVICTION_RATE) $(if $(filter 1,$(TUNED)),--tuned)
