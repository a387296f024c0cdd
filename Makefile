# minik8s build, test and benchmark entry points.
GO        ?= go
BIN       := bin
BINARIES  := apiserver scheduler controller-manager kubelet kubectl-lite
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X github.com/minik8s/minik8s/internal/version.gitVersion=$(VERSION)
TESTFLAGS ?=
BENCHTIME ?= 2s

.PHONY: all build test unit vet bench clean-bin $(BINARIES)

all: build

build: $(BINARIES)

$(BINARIES):
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/$@ ./$@

vet:
	$(GO) vet ./...

# test runs every unit and integration test: integration tests start real
# embedded etcd servers and apiservers on loopback ports in temp dirs.
test: build vet
	$(GO) test $(TESTFLAGS) -count=1 -timeout 20m ./...

# unit skips the integration tests that need etcd or a server.
unit:
	$(GO) test $(TESTFLAGS) -short -count=1 ./...

# bench reports, in one run: raw etcd txn/s, apiserver creates/s at 1 and 64
# clients, LIST latency for 10,000 pods, watch delivery latency with 1 and
# 1,000 watchers, and idle RSS of the apiserver with embedded etcd.
bench:
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) -timeout 30m ./apiserver/...
	$(GO) test -run '^$$' -bench BenchmarkDeploymentsAvailable -benchtime 1x -timeout 30m ./controller-manager/deployment/
	$(GO) test -run '^$$' -bench BenchmarkSchedulingThroughput -benchtime 1x -timeout 30m ./scheduler/scheduling/

clean-bin:
	rm -rf $(BIN)
